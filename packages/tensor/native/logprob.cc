// Fused LM head + target log-probabilities + entropy with temperature (see Kernels.tokenLogprobs in
// src/backend/kernels.ts). `chunk` rows of logits exist at a time: each chunk is one threaded sgemm,
// then a parallel pass over its rows (vectorised exp), then, in the backward, two more sgemms.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "attention_simd.h"
#include "gemm.h"
#include "napi_util.h"
#include "threadpool.h"

namespace tensor_native {
namespace {

using namespace simd;

constexpr int64_t ROW_PASS_GRAIN = 16384;  // logits per thread below which the row pass stays serial

struct Shape {
  int64_t rows, dim, vocab, chunk;
};

Shape check_shape(const Args& args, const int32_t* targets) {
  Shape s{args.i64(3), args.i64(4), args.i64(5), args.i64(7)};
  if (s.rows < 0 || s.dim < 0 || s.vocab < 0)
    throw std::invalid_argument("rows, dim and vocab must be non-negative");
  if (s.chunk < 1) throw std::invalid_argument("chunk must be at least 1, got " + std::to_string(s.chunk));
  for (int64_t r = 0; r < s.rows; r++)
    if (targets[r] < 0 || targets[r] >= s.vocab)
      throw std::invalid_argument("target " + std::to_string(targets[r]) + " at row " + std::to_string(r) +
                                  " is outside [0, vocab = " + std::to_string(s.vocab) + ")");
  return s;
}

// Per-calling-thread logits buffer of one chunk.
float* chunk_buffer(int64_t n) {
  thread_local std::vector<float> buffer;
  if (static_cast<int64_t>(buffer.size()) < n + 1) buffer.resize(n + 1);
  return buffer.data();
}

struct RowStats {
  float lse, entropy;
};

// lse and entropy of softmax(z) for one row: with m = max z, s1 = Σ e^(z−m), s2 = Σ e^(z−m)·(z−m),
// lse = m + log s1 and entropy = log s1 − s2/s1 (no cancellation against m).
RowStats row_stats(const float* z, int64_t n) {
  const float max = max_of(z, n);
  const vf vmax_neg = vset1(-max);
  vf s1 = vzero(), s2 = vzero();
  int64_t j = 0;
  for (; j + W <= n; j += W) {
    vf x = vadd(vload(z + j), vmax_neg);
    vf e = vexp(x);
    s1 = vadd(s1, e);
    s2 = vfma(e, x, s2);
  }
  if (j < n) {
    vf x = vadd(vload_first(z + j, n - j), vmax_neg);
    vf e = vkeep_first(vexp(x), n - j);  // padding lanes add nothing to either sum
    s1 = vadd(s1, e);
    s2 = vfma(e, x, s2);
  }
  const float sum = hsum(s1), log_sum = std::log(sum);
  return {max + log_sum, log_sum - hsum(s2) / sum};
}

// dz[j] = invT · (dL·(1[j = target] − p_j) − dE·p_j·(z_j − mean)), p_j = exp(z_j − lse), mean = Σ p z
// = lse − entropy; dz overwrites z.
void row_gradient(float* z, int64_t n, int32_t target, float lse, float entropy, float d_logprob, float d_entropy,
                  float inv_temperature) {
  const float mean = lse - entropy;
  const vf v_lse = vset1(-lse), v_mean = vset1(-mean), v_dl = vset1(d_logprob), v_de = vset1(d_entropy);
  const vf v_neg_scale = vset1(-inv_temperature);
  auto gradient = [&](vf zj) {
    vf p = vexp(vadd(zj, v_lse));
    vf weight = vfma(v_de, vadd(zj, v_mean), v_dl);  // dL + dE·(z − mean)
    return vmul(vmul(p, weight), v_neg_scale);
  };
  int64_t j = 0;
  for (; j + W <= n; j += W) vstore(z + j, gradient(vload(z + j)));
  if (j < n) vstore_first(z + j, gradient(vload_first(z + j, n - j)), n - j);
  z[target] += d_logprob * inv_temperature;
}

napi_value token_logprobs_binding(const Args& args) {
  const int32_t* targets = args.i32(2, std::max<int64_t>(0, args.i64(3)));
  const Shape s = check_shape(args, targets);
  const float* hidden = args.f32(0, s.rows * s.dim);
  const float* weight = args.f32(1, s.vocab * s.dim);
  const float inv_temperature = static_cast<float>(args.num(6));
  float* logprobs = args.f32(8, s.rows);
  float* entropy = args.f32(9, s.rows);
  float* lse = args.f32(10, s.rows);
  if (s.rows == 0) return args.undefined();
  const int64_t chunk = std::min(s.chunk, s.rows);
  float* logits = chunk_buffer(chunk * s.vocab);
  for (int64_t r0 = 0; r0 < s.rows; r0 += chunk) {
    const int64_t n = std::min(chunk, s.rows - r0);
    sgemm(false, true, n, s.vocab, s.dim, inv_temperature, hidden + r0 * s.dim, s.dim, weight, s.dim, 0.0f, logits,
          s.vocab);
    pool::parallel_for(n, std::max<int64_t>(1, ROW_PASS_GRAIN / std::max<int64_t>(1, s.vocab)),
                       [&](int64_t begin, int64_t end) {
                         for (int64_t i = begin; i < end; i++) {
                           const float* z = logits + i * s.vocab;
                           const RowStats st = row_stats(z, s.vocab);
                           lse[r0 + i] = st.lse;
                           entropy[r0 + i] = st.entropy;
                           logprobs[r0 + i] = z[targets[r0 + i]] - st.lse;
                         }
                       });
  }
  return args.undefined();
}

napi_value token_logprobs_backward_binding(const Args& args) {
  const int32_t* targets = args.i32(2, std::max<int64_t>(0, args.i64(3)));
  const Shape s = check_shape(args, targets);
  const float* hidden = args.f32(0, s.rows * s.dim);
  const float* weight = args.f32(1, s.vocab * s.dim);
  const float inv_temperature = static_cast<float>(args.num(6));
  const float* lse = args.f32(8, s.rows);
  const float* entropy = args.f32(9, s.rows);
  const float* d_logprobs = args.f32(10, s.rows);
  const float* d_entropy = args.f32_or_null(11, s.rows);
  float* d_hidden = args.f32(12, s.rows * s.dim);
  float* d_weight = args.f32(13, s.vocab * s.dim);
  const bool accumulate = args.flag(14);
  if (s.rows == 0) return args.undefined();
  const int64_t chunk = std::min(s.chunk, s.rows);
  float* logits = chunk_buffer(chunk * s.vocab);
  for (int64_t r0 = 0; r0 < s.rows; r0 += chunk) {
    const int64_t n = std::min(chunk, s.rows - r0);
    sgemm(false, true, n, s.vocab, s.dim, inv_temperature, hidden + r0 * s.dim, s.dim, weight, s.dim, 0.0f, logits,
          s.vocab);
    pool::parallel_for(n, std::max<int64_t>(1, ROW_PASS_GRAIN / std::max<int64_t>(1, s.vocab)),
                       [&](int64_t begin, int64_t end) {
                         for (int64_t i = begin; i < end; i++) {
                           const int64_t r = r0 + i;
                           row_gradient(logits + i * s.vocab, s.vocab, targets[r], lse[r], entropy[r], d_logprobs[r],
                                        d_entropy ? d_entropy[r] : 0.0f, inv_temperature);
                         }
                       });
    // dHidden_chunk (+)= dZ·W; dW += dZᵀ·hidden_chunk.
    sgemm(false, false, n, s.dim, s.vocab, 1.0f, logits, s.vocab, weight, s.dim, accumulate ? 1.0f : 0.0f,
          d_hidden + r0 * s.dim, s.dim);
    sgemm(true, false, s.vocab, s.dim, n, 1.0f, logits, s.vocab, hidden + r0 * s.dim, s.dim, 1.0f, d_weight, s.dim);
  }
  return args.undefined();
}

}  // namespace

void register_logprob(Registry& r) {
  r.add("tokenLogprobs", token_logprobs_binding);
  r.add("tokenLogprobsBackward", token_logprobs_backward_binding);
}

}  // namespace tensor_native
