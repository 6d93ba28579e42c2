// Attention of new tokens against a key/value cache, for inference (see Kernels.attentionCached in
// src/backend/kernels.ts). Token i attends keys 0..positions[i] of cache slot slots[i].
//
// Threads over (token, kv head) pairs: a task reads that kv head's keys and values once for the
// query heads sharing them. Each output row is computed by one task in a fixed order, so results do
// not depend on the thread count or on which other tokens are in the call (batched decoding gives
// the same bits as decoding one sequence alone).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "attention_simd.h"
#include "napi_util.h"
#include "threadpool.h"

namespace tensor_native {
namespace {

using namespace simd;

constexpr double SERIAL_WORK = 1 << 16;  // below this many multiply-adds, run on the calling thread

struct CachedProblem {
  const float *q, *k_cache, *v_cache;
  const int32_t *slots, *positions;
  int64_t tokens, heads, kv_heads, dim, num_slots, capacity;
  float scale;
  float* out;
};

void attend_group(const CachedProblem& p, int64_t token, int64_t kvh, std::vector<float>& scores) {
  const int64_t group = p.heads / p.kv_heads, D = p.dim;
  const int64_t slot = p.slots[token], last = p.positions[token];
  const int64_t keys = last + 1;
  if (static_cast<int64_t>(scores.size()) < keys) scores.resize(keys);
  const float* k_base = p.k_cache + (slot * p.capacity * p.kv_heads + kvh) * D;
  const float* v_base = p.v_cache + (slot * p.capacity * p.kv_heads + kvh) * D;
  const int64_t stride = p.kv_heads * D;  // between consecutive positions of one kv head
  for (int64_t g = 0; g < group; g++) {
    const int64_t h = kvh * group + g;
    const float* query = p.q + (token * p.heads + h) * D;
    float* out = p.out + (token * p.heads + h) * D;
    for (int64_t s = 0; s < keys; s++) scores[s] = dot(query, k_base + s * stride, D);
    // The training kernel's softmax: max(S·scale) from max or min of S (exact), one vectorised exp.
    const float shift = p.scale >= 0 ? p.scale * max_of(scores.data(), keys) : p.scale * min_of(scores.data(), keys);
    const float inv = 1.0f / exp_scaled_inplace(scores.data(), keys, p.scale, shift);
    // out = Σ_s w_s · v_s with D-wide vectors, keys in order.
    int64_t d = 0;
    for (; d + W <= D; d += W) {
      vf acc = vzero();
      for (int64_t s = 0; s < keys; s++) acc = vfma(vset1(scores[s]), vload(v_base + s * stride + d), acc);
      vstore(out + d, vmul(acc, vset1(inv)));
    }
    if (d < D) {
      vf acc = vzero();
      for (int64_t s = 0; s < keys; s++) acc = vfma(vset1(scores[s]), vload_first(v_base + s * stride + d, D - d), acc);
      vstore_first(out + d, vmul(acc, vset1(inv)), D - d);
    }
  }
}

napi_value attention_cached_binding(const Args& args) {
  const int64_t N = args.i64(5), H = args.i64(6), KV = args.i64(7), D = args.i64(8);
  const int64_t S = args.i64(9), C = args.i64(10);
  if (KV < 1 || H % KV != 0)
    throw std::invalid_argument("heads (" + std::to_string(H) + ") must be a multiple of kvHeads (" +
                                std::to_string(KV) + ")");
  CachedProblem p{args.f32(0, N * H * D),
                  args.f32(1, S * C * KV * D),
                  args.f32(2, S * C * KV * D),
                  args.i32(3, N),
                  args.i32(4, N),
                  N,
                  H,
                  KV,
                  D,
                  S,
                  C,
                  static_cast<float>(args.num(11)),
                  args.f32(12, N * H * D)};
  double work = 0;
  for (int64_t i = 0; i < N; i++) {
    if (p.slots[i] < 0 || p.slots[i] >= S)
      throw std::out_of_range("token " + std::to_string(i) + " has slot " + std::to_string(p.slots[i]) +
                              ", outside [0, " + std::to_string(S) + ")");
    if (p.positions[i] < 0 || p.positions[i] >= C)
      throw std::out_of_range("token " + std::to_string(i) + " has position " + std::to_string(p.positions[i]) +
                              ", outside [0, " + std::to_string(C) + ")");
    work += 2.0 * (p.positions[i] + 1) * D * H;
  }
  const int64_t tasks = N * KV;
  if (pool::threads() == 1 || tasks <= 1 || work < SERIAL_WORK) {
    std::vector<float> scores;
    for (int64_t t = 0; t < tasks; t++) attend_group(p, t / KV, t % KV, scores);
  } else {
    pool::run_all([&](int tid, int nthreads) {
      thread_local std::vector<float> scores;
      for (int64_t t = tid; t < tasks; t += nthreads) attend_group(p, t / KV, t % KV, scores);
    });
  }
  return args.undefined();
}

}  // namespace

void register_attention_cached(Registry& r) { r.add("attentionCached", attention_cached_binding); }

}  // namespace tensor_native
