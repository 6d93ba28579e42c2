import type { F32, I32, Kernels, U16 } from '../kernels.js';

const MAX_RANK = 8;

/** The raw bits of a Float32Array (reading bits keeps NaN payloads that a JS number may not). */
function bitsOf(a: F32): Uint32Array {
  return new Uint32Array(a.buffer, a.byteOffset, a.length);
}

export const dataKernels: Pick<Kernels, 'fill' | 'stridedCopy' | 'f32ToBf16' | 'bf16ToF32' | 'i32ToF32'> = {
  fill(dst: F32, n: number, value: number): void {
    for (let i = 0; i < n; i++) dst[i] = value;
  },

  stridedCopy(src: F32, offset: number, shape: readonly number[], strides: readonly number[], dst: F32): void {
    const rank = shape.length;
    if (rank > MAX_RANK) throw new RangeError(`ref.stridedCopy: rank ${rank} exceeds ${MAX_RANK}`);
    if (strides.length !== rank) throw new RangeError(`ref.stridedCopy: ${strides.length} strides for rank ${rank}`);
    let total = 1;
    for (let d = 0; d < rank; d++) total *= shape[d]!;
    // Odometer over the index tuple in row-major order; `at` tracks offset + Σ i_d·strides[d].
    const index = new Array<number>(rank).fill(0);
    let at = offset;
    for (let flat = 0; flat < total; flat++) {
      dst[flat] = src[at]!;
      for (let d = rank - 1; d >= 0; d--) {
        index[d]!++;
        at += strides[d]!;
        if (index[d]! < shape[d]!) break;
        at -= index[d]! * strides[d]!;
        index[d] = 0;
      }
    }
  },

  f32ToBf16(src: F32, dst: U16, n: number): void {
    const bits = bitsOf(src);
    for (let i = 0; i < n; i++) {
      const b = bits[i]!;
      if ((b & 0x7fffffff) > 0x7f800000) {
        dst[i] = (b >>> 16) | 0x0040; // NaN: keep sign and top payload bits, set the quiet bit
      } else {
        // Round to nearest, ties to even: add 0x7fff plus the lowest kept bit, then truncate.
        // A carry out of the mantissa bumps the exponent, which is right (up to +inf).
        dst[i] = (b + 0x7fff + ((b >>> 16) & 1)) >>> 16;
      }
    }
  },

  bf16ToF32(src: U16, dst: F32, n: number): void {
    const bits = bitsOf(dst);
    for (let i = 0; i < n; i++) bits[i] = src[i]! << 16;
  },

  i32ToF32(src: I32, dst: F32, n: number): void {
    for (let i = 0; i < n; i++) dst[i] = src[i]!; // the store rounds to nearest even
  },
};
