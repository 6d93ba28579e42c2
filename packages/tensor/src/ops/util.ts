// Helpers shared by op implementations.
import { Tensor, empty } from '../tensor.js';
import { kernels } from '../backend/select.js';
import { formatShape, type Shape } from '../shape.js';

export function expectF32(t: Tensor, where: string, what = 'input'): void {
  t.assertAlive(where);
  if (t.dtype !== 'f32')
    throw new TypeError(`${where}: ${what} must be f32, got ${t.dtype} (${t.describe()}); convert with cast()`);
}

export function expectI32(t: Tensor, where: string, what: string): void {
  t.assertAlive(where);
  if (t.dtype !== 'i32') throw new TypeError(`${where}: ${what} must be i32, got ${t.dtype} (${t.describe()})`);
}

export function expectShape(t: Tensor, shape: Shape, where: string, what: string): void {
  if (t.shape.length !== shape.length || t.shape.some((d, i) => d !== shape[i]))
    throw new RangeError(`${where}: ${what} must have shape ${formatShape(shape)}, got ${formatShape(t.shape)}`);
}

/** A contiguous f32 copy of t's values (always a new tensor, owned by the caller). */
export function copyContiguous(t: Tensor): Tensor {
  const out = empty(t.shape, t.dtype);
  if (t.dtype === 'f32') kernels().stridedCopy(t.f32(), t.offset, t.shape, t.strides, out.f32());
  else out.storage.data.set(t.toArray());
  return out;
}

/** t itself when contiguous, else a contiguous copy (which the caller must dispose: compare with t). */
export function contiguousOrCopy(t: Tensor): Tensor {
  return t.isContiguous ? t : copyContiguous(t);
}

/**
 * The f32 buffer of a contiguous tensor, as a subarray starting at its offset (kernels take
 * contiguous buffers from index 0).
 */
export function buf(t: Tensor, where = 'kernel'): Float32Array {
  const data = t.f32(where);
  if (t.offset === 0) return data;
  return data.subarray(t.offset, t.offset + t.size);
}

export function ibuf(t: Tensor, where = 'kernel'): Int32Array {
  const data = t.i32(where);
  if (t.offset === 0) return data;
  return data.subarray(t.offset, t.offset + t.size);
}

/** Runs fn on a contiguous version of t, disposing a temporary copy afterwards. */
export function withContiguous<T>(t: Tensor, fn: (c: Tensor) => T): T {
  const c = contiguousOrCopy(t);
  try {
    return fn(c);
  } finally {
    if (c !== t) c.dispose();
  }
}
