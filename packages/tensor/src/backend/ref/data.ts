import type { Kernels } from '../kernels.js';

export const dataKernels: Pick<Kernels, 'fill' | 'stridedCopy' | 'f32ToBf16' | 'bf16ToF32' | 'i32ToF32'> = {
  fill() {
    throw new Error('ref.fill: not written yet');
  },
  stridedCopy() {
    throw new Error('ref.stridedCopy: not written yet');
  },
  f32ToBf16() {
    throw new Error('ref.f32ToBf16: not written yet');
  },
  bf16ToF32() {
    throw new Error('ref.bf16ToF32: not written yet');
  },
  i32ToF32() {
    throw new Error('ref.i32ToF32: not written yet');
  },
};
