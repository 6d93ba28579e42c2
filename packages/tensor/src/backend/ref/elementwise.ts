// Elementwise ops and reductions. Every value is computed in float64 from the f32 inputs and
// rounded once when stored, so these are the correctly rounded results (up to Math.* accuracy).
// Sums accumulate in float64, in index order.
import { BINARY_OPS, type BinaryOp, type F32, type Kernels, type ReduceOp, type UnaryOp } from '../kernels.js';

const MAX_RANK = 8;

/** 1/(1+e^−x), evaluated so that e^(±x) never overflows into inf/inf. */
function sigmoid(x: number): number {
  if (x >= 0) return 1 / (1 + Math.exp(-x));
  const e = Math.exp(x);
  return e / (1 + e);
}

function unaryValue(op: UnaryOp, x: number): number {
  switch (op) {
    case 'neg':
      return -x;
    case 'exp':
      return Math.exp(x);
    case 'log':
      return Math.log(x);
    case 'sqrt':
      return Math.sqrt(x);
    case 'rsqrt':
      return 1 / Math.sqrt(x);
    case 'reciprocal':
      return 1 / x;
    case 'square':
      return x * x;
    case 'abs':
      return Math.abs(x);
    case 'sigmoid':
      return sigmoid(x);
    case 'silu':
      return x * sigmoid(x);
    case 'tanh':
      return Math.tanh(x);
    case 'relu':
      return x > 0 ? x : Number.isNaN(x) ? x : 0; // NaN passes through, as in PyTorch
  }
}

/** op'(x), from x alone (exact in float64, so y is not needed). relu'(0) = abs'(0) = 0. */
function unaryDerivative(op: UnaryOp, x: number): number {
  switch (op) {
    case 'neg':
      return -1;
    case 'exp':
      return Math.exp(x);
    case 'log':
      return 1 / x;
    case 'sqrt':
      return 0.5 / Math.sqrt(x);
    case 'rsqrt':
      return -0.5 / (x * Math.sqrt(x));
    case 'reciprocal':
      return -1 / (x * x);
    case 'square':
      return 2 * x;
    case 'abs':
      return x > 0 ? 1 : x < 0 ? -1 : 0;
    case 'sigmoid': {
      const s = sigmoid(x);
      return s * (1 - s);
    }
    case 'silu': {
      const s = sigmoid(x);
      return s * (1 + x * (1 - s));
    }
    case 'tanh': {
      const t = Math.tanh(x);
      return 1 - t * t;
    }
    case 'relu':
      return x > 0 ? 1 : 0;
  }
}

function binaryValue(op: BinaryOp, a: number, b: number): number {
  switch (op) {
    case 'add':
      return a + b;
    case 'sub':
      return a - b;
    case 'mul':
      return a * b;
    case 'div':
      return a / b;
    case 'maximum':
      return Math.max(a, b); // NaN propagates
    case 'minimum':
      return Math.min(a, b);
    case 'pow':
      return Math.pow(a, b);
  }
}

export const elementwiseKernels: Pick<
  Kernels,
  'unary' | 'unaryBackward' | 'affine' | 'powScalar' | 'clamp' | 'binary' | 'axpy' | 'reduce' | 'sumSquares'
> = {
  unary(op: UnaryOp, x: F32, out: F32, n: number): void {
    for (let i = 0; i < n; i++) out[i] = unaryValue(op, x[i]!);
  },

  unaryBackward(op: UnaryOp, x: F32, _y: F32, dy: F32, dx: F32, n: number, accumulate: boolean): void {
    for (let i = 0; i < n; i++) {
      const grad = dy[i]! * unaryDerivative(op, x[i]!);
      dx[i] = accumulate ? dx[i]! + grad : grad;
    }
  },

  affine(x: F32, out: F32, n: number, scale: number, shift: number): void {
    for (let i = 0; i < n; i++) out[i] = x[i]! * scale + shift;
  },

  powScalar(x: F32, out: F32, n: number, p: number): void {
    for (let i = 0; i < n; i++) out[i] = Math.pow(x[i]!, p);
  },

  clamp(x: F32, out: F32, n: number, lo: number, hi: number): void {
    for (let i = 0; i < n; i++) out[i] = Math.min(Math.max(x[i]!, lo), hi);
  },

  binary(
    op: BinaryOp,
    a: F32,
    aOffset: number,
    aStrides: readonly number[],
    b: F32,
    bOffset: number,
    bStrides: readonly number[],
    out: F32,
    shape: readonly number[],
  ): void {
    if (!BINARY_OPS.includes(op)) throw new TypeError(`ref.binary: unknown op '${op}'`);
    const rank = shape.length;
    if (rank > MAX_RANK) throw new RangeError(`ref.binary: rank ${rank} exceeds ${MAX_RANK}`);
    if (aStrides.length !== rank || bStrides.length !== rank)
      throw new RangeError(
        `ref.binary: strides of rank ${aStrides.length}/${bStrides.length} for shape of rank ${rank}`,
      );
    let total = 1;
    for (let d = 0; d < rank; d++) total *= shape[d]!;
    // Odometer over the output index; aAt/bAt track each operand's element offset.
    const index = new Array<number>(rank).fill(0);
    let aAt = aOffset;
    let bAt = bOffset;
    for (let flat = 0; flat < total; flat++) {
      out[flat] = binaryValue(op, a[aAt]!, b[bAt]!);
      for (let d = rank - 1; d >= 0; d--) {
        index[d]!++;
        aAt += aStrides[d]!;
        bAt += bStrides[d]!;
        if (index[d]! < shape[d]!) break;
        aAt -= index[d]! * aStrides[d]!;
        bAt -= index[d]! * bStrides[d]!;
        index[d] = 0;
      }
    }
  },

  axpy(alpha: number, x: F32, y: F32, n: number): void {
    for (let i = 0; i < n; i++) y[i] = y[i]! + alpha * x[i]!;
  },

  reduce(op: ReduceOp, x: F32, outer: number, size: number, inner: number, out: F32): void {
    for (let o = 0; o < outer; o++) {
      for (let i = 0; i < inner; i++) {
        const base = o * size * inner + i;
        let acc = op === 'sum' ? 0 : op === 'max' ? -Infinity : Infinity;
        for (let s = 0; s < size; s++) {
          const v = x[base + s * inner]!;
          if (op === 'sum') acc += v;
          else if (Number.isNaN(v) || (op === 'max' ? v > acc : v < acc)) acc = v; // NaN wins
        }
        out[o * inner + i] = acc;
      }
    }
  },

  sumSquares(x: F32, n: number): number {
    let total = 0;
    for (let i = 0; i < n; i++) total += x[i]! * x[i]!;
    return total;
  },
};
