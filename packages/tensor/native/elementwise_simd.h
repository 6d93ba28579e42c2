// A minimal float SIMD layer (AVX-512, AVX2, or one scalar lane) and vectorised exp / log / tanh /
// sigmoid / silu written once on top of it. Every operation is lane-wise (add, mul, div, sqrt,
// compare, select, bit ops), so a lane's result never depends on its neighbours or on where a
// range starts: callers may split work anywhere, and tails run through padded buffers with the
// same code. GCC contracts a·b + c into FMA where the target has it (its C++ default), the same
// way wherever these inline functions land, so one build is deterministic; AVX-512, AVX2 and
// scalar builds may differ from each other in the last bit.
#pragma once
#include <cstdint>
#include <cstring>

#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

namespace tensor_native::simd {

#if defined(__AVX512F__)

constexpr int kWidth = 16;
// GCC 12's plain forms of several AVX-512 intrinsics pass an `undefined` source that trips
// -Wmaybe-uninitialized when inlined; the all-lanes masked forms compile to the same instructions.
constexpr __mmask16 kAll = 0xffff;
struct VF {
  __m512 v;
};
struct VI {
  __m512i v;
};
struct VM {
  __mmask16 m;
};
inline VF load(const float* p) { return {_mm512_loadu_ps(p)}; }
inline void store(float* p, VF a) { _mm512_storeu_ps(p, a.v); }
inline VF splat(float x) { return {_mm512_set1_ps(x)}; }
inline VI splat_i(int32_t x) { return {_mm512_set1_epi32(x)}; }
inline VF operator+(VF a, VF b) { return {_mm512_add_ps(a.v, b.v)}; }
inline VF operator-(VF a, VF b) { return {_mm512_sub_ps(a.v, b.v)}; }
inline VF operator*(VF a, VF b) { return {_mm512_mul_ps(a.v, b.v)}; }
inline VF operator/(VF a, VF b) { return {_mm512_div_ps(a.v, b.v)}; }
inline VF vsqrt(VF a) { return {_mm512_mask_sqrt_ps(a.v, kAll, a.v)}; }
// min/max with the x86 rule: the second operand wins when either is NaN or both are zero.
inline VF vmin(VF a, VF b) { return {_mm512_mask_min_ps(a.v, kAll, a.v, b.v)}; }
inline VF vmax(VF a, VF b) { return {_mm512_mask_max_ps(a.v, kAll, a.v, b.v)}; }
inline VM operator<(VF a, VF b) { return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_LT_OQ)}; }
inline VM operator>(VF a, VF b) { return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_GT_OQ)}; }
inline VM operator==(VF a, VF b) { return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_EQ_OQ)}; }
inline VM is_nan(VF a) { return {_mm512_cmp_ps_mask(a.v, a.v, _CMP_UNORD_Q)}; }
inline VM operator|(VM a, VM b) { return {static_cast<__mmask16>(a.m | b.m)}; }
// mask ? a : b, lane by lane.
inline VF select(VM m, VF a, VF b) { return {_mm512_mask_blend_ps(m.m, b.v, a.v)}; }
inline VI bits(VF a) { return {_mm512_castps_si512(a.v)}; }
inline VF from_bits(VI a) { return {_mm512_castsi512_ps(a.v)}; }
inline VI operator+(VI a, VI b) { return {_mm512_add_epi32(a.v, b.v)}; }
inline VI operator-(VI a, VI b) { return {_mm512_sub_epi32(a.v, b.v)}; }
inline VI operator&(VI a, VI b) { return {_mm512_and_si512(a.v, b.v)}; }
inline VI operator|(VI a, VI b) { return {_mm512_or_si512(a.v, b.v)}; }
inline VI operator^(VI a, VI b) { return {_mm512_xor_si512(a.v, b.v)}; }
template <int k>
inline VI shl(VI a) {
  return {_mm512_mask_slli_epi32(a.v, kAll, a.v, k)};
}
template <int k>
inline VI shr_logical(VI a) {
  return {_mm512_mask_srli_epi32(a.v, kAll, a.v, k)};
}
template <int k>
inline VI shr_arith(VI a) {
  return {_mm512_mask_srai_epi32(a.v, kAll, a.v, k)};
}
// Float holding an exact integer (|x| < 2^31) → int32.
inline VI to_int_exact(VF a) { return {_mm512_mask_cvttps_epi32(_mm512_castps_si512(a.v), kAll, a.v)}; }
inline VF to_float(VI a) { return {_mm512_mask_cvtepi32_ps(_mm512_castsi512_ps(a.v), kAll, a.v)}; }

#elif defined(__AVX2__)

constexpr int kWidth = 8;
struct VF {
  __m256 v;
};
struct VI {
  __m256i v;
};
struct VM {
  __m256 m;
};
inline VF load(const float* p) { return {_mm256_loadu_ps(p)}; }
inline void store(float* p, VF a) { _mm256_storeu_ps(p, a.v); }
inline VF splat(float x) { return {_mm256_set1_ps(x)}; }
inline VI splat_i(int32_t x) { return {_mm256_set1_epi32(x)}; }
inline VF operator+(VF a, VF b) { return {_mm256_add_ps(a.v, b.v)}; }
inline VF operator-(VF a, VF b) { return {_mm256_sub_ps(a.v, b.v)}; }
inline VF operator*(VF a, VF b) { return {_mm256_mul_ps(a.v, b.v)}; }
inline VF operator/(VF a, VF b) { return {_mm256_div_ps(a.v, b.v)}; }
inline VF vsqrt(VF a) { return {_mm256_sqrt_ps(a.v)}; }
inline VF vmin(VF a, VF b) { return {_mm256_min_ps(a.v, b.v)}; }
inline VF vmax(VF a, VF b) { return {_mm256_max_ps(a.v, b.v)}; }
inline VM operator<(VF a, VF b) { return {_mm256_cmp_ps(a.v, b.v, _CMP_LT_OQ)}; }
inline VM operator>(VF a, VF b) { return {_mm256_cmp_ps(a.v, b.v, _CMP_GT_OQ)}; }
inline VM operator==(VF a, VF b) { return {_mm256_cmp_ps(a.v, b.v, _CMP_EQ_OQ)}; }
inline VM is_nan(VF a) { return {_mm256_cmp_ps(a.v, a.v, _CMP_UNORD_Q)}; }
inline VM operator|(VM a, VM b) { return {_mm256_or_ps(a.m, b.m)}; }
inline VF select(VM m, VF a, VF b) { return {_mm256_blendv_ps(b.v, a.v, m.m)}; }
inline VI bits(VF a) { return {_mm256_castps_si256(a.v)}; }
inline VF from_bits(VI a) { return {_mm256_castsi256_ps(a.v)}; }
inline VI operator+(VI a, VI b) { return {_mm256_add_epi32(a.v, b.v)}; }
inline VI operator-(VI a, VI b) { return {_mm256_sub_epi32(a.v, b.v)}; }
inline VI operator&(VI a, VI b) { return {_mm256_and_si256(a.v, b.v)}; }
inline VI operator|(VI a, VI b) { return {_mm256_or_si256(a.v, b.v)}; }
inline VI operator^(VI a, VI b) { return {_mm256_xor_si256(a.v, b.v)}; }
template <int k>
inline VI shl(VI a) {
  return {_mm256_slli_epi32(a.v, k)};
}
template <int k>
inline VI shr_logical(VI a) {
  return {_mm256_srli_epi32(a.v, k)};
}
template <int k>
inline VI shr_arith(VI a) {
  return {_mm256_srai_epi32(a.v, k)};
}
inline VI to_int_exact(VF a) { return {_mm256_cvttps_epi32(a.v)}; }
inline VF to_float(VI a) { return {_mm256_cvtepi32_ps(a.v)}; }

#else

// One scalar lane: the same algorithms, the same bits, no intrinsics.
constexpr int kWidth = 1;
struct VF {
  float v;
};
struct VI {
  uint32_t v;  // unsigned so that shifts are well defined; arithmetic shifts are spelled out
};
struct VM {
  bool m;
};
inline VF load(const float* p) { return {*p}; }
inline void store(float* p, VF a) { *p = a.v; }
inline VF splat(float x) { return {x}; }
inline VI splat_i(int32_t x) { return {static_cast<uint32_t>(x)}; }
inline VF operator+(VF a, VF b) { return {a.v + b.v}; }
inline VF operator-(VF a, VF b) { return {a.v - b.v}; }
inline VF operator*(VF a, VF b) { return {a.v * b.v}; }
inline VF operator/(VF a, VF b) { return {a.v / b.v}; }
inline VF vsqrt(VF a) { return {__builtin_sqrtf(a.v)}; }
inline VF vmin(VF a, VF b) { return {a.v < b.v ? a.v : b.v}; }
inline VF vmax(VF a, VF b) { return {a.v > b.v ? a.v : b.v}; }
inline VM operator<(VF a, VF b) { return {a.v < b.v}; }
inline VM operator>(VF a, VF b) { return {a.v > b.v}; }
inline VM operator==(VF a, VF b) { return {a.v == b.v}; }
inline VM is_nan(VF a) { return {a.v != a.v}; }
inline VM operator|(VM a, VM b) { return {a.m || b.m}; }
inline VF select(VM m, VF a, VF b) { return m.m ? a : b; }
inline VI bits(VF a) {
  VI r;
  std::memcpy(&r.v, &a.v, 4);
  return r;
}
inline VF from_bits(VI a) {
  VF r;
  std::memcpy(&r.v, &a.v, 4);
  return r;
}
inline VI operator+(VI a, VI b) { return {a.v + b.v}; }
inline VI operator-(VI a, VI b) { return {a.v - b.v}; }
inline VI operator&(VI a, VI b) { return {a.v & b.v}; }
inline VI operator|(VI a, VI b) { return {a.v | b.v}; }
inline VI operator^(VI a, VI b) { return {a.v ^ b.v}; }
template <int k>
inline VI shl(VI a) {
  return {a.v << k};
}
template <int k>
inline VI shr_logical(VI a) {
  return {a.v >> k};
}
template <int k>
inline VI shr_arith(VI a) {
  const uint32_t sign_fill = (a.v & 0x80000000u) ? ~(~0u >> k) : 0u;
  return {(a.v >> k) | sign_fill};
}
// NaN and out-of-range inputs give 0 here (the vector paths give 0x80000000); callers only pass
// exact integers or discard the lane.
inline VI to_int_exact(VF a) {
  return {a.v == a.v && a.v > -2147483648.0f && a.v < 2147483648.0f ? static_cast<uint32_t>(static_cast<int32_t>(a.v))
                                                                      : 0u};
}
inline VF to_float(VI a) { return {static_cast<float>(static_cast<int32_t>(a.v))}; }

#endif

// ---- derived operations (identical on every target) ----------------------------------------------

inline VF vabs(VF a) { return from_bits(bits(a) & splat_i(0x7fffffff)); }
// |a| carrying the sign bit of s.
inline VF with_sign_of(VF a, VF s) {
  return from_bits((bits(a) & splat_i(0x7fffffff)) | (bits(s) & splat_i(static_cast<int32_t>(0x80000000u))));
}
// 2^k for integer k in [-126, 127], built from the exponent field.
inline VF pow2i(VI k) { return from_bits(shl<23>(k + splat_i(127))); }
// Round to nearest integer (ties to even) for |x| < 2^22, in float arithmetic (no rounding-mode use).
inline VF round_nearest(VF x) {
  const VF magic = splat(12582912.0f);  // 1.5 · 2^23
  return (x + magic) - magic;
}

// e^x, Cephes' expf polynomial: x = n·ln2 + r, |r| ≤ ln2/2. Relative error ≈ 1 ulp; overflows to
// +inf above ~88.72, underflows gradually through the subnormals to 0; NaN propagates.
inline VF vexp(VF x) {
  // vmax/vmin return their second operand for NaN, so NaN survives the clamp.
  VF xc = vmin(splat(89.0f), vmax(splat(-104.0f), x));
  VF n = round_nearest(xc * splat(1.44269504088896341f));
  VF r = xc - n * splat(0.693359375f) - n * splat(-2.12194440e-4f);
  VF z = r * r;
  VF p = splat(1.9875691500e-4f);
  p = p * r + splat(1.3981999507e-3f);
  p = p * r + splat(8.3334519073e-3f);
  p = p * r + splat(4.1665795894e-2f);
  p = p * r + splat(1.6666665459e-1f);
  p = p * r + splat(5.0000001201e-1f);
  p = p * z + r + splat(1.0f);
  // Scale by 2^n in two halves so that n in [-150, 128] never leaves the normal exponent range.
  VI ni = to_int_exact(n);
  VI half = shr_arith<1>(ni);
  VF y = p * pow2i(half) * pow2i(ni - half);
  return select(is_nan(x), x, y);
}

// Natural log, Cephes' logf: x = 2^e·m with m in [√½, √2). Relative error ≈ 1 ulp away from x = 1
// and absolute ≈ 1e-7·|log x| near it; log(0) = −inf, log(x<0) = NaN, log(+inf) = +inf.
inline VF vlog(VF x) {
  VM tiny = x < splat(1.17549435e-38f);  // subnormal (or ≤ 0): scale into the normal range first
  VF xs = select(tiny, x * splat(8388608.0f), x);
  VI xb = bits(xs);
  VF e = to_float(shr_logical<23>(xb) - splat_i(126)) - select(tiny, splat(23.0f), splat(0.0f));
  VF m = from_bits((xb & splat_i(0x007fffff)) | splat_i(0x3f000000));  // [0.5, 1)
  VM low = m < splat(0.707106781186547524f);
  e = select(low, e - splat(1.0f), e);
  m = select(low, m + m, m) - splat(1.0f);
  VF z = m * m;
  VF y = splat(7.0376836292e-2f);
  y = y * m - splat(1.1514610310e-1f);
  y = y * m + splat(1.1676998740e-1f);
  y = y * m - splat(1.2420140846e-1f);
  y = y * m + splat(1.4249322787e-1f);
  y = y * m - splat(1.6668057665e-1f);
  y = y * m + splat(2.0000714765e-1f);
  y = y * m - splat(2.4999993993e-1f);
  y = y * m + splat(3.3333331174e-1f);
  y = y * m * z;
  y = y + e * splat(-2.12194440e-4f);
  y = y - splat(0.5f) * z;
  VF r = m + y;
  r = r + e * splat(0.693359375f);
  const VF inf = splat(__builtin_inff());
  r = select(x == inf, inf, r);
  r = select(x == splat(0.0f), splat(-__builtin_inff()), r);
  r = select(x < splat(0.0f), splat(__builtin_nanf("")), r);
  return select(is_nan(x), x, r);
}

// sigmoid(x) = 1/(1 + e^−x) for x ≥ 0 and e^x/(1 + e^x) for x < 0, from one e = e^−|x| ∈ (0, 1]:
// nothing overflows, and far-negative results keep their relative accuracy down to the subnormals.
inline VF vsigmoid(VF x) {
  const VF one = splat(1.0f);
  VF e = vexp(splat(0.0f) - vabs(x));
  return select(x < splat(0.0f), e, one) / (one + e);
}

// x · sigmoid(x), same scheme.
inline VF vsilu(VF x) {
  const VF one = splat(1.0f);
  VF e = vexp(splat(0.0f) - vabs(x));
  return x * select(x < splat(0.0f), e, one) / (one + e);
}

// tanh, Cephes' tanhf: an odd polynomial for |x| < 0.625 (no cancellation near 0), otherwise
// (1 − e)/(1 + e) with e = e^(−2|x|) ∈ (0, 0.29], which cannot overflow.
inline VF vtanh(VF x) {
  VF a = vabs(x);
  VF s = a * a;
  VF p = splat(-5.70498872745e-3f);
  p = p * s + splat(2.06390887954e-2f);
  p = p * s - splat(5.37397155531e-2f);
  p = p * s + splat(1.33314422036e-1f);
  p = p * s - splat(3.33332819422e-1f);
  VF small = p * s * a + a;
  VF e = vexp(splat(-2.0f) * a);
  VF large = (splat(1.0f) - e) / (splat(1.0f) + e);
  VF t = select(a < splat(0.625f), small, large);
  return select(is_nan(x), x, with_sign_of(t, x));
}

}  // namespace tensor_native::simd
