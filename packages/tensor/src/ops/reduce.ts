// Reductions: sum, mean, max over dimensions, and sumTo (the backward of broadcasting).
import { Tensor, empty, view } from '../tensor.js';
import { contiguousStrides, formatShape, normalizeDim, type Shape } from '../shape.js';
import { record } from '../autograd/node.js';
import { kernels } from '../backend/select.js';
import type { ReduceOp } from '../backend/kernels.js';
import { buf, copyContiguous, expectF32, withContiguous } from './util.js';

/** Reduces one dim of a contiguous tensor (kept as size 1). */
function reduceDim(op: ReduceOp, x: Tensor, d: number): Tensor {
  const outer = x.shape.slice(0, d).reduce((a, b) => a * b, 1);
  const size = x.shape[d]!;
  const inner = x.shape.slice(d + 1).reduce((a, b) => a * b, 1);
  const shape = [...x.shape];
  shape[d] = 1;
  const out = empty(shape);
  kernels().reduce(op, buf(x), outer, size, inner, buf(out));
  return out;
}

function resolveDims(x: Tensor, dims: number | readonly number[] | undefined, where: string): number[] {
  if (dims === undefined) return x.shape.map((_, i) => i);
  const list = typeof dims === 'number' ? [dims] : [...dims];
  return [...new Set(list.map((d) => normalizeDim(d, x.rank, where)))].sort((a, b) => a - b);
}

function reduceDims(op: ReduceOp, x: Tensor, dims: number[], where: string): Tensor {
  expectF32(x, where);
  if (op !== 'sum' && dims.some((d) => x.shape[d] === 0))
    throw new RangeError(`${where}: cannot reduce an empty dimension of ${formatShape(x.shape)}`);
  return withContiguous(x, (c) => {
    let current = c;
    // Reduce the innermost dims first; each pass works on a contiguous tensor.
    for (const d of [...dims].reverse()) {
      const next = reduceDim(op, current, d);
      if (current !== c) current.dispose();
      current = next;
    }
    return current === c ? copyContiguous(c) : current;
  });
}

function finalShape(x: Tensor, dims: number[], keepDim: boolean): number[] {
  return keepDim ? x.shape.map((s, i) => (dims.includes(i) ? 1 : s)) : x.shape.filter((_, i) => !dims.includes(i));
}

function dropDims(reduced: Tensor, shape: number[]): Tensor {
  const out = view(reduced, shape, contiguousStrides(shape), reduced.offset);
  reduced.dispose();
  return out;
}

/** Sum over dims (all dims when omitted). */
export function sum(x: Tensor, dims?: number | readonly number[], keepDim = false): Tensor {
  const ds = resolveDims(x, dims, 'sum');
  const out = dropDims(reduceDims('sum', x, ds, 'sum'), finalShape(x, ds, keepDim));
  record('sum', [x], [out], ([g]) => [expandBack(g!, x.shape, ds)]);
  return out;
}

/** Mean over dims (all dims when omitted). */
export function mean(x: Tensor, dims?: number | readonly number[], keepDim = false): Tensor {
  const ds = resolveDims(x, dims, 'mean');
  const count = ds.reduce((n, d) => n * x.shape[d]!, 1);
  const out = dropDims(reduceDims('sum', x, ds, 'mean'), finalShape(x, ds, keepDim));
  kernels().affine(buf(out), buf(out), out.size, 1 / count, 0);
  record('mean', [x], [out], ([g]) => {
    const grad = expandBack(g!, x.shape, ds);
    kernels().affine(buf(grad), buf(grad), grad.size, 1 / count, 0);
    return [grad];
  });
  return out;
}

/** Maximum over dims. The gradient flows to every position equal to the maximum. */
export function max(x: Tensor, dims?: number | readonly number[], keepDim = false): Tensor {
  const ds = resolveDims(x, dims, 'max');
  const out = dropDims(reduceDims('max', x, ds, 'max'), finalShape(x, ds, keepDim));
  record('max', [x], [out], ([g]) => {
    const grad = expandBack(g!, x.shape, ds);
    const m = expandBack(out, x.shape, ds);
    const xs = x.toArray() as Float32Array;
    const gs = buf(grad);
    const ms = buf(m);
    for (let i = 0; i < gs.length; i++) if (xs[i] !== ms[i]) gs[i] = 0;
    m.dispose();
    return [grad];
  });
  return out;
}

/** Minimum over dims (no gradient). */
export function min(x: Tensor, dims?: number | readonly number[], keepDim = false): Tensor {
  const ds = resolveDims(x, dims, 'min');
  return dropDims(reduceDims('min', x, ds, 'min'), finalShape(x, ds, keepDim));
}

/** g (the reduced shape) broadcast back over the reduced dims of `shape`, as a contiguous tensor. */
function expandBack(g: Tensor, shape: Shape, dims: number[]): Tensor {
  const keptShape = shape.map((s, i) => (dims.includes(i) ? 1 : s));
  const out = empty(shape);
  const strides = contiguousStrides(keptShape).map((s, i) => (keptShape[i] === 1 ? 0 : s));
  withContiguous(g, (c) => kernels().stridedCopy(buf(c), 0, shape, strides, buf(out)));
  return out;
}

/**
 * Sums g (of a broadcast result shape) down to `shape`: the backward of broadcasting. Returns g
 * itself when the shapes already match.
 */
export function sumTo(g: Tensor, shape: Shape): Tensor {
  if (g.rank === shape.length && g.shape.every((d, i) => d === shape[i])) return g;
  const lead = g.rank - shape.length;
  if (lead < 0) throw new RangeError(`sumTo: cannot reduce ${formatShape(g.shape)} to ${formatShape(shape)}`);
  const dims: number[] = [];
  for (let i = 0; i < g.rank; i++) {
    const target = i < lead ? 1 : shape[i - lead]!;
    if (target === 1 && (g.shape[i] !== 1 || i < lead)) dims.push(i);
    else if (target !== g.shape[i])
      throw new RangeError(`sumTo: cannot reduce ${formatShape(g.shape)} to ${formatShape(shape)}`);
  }
  const reduced = reduceDims('sum', g, dims, 'sumTo');
  return dropDims(reduced, [...shape]);
}
