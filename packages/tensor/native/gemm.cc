// Placeholder GEMM (naive loops); replaced by the packed SIMD kernel.
#include "gemm.h"

#include <vector>

#include "napi_util.h"
#include "threadpool.h"

namespace tensor_native {

void sgemm_serial(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                  const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      float s = 0;
      for (int64_t l = 0; l < k; l++) s += (ta ? a[l * lda + i] : a[i * lda + l]) * (tb ? b[j * ldb + l] : b[l * ldb + j]);
      float* cij = &c[i * ldc + j];
      *cij = beta == 0.0f ? alpha * s : alpha * s + beta * *cij;
    }
}

void sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
           int64_t ldb, float beta, float* c, int64_t ldc) {
  sgemm_serial(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

static napi_value gemm_binding(const Args& args) {
  int64_t batch = args.i64(0);
  bool ta = args.flag(1), tb = args.flag(2);
  int64_t m = args.i64(3), n = args.i64(4), k = args.i64(5);
  float alpha = static_cast<float>(args.num(6));
  float* a = args.f32(7);
  int64_t a_off = args.i64(8), lda = args.i64(9), sa = args.i64(10);
  float* b = args.f32(11);
  int64_t b_off = args.i64(12), ldb = args.i64(13), sb = args.i64(14);
  float beta = static_cast<float>(args.num(15));
  float* c = args.f32(16);
  int64_t c_off = args.i64(17), ldc = args.i64(18), sc = args.i64(19);
  for (int64_t p = 0; p < batch; p++)
    sgemm(ta, tb, m, n, k, alpha, a + a_off + p * sa, lda, b + b_off + p * sb, ldb, beta, c + c_off + p * sc, ldc);
  return args.undefined();
}

void register_gemm(Registry& r) { r.add("gemm", gemm_binding); }

}  // namespace tensor_native
