// Elementwise ops: broadcasting binary arithmetic, unary math, scalar ops, casts.
import { Tensor, empty, full } from '../tensor.js';
import { broadcastShapes, broadcastStrides, formatShape } from '../shape.js';
import { record } from '../autograd/node.js';
import { kernels } from '../backend/select.js';
import type { BinaryOp, UnaryOp } from '../backend/kernels.js';
import { buf, contiguousOrCopy, expectF32, withContiguous } from './util.js';
import { sumTo } from './reduce.js';
import type { DType } from '../dtype.js';

type Operand = Tensor | number;

function asTensor(v: Operand): Tensor {
  return typeof v === 'number' ? full([], v) : v;
}

function binaryForward(op: BinaryOp, a: Tensor, b: Tensor): Tensor {
  expectF32(a, op, 'left operand');
  expectF32(b, op, 'right operand');
  const shape = broadcastShapes(a.shape, b.shape, op);
  const out = empty(shape);
  kernels().binary(
    op,
    a.f32(),
    a.offset,
    broadcastStrides(a.shape, a.strides, shape),
    b.f32(),
    b.offset,
    broadcastStrides(b.shape, b.strides, shape),
    buf(out),
    shape,
  );
  return out;
}

/** Runs a binary op with no autograd recording (for use inside backward rules). */
function raw(op: BinaryOp, a: Tensor, b: Tensor): Tensor {
  return binaryForward(op, a, b);
}

function reduceGrad(g: Tensor, like: Tensor): Tensor {
  const r = sumTo(g, like.shape);
  if (r !== g) g.dispose();
  return r;
}

function binary(op: BinaryOp, x: Operand, y: Operand): Tensor {
  const a = asTensor(x);
  const b = asTensor(y);
  const out = binaryForward(op, a, b);
  // Scalar operands were made here; they live until the node no longer needs them.
  const releaseScalars = (): void => {
    if (typeof x === 'number') a.dispose();
    if (typeof y === 'number') b.dispose();
  };
  record(
    op,
    [a, b],
    [out],
    ([g]) => {
      const grad = g!;
      switch (op) {
        case 'add':
          return [a.requiresGrad ? sumTo(grad, a.shape) : null, b.requiresGrad ? sumTo(grad, b.shape) : null];
        case 'sub':
          return [
            a.requiresGrad ? sumTo(grad, a.shape) : null,
            b.requiresGrad ? reduceGrad(scaled(grad, -1), b) : null,
          ];
        case 'mul':
          return [
            a.requiresGrad ? reduceGrad(raw('mul', grad, b), a) : null,
            b.requiresGrad ? reduceGrad(raw('mul', grad, a), b) : null,
          ];
        case 'div': {
          const ga = a.requiresGrad ? reduceGrad(raw('div', grad, b), a) : null;
          let gb: Tensor | null = null;
          if (b.requiresGrad) {
            // d(a/b)/db = −a/b² = −out/b
            const t = raw('div', out, b);
            const u = raw('mul', grad, t);
            t.dispose();
            gb = reduceGrad(scaled(u, -1, true), b);
          }
          return [ga, gb];
        }
        case 'pow': {
          let ga: Tensor | null = null;
          let gb: Tensor | null = null;
          if (a.requiresGrad) {
            // b · a^(b−1) · g
            const bm1 = scaled(b, 1, false, -1);
            const p = raw('pow', a, bm1);
            const q = raw('mul', p, b);
            ga = reduceGrad(raw('mul', q, grad), a);
            [bm1, p, q].forEach((t) => t.dispose());
          }
          if (b.requiresGrad) {
            // a^b · ln a · g
            const lna = unaryRaw('log', a);
            const q = raw('mul', out, lna);
            gb = reduceGrad(raw('mul', q, grad), b);
            [lna, q].forEach((t) => t.dispose());
          }
          return [ga, gb];
        }
        case 'maximum':
        case 'minimum': {
          // The gradient goes to the operand that was selected (the left one on ties).
          const pick = (first: boolean): Tensor => {
            const shape = out.shape;
            const av = broadcastValues(a, shape);
            const bv = broadcastValues(b, shape);
            const gv = withContiguous(grad, (c) => buf(c).slice());
            for (let i = 0; i < gv.length; i++) {
              const left = op === 'maximum' ? av[i]! >= bv[i]! : av[i]! <= bv[i]!;
              if (left !== first) gv[i] = 0;
            }
            const t = empty(shape);
            buf(t).set(gv);
            return reduceGrad(t, first ? a : b);
          };
          return [a.requiresGrad ? pick(true) : null, b.requiresGrad ? pick(false) : null];
        }
      }
    },
    releaseScalars,
  );
  return out;
}

function broadcastValues(t: Tensor, shape: readonly number[]): Float32Array {
  const out = new Float32Array(shape.reduce((a, b) => a * b, 1));
  kernels().stridedCopy(t.f32(), t.offset, shape, broadcastStrides(t.shape, t.strides, shape), out);
  return out;
}

/** x·scale + shift as a new contiguous tensor (no recording); disposes x when `consume`. */
function scaled(x: Tensor, scale: number, consume = false, shift = 0): Tensor {
  const out = withContiguous(x, (c) => {
    const o = empty(c.shape);
    kernels().affine(buf(c), buf(o), o.size, scale, shift);
    return o;
  });
  if (consume) x.dispose();
  return out;
}

function unaryRaw(op: UnaryOp, x: Tensor): Tensor {
  return withContiguous(x, (c) => {
    const out = empty(c.shape);
    kernels().unary(op, buf(c), buf(out), out.size);
    return out;
  });
}

export const add = (a: Operand, b: Operand): Tensor => binary('add', a, b);
export const sub = (a: Operand, b: Operand): Tensor => binary('sub', a, b);
export const mul = (a: Operand, b: Operand): Tensor => binary('mul', a, b);
export const div = (a: Operand, b: Operand): Tensor => binary('div', a, b);
export const pow = (a: Operand, b: Operand): Tensor => binary('pow', a, b);
export const maximum = (a: Operand, b: Operand): Tensor => binary('maximum', a, b);
export const minimum = (a: Operand, b: Operand): Tensor => binary('minimum', a, b);

function unary(op: UnaryOp, x: Tensor): Tensor {
  expectF32(x, op);
  const input = contiguousOrCopy(x);
  const out = empty(x.shape);
  kernels().unary(op, buf(input), buf(out), out.size);
  record(
    op,
    [x],
    [out],
    ([g]) =>
      withContiguous(g!, (gc) => {
        const dx = empty(x.shape);
        kernels().unaryBackward(op, buf(input), buf(out), buf(gc), buf(dx), dx.size, false);
        return [dx];
      }),
    () => {
      if (input !== x) input.dispose();
    },
  );
  return out;
}

export const neg = (x: Tensor): Tensor => unary('neg', x);
export const exp = (x: Tensor): Tensor => unary('exp', x);
export const log = (x: Tensor): Tensor => unary('log', x);
export const sqrt = (x: Tensor): Tensor => unary('sqrt', x);
export const rsqrt = (x: Tensor): Tensor => unary('rsqrt', x);
export const reciprocal = (x: Tensor): Tensor => unary('reciprocal', x);
export const square = (x: Tensor): Tensor => unary('square', x);
export const abs = (x: Tensor): Tensor => unary('abs', x);
export const sigmoid = (x: Tensor): Tensor => unary('sigmoid', x);
export const silu = (x: Tensor): Tensor => unary('silu', x);
export const tanh = (x: Tensor): Tensor => unary('tanh', x);
export const relu = (x: Tensor): Tensor => unary('relu', x);

/** x·scale + shift. */
export function affine(x: Tensor, scale: number, shift = 0): Tensor {
  expectF32(x, 'affine');
  const out = scaled(x, scale, false, shift);
  record('affine', [x], [out], ([g]) => [scaled(g!, scale)]);
  return out;
}

export const mulScalar = (x: Tensor, s: number): Tensor => affine(x, s, 0);
export const addScalar = (x: Tensor, s: number): Tensor => affine(x, 1, s);

/** x^p for a constant exponent. */
export function powScalar(x: Tensor, p: number): Tensor {
  expectF32(x, 'powScalar');
  const out = withContiguous(x, (c) => {
    const o = empty(c.shape);
    kernels().powScalar(buf(c), buf(o), o.size, p);
    return o;
  });
  record('powScalar', [x], [out], ([g]) => {
    // p · x^(p−1) · g
    const d = withContiguous(x, (c) => {
      const o = empty(c.shape);
      kernels().powScalar(buf(c), buf(o), o.size, p - 1);
      return o;
    });
    const r = raw('mul', d, g!);
    d.dispose();
    kernels().affine(buf(r), buf(r), r.size, p, 0);
    return [r];
  });
  return out;
}

/** Clamps to [lo, hi]; the gradient passes where lo ≤ x ≤ hi. */
export function clamp(x: Tensor, lo: number, hi: number): Tensor {
  expectF32(x, 'clamp');
  if (lo > hi) throw new RangeError(`clamp: lower bound ${lo} exceeds upper bound ${hi}`);
  const out = withContiguous(x, (c) => {
    const o = empty(c.shape);
    kernels().clamp(buf(c), buf(o), o.size, lo, hi);
    return o;
  });
  record('clamp', [x], [out], ([g]) => {
    const xs = x.toArray() as Float32Array;
    const grad = withContiguous(g!, (gc) => {
      const o = empty(gc.shape);
      buf(o).set(buf(gc));
      return o;
    });
    const gs = buf(grad);
    for (let i = 0; i < gs.length; i++) if (!(xs[i]! >= lo && xs[i]! <= hi)) gs[i] = 0;
    return [grad];
  });
  return out;
}

/** The same values, cut from the graph. */
export function detach(x: Tensor): Tensor {
  return withContiguous(x, (c) => {
    const out = empty(c.shape, c.dtype);
    out.storage.data.set(c.storage.data.subarray(c.offset, c.offset + c.size));
    return out;
  });
}

/** Converts between dtypes (f32 ↔ bf16 rounds to nearest even; i32 → f32). Gradients flow f32 ↔ bf16 as f32. */
export function cast(x: Tensor, dtype: DType): Tensor {
  x.assertAlive('cast');
  if (x.dtype === dtype) return x;
  return withContiguous(x, (c) => {
    const out = empty(c.shape, dtype);
    const src = c.storage.data.subarray(c.offset, c.offset + c.size);
    const dst = out.storage.data;
    const k = kernels();
    if (c.dtype === 'f32' && dtype === 'bf16') k.f32ToBf16(src as Float32Array, dst as Uint16Array, c.size);
    else if (c.dtype === 'bf16' && dtype === 'f32') k.bf16ToF32(src as Uint16Array, dst as Float32Array, c.size);
    else if (c.dtype === 'i32' && dtype === 'f32') k.i32ToF32(src as Int32Array, dst as Float32Array, c.size);
    else if (c.dtype === 'bf16' && dtype === 'i32') throw new TypeError('cast: bf16 → i32 is not supported');
    else if (c.dtype === 'f32' && dtype === 'i32') {
      for (let i = 0; i < c.size; i++) dst[i] = Math.trunc(src[i]!);
    } else if (c.dtype === 'i32' && dtype === 'bf16') {
      const tmp = new Float32Array(c.size);
      k.i32ToF32(src as Int32Array, tmp, c.size);
      k.f32ToBf16(tmp, dst as Uint16Array, c.size);
    }
    if (c.dtype !== 'i32' && dtype !== 'i32')
      record('cast', [x], [out], ([g]) => [c.dtype === 'f32' ? g! : castGradToBf16(g!)]);
    return out;
  });
}

function castGradToBf16(g: Tensor): Tensor {
  throw new TypeError(
    `cast: gradients into a bf16 tensor are not supported (${formatShape(g.shape)}); keep trainable tensors in f32`,
  );
}
