import type { Kernels } from '../kernels.js';

export const nnKernels: Pick<
  Kernels,
  | 'embedding'
  | 'embeddingBackward'
  | 'rmsnorm'
  | 'rmsnormBackward'
  | 'rope'
  | 'swiglu'
  | 'swigluBackward'
  | 'softmax'
  | 'softmaxBackward'
  | 'logSoftmax'
  | 'logSoftmaxBackward'
  | 'gatherRows'
  | 'gatherRowsBackward'
> = {
  embedding() {
    throw new Error('ref.embedding: not written yet');
  },
  embeddingBackward() {
    throw new Error('ref.embeddingBackward: not written yet');
  },
  rmsnorm() {
    throw new Error('ref.rmsnorm: not written yet');
  },
  rmsnormBackward() {
    throw new Error('ref.rmsnormBackward: not written yet');
  },
  rope() {
    throw new Error('ref.rope: not written yet');
  },
  swiglu() {
    throw new Error('ref.swiglu: not written yet');
  },
  swigluBackward() {
    throw new Error('ref.swigluBackward: not written yet');
  },
  softmax() {
    throw new Error('ref.softmax: not written yet');
  },
  softmaxBackward() {
    throw new Error('ref.softmaxBackward: not written yet');
  },
  logSoftmax() {
    throw new Error('ref.logSoftmax: not written yet');
  },
  logSoftmaxBackward() {
    throw new Error('ref.logSoftmaxBackward: not written yet');
  },
  gatherRows() {
    throw new Error('ref.gatherRows: not written yet');
  },
  gatherRowsBackward() {
    throw new Error('ref.gatherRowsBackward: not written yet');
  },
};
