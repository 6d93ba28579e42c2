// Reference transformer building blocks: embedding, RMSNorm, rotary embedding, SwiGLU, softmax,
// log-softmax and row gathers. Arithmetic runs in float64 (JS numbers) and rounds once on store,
// except rope, which reproduces PyTorch's float32 rounding step by step (see below).
//
// Rows whose entries are all −Inf: softmax and logSoftmax give NaN for the whole row (as PyTorch
// does), because the row max is −Inf and −Inf − (−Inf) is NaN. A row with at least one finite entry
// is NaN-free: its −Inf entries get probability 0 (log-probability −Inf).
import type { F32, I32, Kernels } from '../kernels.js';

const f32 = Math.fround;

function checkIndex(kernel: string, what: string, r: number, value: number, bound: number): void {
  if (!(value >= 0 && value < bound))
    throw new RangeError(`${kernel}: ${what}[${r}] = ${value} is out of range [0, ${bound})`);
}

/** Number of whole rows of `dim` floats in `buffer` (the vocabulary of an embedding table). */
function rowCount(buffer: F32, dim: number): number {
  return dim > 0 ? Math.floor(buffer.length / dim) : Infinity;
}

/** Validates every id before anything is written, so a bad id leaves the output untouched. */
function checkIds(kernel: string, ids: I32, rows: number, vocab: number): void {
  for (let r = 0; r < rows; r++) checkIndex(kernel, 'ids', r, ids[r]!, vocab);
}

/** max over x[base .. base+n); −Inf for n = 0, NaN if any entry is NaN. */
function rowMax(x: F32, base: number, n: number): number {
  let max = -Infinity;
  for (let j = 0; j < n; j++) {
    const v = x[base + j]!;
    if (v > max || Number.isNaN(v)) max = v;
    if (Number.isNaN(max)) break;
  }
  return max;
}

function sigmoid(v: number): number {
  return 1 / (1 + Math.exp(-v));
}

export const nnKernels: Pick<
  Kernels,
  | 'embedding'
  | 'embeddingBackward'
  | 'rmsnorm'
  | 'rmsnormBackward'
  | 'rope'
  | 'swiglu'
  | 'swigluBackward'
  | 'softmax'
  | 'softmaxBackward'
  | 'logSoftmax'
  | 'logSoftmaxBackward'
  | 'gatherRows'
  | 'gatherRowsBackward'
> = {
  embedding(weight: F32, ids: I32, rows: number, dim: number, out: F32): void {
    checkIds('embedding', ids, rows, rowCount(weight, dim));
    for (let r = 0; r < rows; r++) {
      const src = ids[r]! * dim;
      for (let j = 0; j < dim; j++) out[r * dim + j] = weight[src + j]!;
    }
  },

  embeddingBackward(dOut: F32, ids: I32, rows: number, dim: number, dWeight: F32): void {
    checkIds('embeddingBackward', ids, rows, rowCount(dWeight, dim));
    // Row order, one float32 add per row: repeated ids sum exactly as the contract says.
    for (let r = 0; r < rows; r++) {
      const dst = ids[r]! * dim;
      for (let j = 0; j < dim; j++) dWeight[dst + j] = dWeight[dst + j]! + dOut[r * dim + j]!;
    }
  },

  rmsnorm(x: F32, w: F32, rows: number, dim: number, eps: number, y: F32, rstd: F32): void {
    for (let r = 0; r < rows; r++) {
      const base = r * dim;
      let sumSquares = 0;
      for (let j = 0; j < dim; j++) sumSquares += x[base + j]! * x[base + j]!;
      const s = 1 / Math.sqrt(sumSquares / dim + eps);
      rstd[r] = s;
      for (let j = 0; j < dim; j++) y[base + j] = x[base + j]! * s * w[j]!;
    }
  },

  rmsnormBackward(
    dy: F32,
    x: F32,
    w: F32,
    rstd: F32,
    rows: number,
    dim: number,
    dx: F32,
    dw: F32,
    accumulateDx: boolean,
  ): void {
    // y_j = x_j·s·w_j with s = (Σx²/D + eps)^(−1/2), so ∂s/∂x_j = −s³·x_j/D and
    // dx_j = s·w_j·dy_j − (s³/D)·x_j·Σ_i dy_i·w_i·x_i;  dw_j = Σ_rows dy_j·x_j·s.
    const dwSum = new Float64Array(dim);
    for (let r = 0; r < rows; r++) {
      const base = r * dim;
      const s = rstd[r]!;
      let dot = 0;
      for (let j = 0; j < dim; j++) dot += dy[base + j]! * w[j]! * x[base + j]!;
      const c = (s * s * s * dot) / dim;
      for (let j = 0; j < dim; j++) {
        const g = s * w[j]! * dy[base + j]! - c * x[base + j]!;
        dx[base + j] = accumulateDx ? dx[base + j]! + g : g;
        dwSum[j] = dwSum[j]! + dy[base + j]! * x[base + j]! * s;
      }
    }
    for (let j = 0; j < dim; j++) dw[j] = dw[j]! + dwSum[j]!;
  },

  rope(x: F32, positions: I32, tokens: number, heads: number, dim: number, theta: number, inverse: boolean, out: F32) {
    if (dim % 2 !== 0) throw new RangeError(`rope: dim must be even, got ${dim}`);
    const half = dim / 2;
    // PyTorch parity: inverse frequencies rounded to float32, angle = float32(pos)·inv in float32,
    // cos/sin of that float32 angle, then out = x·cos ± x'·sin with each product and the sum rounded.
    const invFreq = new Float32Array(half);
    for (let i = 0; i < half; i++) invFreq[i] = 1 / Math.pow(theta, (2 * i) / dim);
    const cos = new Float32Array(half);
    const sin = new Float32Array(half);
    for (let t = 0; t < tokens; t++) {
      const pos = f32(positions[t]!);
      for (let i = 0; i < half; i++) {
        const angle = f32(pos * invFreq[i]!);
        const sine = Math.sin(angle);
        cos[i] = Math.cos(angle);
        sin[i] = inverse ? -sine : sine; // rotating by −angle: cos(−a) = cos a, sin(−a) = −sin a
      }
      for (let h = 0; h < heads; h++) {
        const base = (t * heads + h) * dim;
        for (let i = 0; i < half; i++) {
          const x1 = x[base + i]!;
          const x2 = x[base + half + i]!;
          out[base + i] = f32(x1 * cos[i]!) - f32(x2 * sin[i]!);
          out[base + half + i] = f32(x2 * cos[i]!) + f32(x1 * sin[i]!);
        }
      }
    }
  },

  swiglu(g: F32, u: F32, out: F32, n: number): void {
    for (let i = 0; i < n; i++) out[i] = g[i]! * sigmoid(g[i]!) * u[i]!;
  },

  swigluBackward(g: F32, u: F32, dOut: F32, dg: F32, du: F32, n: number, accumulate: boolean): void {
    for (let i = 0; i < n; i++) {
      const v = g[i]!;
      const s = sigmoid(v);
      // d silu/dg = s·(1 + g·(1 − s)), with 1 − s = sigmoid(−g) to avoid cancellation.
      const dSilu = s * (1 + v * sigmoid(-v));
      const gradG = dOut[i]! * u[i]! * dSilu;
      const gradU = dOut[i]! * v * s;
      dg[i] = accumulate ? dg[i]! + gradG : gradG;
      du[i] = accumulate ? du[i]! + gradU : gradU;
    }
  },

  softmax(x: F32, rows: number, n: number, out: F32): void {
    const e = new Float64Array(n);
    for (let r = 0; r < rows; r++) {
      const base = r * n;
      const max = rowMax(x, base, n);
      let sum = 0;
      for (let j = 0; j < n; j++) {
        e[j] = Math.exp(x[base + j]! - max);
        sum += e[j]!;
      }
      for (let j = 0; j < n; j++) out[base + j] = e[j]! / sum;
    }
  },

  softmaxBackward(y: F32, dy: F32, rows: number, n: number, dx: F32, accumulate: boolean): void {
    for (let r = 0; r < rows; r++) {
      const base = r * n;
      let dot = 0;
      for (let j = 0; j < n; j++) dot += y[base + j]! * dy[base + j]!;
      for (let j = 0; j < n; j++) {
        const g = y[base + j]! * (dy[base + j]! - dot);
        dx[base + j] = accumulate ? dx[base + j]! + g : g;
      }
    }
  },

  logSoftmax(x: F32, rows: number, n: number, out: F32): void {
    for (let r = 0; r < rows; r++) {
      const base = r * n;
      const max = rowMax(x, base, n);
      let sum = 0;
      for (let j = 0; j < n; j++) sum += Math.exp(x[base + j]! - max);
      const logSum = Math.log(sum);
      for (let j = 0; j < n; j++) out[base + j] = x[base + j]! - max - logSum;
    }
  },

  logSoftmaxBackward(y: F32, dy: F32, rows: number, n: number, dx: F32, accumulate: boolean): void {
    for (let r = 0; r < rows; r++) {
      const base = r * n;
      let sum = 0;
      for (let j = 0; j < n; j++) sum += dy[base + j]!;
      for (let j = 0; j < n; j++) {
        const g = dy[base + j]! - Math.exp(y[base + j]!) * sum;
        dx[base + j] = accumulate ? dx[base + j]! + g : g;
      }
    }
  },

  gatherRows(x: F32, idx: I32, rows: number, n: number, out: F32): void {
    for (let r = 0; r < rows; r++) checkIndex('gatherRows', 'idx', r, idx[r]!, n);
    for (let r = 0; r < rows; r++) out[r] = x[r * n + idx[r]!]!;
  },

  gatherRowsBackward(dOut: F32, idx: I32, rows: number, n: number, dx: F32): void {
    for (let r = 0; r < rows; r++) checkIndex('gatherRowsBackward', 'idx', r, idx[r]!, n);
    for (let r = 0; r < rows; r++) dx[r * n + idx[r]!] = dx[r * n + idx[r]!]! + dOut[r]!;
  },
};
