// Single-precision GEMM used by every kernel that multiplies matrices (see Kernels.gemm in
// src/backend/kernels.ts for the exact contract).
#pragma once
#include <cstdint>

namespace tensor_native {

// Row-major: op(A) is m×k, op(B) k×n, C m×n; A(i, l) = a[trans_a ? l·lda + i : i·lda + l], likewise B,
// C(i, j) = c[i·ldc + j]. beta = 0 never reads C (NaN there is ignored); k = 0 gives C = beta·C.
// sgemm and sgemm_serial give the same bits for the same inputs, whatever the pool's thread count.

// C = alpha · op(A) · op(B) + beta · C for one matrix; multithreaded over the pool. Must not be called
// from inside a pool task (the pool does not nest): use sgemm_serial there.
void sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
           const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

// Single-threaded variant, for callers that already run inside a pool task.
void sgemm_serial(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                  int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

}  // namespace tensor_native
