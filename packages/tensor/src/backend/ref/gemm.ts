import type { Kernels } from '../kernels.js';

// The oracle GEMM: the contract's index formulas as a plain triple loop. Each dot product is
// accumulated in float64 and rounded to float32 once, when C is written.
export const gemmKernels: Pick<Kernels, 'gemm'> = {
  gemm(
    batch,
    transA,
    transB,
    m,
    n,
    k,
    alpha,
    a,
    aOffset,
    lda,
    aBatchStride,
    b,
    bOffset,
    ldb,
    bBatchStride,
    beta,
    c,
    cOffset,
    ldc,
    cBatchStride,
  ) {
    // Strides of op(A) (row i, column l) and op(B) (row l, column j) in their buffers.
    const aRowStride = transA ? 1 : lda;
    const aColStride = transA ? lda : 1;
    const bRowStride = transB ? 1 : ldb;
    const bColStride = transB ? ldb : 1;
    for (let p = 0; p < batch; p++) {
      const aBase = aOffset + p * aBatchStride;
      const bBase = bOffset + p * bBatchStride;
      const cBase = cOffset + p * cBatchStride;
      for (let i = 0; i < m; i++) {
        for (let j = 0; j < n; j++) {
          let sum = 0;
          for (let l = 0; l < k; l++) {
            sum += a[aBase + i * aRowStride + l * aColStride]! * b[bBase + l * bRowStride + j * bColStride]!;
          }
          const at = cBase + i * ldc + j;
          // beta = 0 must not read C: 0·NaN would leak old garbage into the result.
          c[at] = beta === 0 ? alpha * sum : alpha * sum + beta * c[at]!;
        }
      }
    }
  },
};
