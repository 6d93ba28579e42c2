import type { Kernels } from '../kernels.js';

export const gemmKernels: Pick<Kernels, 'gemm'> = {
  gemm() {
    throw new Error('ref.gemm: not written yet');
  },
};
