import type { I32, Kernels } from '../kernels.js';

function checkArgs(kernel: string, targets: I32, rows: number, vocab: number, chunk: number): void {
  if (!Number.isInteger(chunk) || chunk < 1) throw new Error(`${kernel}: chunk must be at least 1, got ${chunk}`);
  for (let r = 0; r < rows; r++) {
    const target = targets[r]!;
    if (!(target >= 0 && target < vocab))
      throw new Error(`${kernel}: target ${target} at row ${r} is outside [0, vocab = ${vocab})`);
  }
}

/** logits[i, j] = invTemperature · hidden[r0 + i] · weight[j] for the rows of one chunk (f64). */
function chunkLogits(
  hidden: Float32Array,
  weight: Float32Array,
  r0: number,
  rows: number,
  dim: number,
  vocab: number,
  invTemperature: number,
  logits: Float64Array,
): void {
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < vocab; j++) {
      let dot = 0;
      for (let d = 0; d < dim; d++) dot += hidden[(r0 + i) * dim + d]! * weight[j * dim + d]!;
      logits[i * vocab + j] = dot * invTemperature;
    }
  }
}

export const logprobKernels: Pick<Kernels, 'tokenLogprobs' | 'tokenLogprobsBackward'> = {
  tokenLogprobs(hidden, weight, targets, rows, dim, vocab, invTemperature, chunk, logprobs, entropy, lse) {
    checkArgs('tokenLogprobs', targets, rows, vocab, chunk);
    const logits = new Float64Array(Math.min(chunk, rows) * vocab);
    for (let r0 = 0; r0 < rows; r0 += chunk) {
      const n = Math.min(chunk, rows - r0);
      chunkLogits(hidden, weight, r0, n, dim, vocab, invTemperature, logits);
      for (let i = 0; i < n; i++) {
        const z = logits.subarray(i * vocab, (i + 1) * vocab);
        let max = -Infinity;
        for (let j = 0; j < vocab; j++) max = Math.max(max, z[j]!);
        let sum = 0;
        for (let j = 0; j < vocab; j++) sum += Math.exp(z[j]! - max);
        const rowLse = max + Math.log(sum);
        // entropy = −Σ p·log p = lse − Σ p·z
        let meanLogit = 0;
        for (let j = 0; j < vocab; j++) meanLogit += Math.exp(z[j]! - rowLse) * z[j]!;
        lse[r0 + i] = rowLse;
        entropy[r0 + i] = rowLse - meanLogit;
        logprobs[r0 + i] = z[targets[r0 + i]!]! - rowLse;
      }
    }
  },

  tokenLogprobsBackward(
    hidden,
    weight,
    targets,
    rows,
    dim,
    vocab,
    invTemperature,
    chunk,
    lse,
    entropy,
    dLogprobs,
    dEntropy,
    dHidden,
    dWeight,
    accumulateDHidden,
  ) {
    checkArgs('tokenLogprobsBackward', targets, rows, vocab, chunk);
    const logits = new Float64Array(Math.min(chunk, rows) * vocab);
    const dWeightChunk = new Float64Array(vocab * dim);
    for (let r0 = 0; r0 < rows; r0 += chunk) {
      const n = Math.min(chunk, rows - r0);
      chunkLogits(hidden, weight, r0, n, dim, vocab, invTemperature, logits);
      // Turn the logits into dL/d(hidden·weightᵀ) in place.
      for (let i = 0; i < n; i++) {
        const r = r0 + i;
        const rowLse = lse[r]!;
        const meanLogit = rowLse - entropy[r]!;
        const dL = dLogprobs[r]!;
        const dE = dEntropy ? dEntropy[r]! : 0;
        for (let j = 0; j < vocab; j++) {
          const z = logits[i * vocab + j]!;
          const p = Math.exp(z - rowLse);
          let dz = dL * ((j === targets[r] ? 1 : 0) - p);
          if (dEntropy) dz += dE * -p * (z - meanLogit);
          logits[i * vocab + j] = dz * invTemperature;
        }
      }
      for (let i = 0; i < n; i++) {
        for (let d = 0; d < dim; d++) {
          let acc = 0;
          for (let j = 0; j < vocab; j++) acc += logits[i * vocab + j]! * weight[j * dim + d]!;
          const at = (r0 + i) * dim + d;
          dHidden[at] = accumulateDHidden ? dHidden[at]! + acc : acc;
        }
      }
      for (let j = 0; j < vocab; j++) {
        for (let d = 0; d < dim; d++) {
          let acc = 0;
          for (let i = 0; i < n; i++) acc += logits[i * vocab + j]! * hidden[(r0 + i) * dim + d]!;
          dWeightChunk[j * dim + d] = acc;
        }
      }
      for (let i = 0; i < dWeightChunk.length; i++) dWeight[i] = dWeight[i]! + dWeightChunk[i]!;
    }
  },
};
