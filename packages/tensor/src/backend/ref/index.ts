// The reference backend: every kernel in plain, obviously-correct TypeScript. Slow by design; it is
// the oracle the native backend is tested against, and finite differences check it in turn.
import type { Kernels } from '../kernels.js';
import { dataKernels } from './data.js';
import { elementwiseKernels } from './elementwise.js';
import { gemmKernels } from './gemm.js';
import { nnKernels } from './nn.js';
import { attentionKernels } from './attention.js';
import { attentionCachedKernels } from './attention-cached.js';
import { logprobKernels } from './logprob.js';
import { optimKernels } from './optim.js';

export const refKernels: Kernels = {
  name: 'ref',
  threads: () => 1,
  setThreads: () => undefined,
  ...dataKernels,
  ...elementwiseKernels,
  ...gemmKernels,
  ...nnKernels,
  ...attentionKernels,
  ...attentionCachedKernels,
  ...logprobKernels,
  ...optimKernels,
};
