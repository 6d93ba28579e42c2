import type { I32, Kernels } from '../kernels.js';

/** Checks H % KV and that every segment is one contiguous run; returns each position's segment start. */
function segmentStarts(kernel: string, segments: I32, batch: number, seq: number, heads: number, kvHeads: number) {
  if (!(kvHeads >= 1) || heads % kvHeads !== 0)
    throw new Error(`${kernel}: heads (${heads}) must be a multiple of kvHeads (${kvHeads})`);
  const starts = new Int32Array(batch * seq);
  for (let b = 0; b < batch; b++) {
    const finished = new Set<number>();
    let runStart = 0;
    for (let t = 0; t < seq; t++) {
      const id = segments[b * seq + t]!;
      if (t > 0 && id !== segments[b * seq + t - 1]) {
        finished.add(segments[b * seq + t - 1]!);
        if (finished.has(id))
          throw new Error(
            `${kernel}: segments must be contiguous runs, but batch row ${b} has segment id ${id} ` +
              `again at position ${t} after a different segment`,
          );
        runStart = t;
      }
      starts[b * seq + t] = runStart;
    }
  }
  return starts;
}

export const attentionKernels: Pick<Kernels, 'attention' | 'attentionBackward'> = {
  attention(q, k, v, segments, batch, seq, heads, kvHeads, dim, scale, out, lse) {
    const starts = segmentStarts('attention', segments, batch, seq, heads, kvHeads);
    const group = heads / kvHeads;
    const scores = new Float64Array(seq);
    for (let b = 0; b < batch; b++) {
      for (let h = 0; h < heads; h++) {
        const kvh = Math.floor(h / group);
        for (let t = 0; t < seq; t++) {
          // Query t sees keys [start, t]: its own segment, up to itself.
          const start = starts[b * seq + t]!;
          const qBase = ((b * seq + t) * heads + h) * dim;
          let max = -Infinity;
          for (let s = start; s <= t; s++) {
            const kBase = ((b * seq + s) * kvHeads + kvh) * dim;
            let dot = 0;
            for (let d = 0; d < dim; d++) dot += q[qBase + d]! * k[kBase + d]!;
            scores[s] = dot * scale;
            max = Math.max(max, scores[s]!);
          }
          let sum = 0;
          for (let s = start; s <= t; s++) {
            scores[s] = Math.exp(scores[s]! - max);
            sum += scores[s]!;
          }
          lse[(b * heads + h) * seq + t] = max + Math.log(sum);
          for (let d = 0; d < dim; d++) {
            let acc = 0;
            for (let s = start; s <= t; s++) acc += scores[s]! * v[((b * seq + s) * kvHeads + kvh) * dim + d]!;
            out[qBase + d] = acc / sum;
          }
        }
      }
    }
  },

  attentionBackward(q, k, v, segments, out, lse, dOut, batch, seq, heads, kvHeads, dim, scale, dq, dk, dv) {
    const starts = segmentStarts('attentionBackward', segments, batch, seq, heads, kvHeads);
    const group = heads / kvHeads;
    // dk and dv sum over queries and over the query heads of a group: accumulate in f64, then store.
    const dkSum = new Float64Array(batch * seq * kvHeads * dim);
    const dvSum = new Float64Array(batch * seq * kvHeads * dim);
    const dqRow = new Float64Array(dim);
    for (let b = 0; b < batch; b++) {
      for (let h = 0; h < heads; h++) {
        const kvh = Math.floor(h / group);
        for (let t = 0; t < seq; t++) {
          const start = starts[b * seq + t]!;
          const qBase = ((b * seq + t) * heads + h) * dim;
          const savedLse = lse[(b * heads + h) * seq + t]!;
          // delta = Σ dO ⊙ O, the softmax backward's row term.
          let delta = 0;
          for (let d = 0; d < dim; d++) delta += dOut[qBase + d]! * out[qBase + d]!;
          dqRow.fill(0);
          for (let s = start; s <= t; s++) {
            const kBase = ((b * seq + s) * kvHeads + kvh) * dim;
            let dot = 0;
            let dProb = 0;
            for (let d = 0; d < dim; d++) {
              dot += q[qBase + d]! * k[kBase + d]!;
              dProb += dOut[qBase + d]! * v[kBase + d]!;
            }
            const p = Math.exp(dot * scale - savedLse);
            const dScore = p * (dProb - delta) * scale;
            for (let d = 0; d < dim; d++) {
              dvSum[kBase + d] = dvSum[kBase + d]! + p * dOut[qBase + d]!;
              dkSum[kBase + d] = dkSum[kBase + d]! + dScore * q[qBase + d]!;
              dqRow[d] = dqRow[d]! + dScore * k[kBase + d]!;
            }
          }
          for (let d = 0; d < dim; d++) dq[qBase + d] = dqRow[d]!;
        }
      }
    }
    for (let i = 0; i < dkSum.length; i++) {
      dk[i] = dkSum[i]!;
      dv[i] = dvSum[i]!;
    }
  },
};
