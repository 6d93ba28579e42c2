// Views and data movement: reshape, transpose, permute, narrow, (un)squeeze, expand, contiguous,
// concatenation. Views share storage; their backward rules move the gradient back.
import { Tensor, empty, view, zeros } from '../tensor.js';
import { contiguousStrides, formatShape, normalizeDim, numel, broadcastStrides, type Shape } from '../shape.js';
import { record } from '../autograd/node.js';
import { copyContiguous } from './util.js';
import { sumTo } from './reduce.js';

function resolveShape(shape: Shape, size: number, where: string): number[] {
  const out = [...shape];
  const infer = out.indexOf(-1);
  if (infer >= 0) {
    const known = numel(out.filter((_, i) => i !== infer));
    if (known === 0 || size % known !== 0)
      throw new RangeError(`${where}: cannot infer -1 in ${formatShape(shape)} for ${size} elements`);
    out[infer] = size / known;
  }
  if (numel(out) !== size) throw new RangeError(`${where}: shape ${formatShape(shape)} does not hold ${size} elements`);
  return out;
}

/** Same values, new shape (a view when the tensor is contiguous, else a copy). One dim may be -1. */
export function reshape(x: Tensor, shape: Shape): Tensor {
  x.assertAlive('reshape');
  const target = resolveShape(shape, x.size, `reshape ${x.describe()}`);
  const out = x.isContiguous ? view(x, target, contiguousStrides(target), x.offset) : reshapeCopy(x, target);
  record('reshape', [x], [out], ([g]) => [reshape(g!, x.shape)]);
  return out;
}

function reshapeCopy(x: Tensor, target: number[]): Tensor {
  const c = copyContiguous(x);
  const out = view(c, target, contiguousStrides(target), 0);
  c.dispose();
  return out;
}

/** Swaps two dimensions (a view). */
export function transpose(x: Tensor, dim0 = -2, dim1 = -1): Tensor {
  x.assertAlive('transpose');
  const a = normalizeDim(dim0, x.rank, 'transpose');
  const b = normalizeDim(dim1, x.rank, 'transpose');
  const shape = [...x.shape];
  const strides = [...x.strides];
  [shape[a], shape[b]] = [shape[b]!, shape[a]!];
  [strides[a], strides[b]] = [strides[b]!, strides[a]!];
  const out = view(x, shape, strides, x.offset);
  record('transpose', [x], [out], ([g]) => [transpose(g!, a, b)]);
  return out;
}

/** Reorders dimensions (a view): out.shape[i] = x.shape[dims[i]]. */
export function permute(x: Tensor, dims: readonly number[]): Tensor {
  x.assertAlive('permute');
  if (dims.length !== x.rank) throw new RangeError(`permute: ${dims.length} dims given for a rank-${x.rank} tensor`);
  const resolved = dims.map((d) => normalizeDim(d, x.rank, 'permute'));
  if (new Set(resolved).size !== resolved.length)
    throw new RangeError(`permute: repeated dimension in [${dims.join(', ')}]`);
  const out = view(
    x,
    resolved.map((d) => x.shape[d]!),
    resolved.map((d) => x.strides[d]!),
    x.offset,
  );
  const inverse = new Array<number>(resolved.length);
  resolved.forEach((d, i) => (inverse[d] = i));
  record('permute', [x], [out], ([g]) => [permute(g!, inverse)]);
  return out;
}

/** The elements [start, start + length) along dim (a view). */
export function narrow(x: Tensor, dim: number, start: number, length: number): Tensor {
  x.assertAlive('narrow');
  const d = normalizeDim(dim, x.rank, 'narrow');
  if (!Number.isInteger(start) || !Number.isInteger(length) || start < 0 || length < 0 || start + length > x.shape[d]!)
    throw new RangeError(`narrow: [${start}, ${start + length}) is outside dim ${d} of size ${x.shape[d]}`);
  const shape = [...x.shape];
  shape[d] = length;
  const out = view(x, shape, x.strides, x.offset + start * x.strides[d]!);
  record('narrow', [x], [out], ([g]) => [padNarrowGrad(g!, x.shape, d, start)]);
  return out;
}

/** Zeros of `shape` with g written at [start, start + g.shape[d]) along d. */
function padNarrowGrad(g: Tensor, shape: Shape, d: number, start: number): Tensor {
  const out = zeros(shape);
  const target = view(out, g.shape, out.strides, start * out.strides[d]!);
  copyInto(g, target);
  target.dispose();
  return out;
}

/** Writes src's values into the (possibly strided) view dst, elementwise. */
export function copyInto(src: Tensor, dst: Tensor): void {
  if (src.shape.length !== dst.shape.length || src.shape.some((s, i) => s !== dst.shape[i]))
    throw new RangeError(`copyInto: shapes ${formatShape(src.shape)} and ${formatShape(dst.shape)} differ`);
  const values = src.isContiguous && src.offset === 0 ? src.f32() : (src.toArray() as Float32Array);
  const out = dst.f32('copyInto');
  const rank = dst.rank;
  if (rank === 0) {
    out[dst.offset] = values[0]!;
    return;
  }
  // Copy innermost rows with typed-array set when they are contiguous.
  const inner = dst.shape[rank - 1]!;
  const rows = dst.size / Math.max(inner, 1);
  const index = new Array<number>(rank - 1).fill(0);
  for (let r = 0; r < rows; r++) {
    let at = dst.offset;
    for (let k = 0; k < rank - 1; k++) at += index[k]! * dst.strides[k]!;
    if (dst.strides[rank - 1] === 1) out.set(values.subarray(r * inner, (r + 1) * inner), at);
    else for (let j = 0; j < inner; j++) out[at + j * dst.strides[rank - 1]!] = values[r * inner + j]!;
    for (let k = rank - 2; k >= 0; k--) {
      if (++index[k]! < dst.shape[k]!) break;
      index[k] = 0;
    }
  }
}

/** Inserts a size-1 dimension at dim (a view). */
export function unsqueeze(x: Tensor, dim: number): Tensor {
  x.assertAlive('unsqueeze');
  const d = normalizeDim(dim, x.rank + 1, 'unsqueeze');
  const shape = [...x.shape];
  const strides = [...x.strides];
  shape.splice(d, 0, 1);
  strides.splice(d, 0, d < x.rank ? x.strides[d]! * x.shape[d]! : 1);
  const out = view(x, shape, strides, x.offset);
  record('unsqueeze', [x], [out], ([g]) => [reshape(g!, x.shape)]);
  return out;
}

/** Removes a size-1 dimension (a view). */
export function squeeze(x: Tensor, dim: number): Tensor {
  x.assertAlive('squeeze');
  const d = normalizeDim(dim, x.rank, 'squeeze');
  if (x.shape[d] !== 1) throw new RangeError(`squeeze: dim ${d} has size ${x.shape[d]}, not 1`);
  const shape = [...x.shape];
  const strides = [...x.strides];
  shape.splice(d, 1);
  strides.splice(d, 1);
  const out = view(x, shape, strides, x.offset);
  record('squeeze', [x], [out], ([g]) => [reshape(g!, x.shape)]);
  return out;
}

/** Broadcasts x to `shape` (a view with zero strides). */
export function expand(x: Tensor, shape: Shape): Tensor {
  x.assertAlive('expand');
  if (shape.length < x.rank)
    throw new RangeError(`expand: cannot expand ${formatShape(x.shape)} to ${formatShape(shape)}`);
  const lead = shape.length - x.rank;
  x.shape.forEach((d, i) => {
    if (d !== 1 && d !== shape[lead + i])
      throw new RangeError(`expand: cannot expand ${formatShape(x.shape)} to ${formatShape(shape)}`);
  });
  const out = view(x, shape, broadcastStrides(x.shape, x.strides, shape), x.offset);
  record('expand', [x], [out], ([g]) => [sumTo(g!, x.shape)]);
  return out;
}

/** A contiguous copy (or x itself when already contiguous). */
export function contiguous(x: Tensor): Tensor {
  x.assertAlive('contiguous');
  if (x.isContiguous) return x;
  const out = copyContiguous(x);
  record('contiguous', [x], [out], ([g]) => [g!]);
  return out;
}

/** Joins tensors along dim. */
export function cat(xs: readonly Tensor[], dim = 0): Tensor {
  if (xs.length === 0) throw new RangeError('cat: no tensors given');
  const first = xs[0]!;
  const d = normalizeDim(dim, first.rank, 'cat');
  for (const x of xs) {
    x.assertAlive('cat');
    if (x.dtype !== first.dtype) throw new TypeError(`cat: dtypes ${first.dtype} and ${x.dtype} differ`);
    if (x.rank !== first.rank || x.shape.some((s, i) => i !== d && s !== first.shape[i]))
      throw new RangeError(
        `cat: shapes ${formatShape(first.shape)} and ${formatShape(x.shape)} differ outside dim ${d}`,
      );
  }
  const shape = [...first.shape];
  shape[d] = xs.reduce((s, x) => s + x.shape[d]!, 0);
  const out = empty(shape, first.dtype);
  let start = 0;
  const starts: number[] = [];
  for (const x of xs) {
    starts.push(start);
    const target = view(out, x.shape, out.strides, start * out.strides[d]!);
    if (first.dtype === 'f32') copyInto(x, target);
    else copyGeneric(x, target);
    target.dispose();
    start += x.shape[d]!;
  }
  record('cat', xs, [out], ([g]) => xs.map((x, i) => narrowCopy(g!, d, starts[i]!, x.shape[d]!)));
  return out;
}

function narrowCopy(g: Tensor, d: number, start: number, length: number): Tensor {
  const shape = [...g.shape];
  shape[d] = length;
  const v = view(g, shape, g.strides, g.offset + start * g.strides[d]!);
  const out = copyContiguous(v);
  v.dispose();
  return out;
}

function copyGeneric(src: Tensor, dst: Tensor): void {
  const values = src.toArray();
  const data = dst.data;
  const index = new Array<number>(dst.rank).fill(0);
  for (let i = 0; i < dst.size; i++) {
    let at = dst.offset;
    for (let k = 0; k < dst.rank; k++) at += index[k]! * dst.strides[k]!;
    data[at] = values[i]!;
    for (let k = dst.rank - 1; k >= 0; k--) {
      if (++index[k]! < dst.shape[k]!) break;
      index[k] = 0;
    }
  }
}

/** Flattens x to 2-D [rows, lastDim]. */
export function flattenRows(x: Tensor): Tensor {
  const last = x.shape[x.rank - 1] ?? 1;
  return reshape(x, [x.size / Math.max(last, 1), last]);
}
