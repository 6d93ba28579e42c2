import type { Kernels } from '../kernels.js';

export const optimKernels: Pick<Kernels, 'adamw' | 'sgd'> = {
  adamw() {
    throw new Error('ref.adamw: not written yet');
  },
  sgd() {
    throw new Error('ref.sgd: not written yet');
  },
};
