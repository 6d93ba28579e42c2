// Optimizer steps, in place, one fused pass over the parameter tensor (see Kernels.adamw / .sgd in
// src/backend/kernels.ts). Lane-independent f32 arithmetic (tails through padded buffers): the
// result does not depend on the thread count or on where the pool splits the range.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "elementwise_simd.h"
#include "napi_util.h"
#include "threadpool.h"

namespace tensor_native {
namespace {

using simd::kWidth;
using simd::VF;

constexpr int64_t kGrain = 1 << 14;

int64_t count_arg(const Args& args, size_t i) {
  int64_t n = args.i64(i);
  if (n < 0) throw ArgError(std::string(args.name) + ": argument " + std::to_string(i) + " must be ≥ 0");
  return n;
}

// Runs step(p, g, s1, s2) over [begin, end) in vectors, the tail through padded stack buffers so
// that every element goes through the same vector arithmetic. s2 may be null (SGD).
template <class Step>
void update_range(float* p, const float* g, float* s1, float* s2, int64_t begin, int64_t end, Step step) {
  int64_t i = begin;
  for (; i + kWidth <= end; i += kWidth) step(p + i, g + i, s1 ? s1 + i : nullptr, s2 ? s2 + i : nullptr);
  if (i < end) {
    const size_t rest = static_cast<size_t>(end - i) * sizeof(float);
    float pb[kWidth] = {}, gb[kWidth] = {}, b1[kWidth] = {}, b2[kWidth] = {};
    std::memcpy(pb, p + i, rest);
    std::memcpy(gb, g + i, rest);
    if (s1) std::memcpy(b1, s1 + i, rest);
    if (s2) std::memcpy(b2, s2 + i, rest);
    step(pb, gb, s1 ? b1 : nullptr, s2 ? b2 : nullptr);
    std::memcpy(p + i, pb, rest);
    if (s1) std::memcpy(s1 + i, b1, rest);
    if (s2) std::memcpy(s2 + i, b2, rest);
  }
}

// m = b1·m + (1−b1)·g;  v = b2·v + (1−b2)·g²;  p = p·(1 − lr·wd) − (lr/bc1)·m / (sqrt(v/bc2) + eps).
// Scalar factors are formed in double once and rounded to f32.
napi_value adamw_binding(const Args& args) {
  const int64_t n = count_arg(args, 4);
  float* p = args.f32(0, n);
  const float* g = args.f32(1, n);
  float* m = args.f32(2, n);
  float* v = args.f32(3, n);
  const double lr = args.num(5), beta1 = args.num(6), beta2 = args.num(7), eps = args.num(8), wd = args.num(9);
  const double bc1 = args.num(10), bc2 = args.num(11);
  const VF b1 = simd::splat(static_cast<float>(beta1)), one_minus_b1 = simd::splat(static_cast<float>(1.0 - beta1));
  const VF b2 = simd::splat(static_cast<float>(beta2)), one_minus_b2 = simd::splat(static_cast<float>(1.0 - beta2));
  const VF decay = simd::splat(static_cast<float>(1.0 - lr * wd));
  const VF step_size = simd::splat(static_cast<float>(lr / bc1));
  const VF inv_bc2 = simd::splat(static_cast<float>(1.0 / bc2));
  const VF epsilon = simd::splat(static_cast<float>(eps));
  auto step = [&](float* pp, const float* gp, float* mp, float* vp) {
    const VF gv = simd::load(gp);
    const VF mv = b1 * simd::load(mp) + one_minus_b1 * gv;
    const VF vv = b2 * simd::load(vp) + one_minus_b2 * (gv * gv);
    simd::store(mp, mv);
    simd::store(vp, vv);
    const VF denom = simd::vsqrt(vv * inv_bc2) + epsilon;
    simd::store(pp, simd::load(pp) * decay - step_size * (mv / denom));
  };
  pool::parallel_for(n, kGrain, [&](int64_t begin, int64_t end) { update_range(p, g, m, v, begin, end, step); });
  return args.undefined();
}

// g' = g + wd·p;  buf = first ? g' : momentum·buf + g';  d = nesterov ? g' + momentum·buf : buf;
// p −= lr·d. With momentum = 0 the buffer is neither read nor written (it may be empty) and d = g'.
napi_value sgd_binding(const Args& args) {
  const int64_t n = count_arg(args, 3);
  const double lr = args.num(4), momentum = args.num(5), wd = args.num(6);
  const bool nesterov = args.flag(7), first = args.flag(8);
  float* p = args.f32(0, n);
  const float* g = args.f32(1, n);
  float* buf = momentum != 0.0 ? args.f32(2, n) : nullptr;
  const VF lr_v = simd::splat(static_cast<float>(lr)), mom = simd::splat(static_cast<float>(momentum));
  const VF wd_v = simd::splat(static_cast<float>(wd));
  const bool decay = wd != 0.0;  // as PyTorch: no wd·p term at all when wd = 0 (keeps inf/NaN params out of g')
  auto step = [&](float* pp, const float* gp, float* bp, float*) {
    const VF pv = simd::load(pp);
    VF gv = simd::load(gp);
    if (decay) gv = gv + wd_v * pv;
    VF d = gv;
    if (bp) {
      const VF bv = first ? gv : mom * simd::load(bp) + gv;
      simd::store(bp, bv);
      d = nesterov ? gv + mom * bv : bv;
    }
    simd::store(pp, pv - lr_v * d);
  };
  pool::parallel_for(n, kGrain,
                     [&](int64_t begin, int64_t end) { update_range(p, g, buf, nullptr, begin, end, step); });
  return args.undefined();
}

}  // namespace

void register_optim(Registry& r) {
  r.add("adamw", adamw_binding);
  r.add("sgd", sgd_binding);
}

}  // namespace tensor_native
