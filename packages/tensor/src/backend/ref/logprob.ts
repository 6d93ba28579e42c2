import type { Kernels } from '../kernels.js';

export const logprobKernels: Pick<Kernels, 'tokenLogprobs' | 'tokenLogprobsBackward'> = {
  tokenLogprobs() {
    throw new Error('ref.tokenLogprobs: not written yet');
  },
  tokenLogprobsBackward() {
    throw new Error('ref.tokenLogprobsBackward: not written yet');
  },
};
