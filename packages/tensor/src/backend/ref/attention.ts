import type { Kernels } from '../kernels.js';

export const attentionKernels: Pick<Kernels, 'attention' | 'attentionBackward'> = {
  attention() {
    throw new Error('ref.attention: not written yet');
  },
  attentionBackward() {
    throw new Error('ref.attentionBackward: not written yet');
  },
};
