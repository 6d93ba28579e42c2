// Single-precision GEMM used by every kernel that multiplies matrices (see Kernels.gemm in
// src/backend/kernels.ts for the exact contract).
#pragma once
#include <cstdint>

namespace tensor_native {

// C = alpha · op(A) · op(B) + beta · C for one matrix; multithreaded over the pool.
void sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
           const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

// Single-threaded variant, for callers that already run inside a pool task.
void sgemm_serial(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                  int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

}  // namespace tensor_native
