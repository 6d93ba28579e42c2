// A small float-vector layer for the nn kernels: one set of kernel loops, compiled to AVX-512
// (16 lanes), AVX2 (8 lanes) or plain scalar code (1 lane). Tails go through the same vector code
// (masked or buffered partial loads), so an element's result never depends on where a thread's
// range starts: results are identical for any thread count.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__AVX512F__) || defined(__AVX2__)
// GCC 12's AVX-512 headers trip -Wmaybe-uninitialized on _mm512_undefined_* (GCC bug 105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif

namespace tensor_native::nn_simd {

#if defined(__AVX512F__)

constexpr int64_t kWidth = 16;
using vf = __m512;

inline __mmask16 tail_mask(int64_t n) { return static_cast<__mmask16>((1u << n) - 1u); }  // n in [0, 16]
inline vf load(const float* p) { return _mm512_loadu_ps(p); }
// Lanes [0, n) from p, the rest `fill`; n < kWidth.
inline vf load_part(const float* p, int64_t n, float fill) {
  return _mm512_mask_loadu_ps(_mm512_set1_ps(fill), tail_mask(n), p);
}
inline void store(float* p, vf v) { _mm512_storeu_ps(p, v); }
inline void store_part(float* p, int64_t n, vf v) { _mm512_mask_storeu_ps(p, tail_mask(n), v); }
inline vf set1(float a) { return _mm512_set1_ps(a); }
inline vf add(vf a, vf b) { return _mm512_add_ps(a, b); }
inline vf sub(vf a, vf b) { return _mm512_sub_ps(a, b); }
inline vf mul(vf a, vf b) { return _mm512_mul_ps(a, b); }
inline vf div(vf a, vf b) { return _mm512_div_ps(a, b); }
inline vf fmadd(vf a, vf b, vf c) { return _mm512_fmadd_ps(a, b, c); }   // a·b + c
inline vf fnmadd(vf a, vf b, vf c) { return _mm512_fnmadd_ps(a, b, c); }  // c − a·b
inline vf max(vf a, vf b) { return _mm512_max_ps(a, b); }
// a ≥ 0 ? if_nonneg : otherwise (NaN a picks otherwise).
inline vf select_nonneg(vf a, vf if_nonneg, vf otherwise) {
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, _mm512_setzero_ps(), _CMP_GE_OQ), otherwise, if_nonneg);
}
// v where `test` is finite, else 0 (test − test is 0 exactly when test is finite).
inline vf zero_unless_finite(vf v, vf test) {
  return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(_mm512_sub_ps(test, test), _mm512_setzero_ps(), _CMP_EQ_OQ), v);
}
inline float reduce_add(vf v) { return _mm512_reduce_add_ps(v); }
inline float reduce_max(vf v) { return _mm512_reduce_max_ps(v); }

// Float64 accumulator for long sums (softmax denominators, dot products over vocabulary-size rows).
struct SumF64 {
  __m512d lo = _mm512_setzero_pd(), hi = _mm512_setzero_pd();
};
inline __m512d low_pd(vf v) { return _mm512_cvtps_pd(_mm512_castps512_ps256(v)); }
inline __m512d high_pd(vf v) {
  return _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
}
inline void add_to(SumF64& s, vf v) {
  s.lo = _mm512_add_pd(s.lo, low_pd(v));
  s.hi = _mm512_add_pd(s.hi, high_pd(v));
}
inline void add_product_to(SumF64& s, vf a, vf b) {  // exact products, summed in float64
  s.lo = _mm512_fmadd_pd(low_pd(a), low_pd(b), s.lo);
  s.hi = _mm512_fmadd_pd(high_pd(a), high_pd(b), s.hi);
}
inline double total(const SumF64& s) { return _mm512_reduce_add_pd(_mm512_add_pd(s.lo, s.hi)); }

// e^x scaled by 2^n with a single rounding (handles subnormal results and overflow to +Inf).
inline vf scale_pow2(vf y, vf n) { return _mm512_scalef_ps(y, n); }
inline vf round_nearest(vf v) { return _mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }

// Keeps a rounded value opaque to the compiler, so that GCC's default FP contraction cannot fuse
// the product that produced it into a following add (rope must round every product, like PyTorch).
inline vf opaque(vf v) {
  asm("" : "+v"(v));
  return v;
}

#elif defined(__AVX2__)

constexpr int64_t kWidth = 8;
using vf = __m256;

inline vf load(const float* p) { return _mm256_loadu_ps(p); }
inline vf load_part(const float* p, int64_t n, float fill) {
  alignas(32) float buf[8];
  for (int64_t i = 0; i < 8; i++) buf[i] = i < n ? p[i] : fill;
  return _mm256_load_ps(buf);
}
inline void store(float* p, vf v) { _mm256_storeu_ps(p, v); }
inline void store_part(float* p, int64_t n, vf v) {
  alignas(32) float buf[8];
  _mm256_store_ps(buf, v);
  for (int64_t i = 0; i < n; i++) p[i] = buf[i];
}
inline vf set1(float a) { return _mm256_set1_ps(a); }
inline vf add(vf a, vf b) { return _mm256_add_ps(a, b); }
inline vf sub(vf a, vf b) { return _mm256_sub_ps(a, b); }
inline vf mul(vf a, vf b) { return _mm256_mul_ps(a, b); }
inline vf div(vf a, vf b) { return _mm256_div_ps(a, b); }
#if defined(__FMA__)
inline vf fmadd(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }
inline vf fnmadd(vf a, vf b, vf c) { return _mm256_fnmadd_ps(a, b, c); }
#else
inline vf fmadd(vf a, vf b, vf c) { return _mm256_add_ps(_mm256_mul_ps(a, b), c); }
inline vf fnmadd(vf a, vf b, vf c) { return _mm256_sub_ps(c, _mm256_mul_ps(a, b)); }
#endif
inline vf max(vf a, vf b) { return _mm256_max_ps(a, b); }
inline vf select_nonneg(vf a, vf if_nonneg, vf otherwise) {
  return _mm256_blendv_ps(otherwise, if_nonneg, _mm256_cmp_ps(a, _mm256_setzero_ps(), _CMP_GE_OQ));
}
inline vf zero_unless_finite(vf v, vf test) {
  return _mm256_and_ps(v, _mm256_cmp_ps(_mm256_sub_ps(test, test), _mm256_setzero_ps(), _CMP_EQ_OQ));
}
inline float reduce_add(vf v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
inline float reduce_max(vf v) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

struct SumF64 {
  __m256d lo = _mm256_setzero_pd(), hi = _mm256_setzero_pd();
};
inline __m256d low_pd(vf v) { return _mm256_cvtps_pd(_mm256_castps256_ps128(v)); }
inline __m256d high_pd(vf v) { return _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)); }
inline void add_to(SumF64& s, vf v) {
  s.lo = _mm256_add_pd(s.lo, low_pd(v));
  s.hi = _mm256_add_pd(s.hi, high_pd(v));
}
inline void add_product_to(SumF64& s, vf a, vf b) {
  s.lo = _mm256_add_pd(s.lo, _mm256_mul_pd(low_pd(a), low_pd(b)));
  s.hi = _mm256_add_pd(s.hi, _mm256_mul_pd(high_pd(a), high_pd(b)));
}
inline double total(const SumF64& s) {
  __m256d t = _mm256_add_pd(s.lo, s.hi);
  __m128d u = _mm_add_pd(_mm256_castpd256_pd128(t), _mm256_extractf128_pd(t, 1));
  return _mm_cvtsd_f64(_mm_add_sd(u, _mm_unpackhi_pd(u, u)));
}

// y·2^n for integral n in [−150, 128]: two exact-range factors 2^(n/2)·2^(n−n/2) so that subnormal
// results round once and large ones overflow to +Inf.
inline vf scale_pow2(vf y, vf n) {
  __m256i ni = _mm256_cvtps_epi32(n);
  __m256i n1 = _mm256_srai_epi32(ni, 1);
  __m256i n2 = _mm256_sub_epi32(ni, n1);
  const __m256i bias = _mm256_set1_epi32(127);
  vf p1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
  vf p2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
  return _mm256_mul_ps(_mm256_mul_ps(y, p1), p2);
}
inline vf round_nearest(vf v) { return _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }

inline vf opaque(vf v) {
  asm("" : "+x"(v));
  return v;
}

#else  // scalar fallback: one lane

constexpr int64_t kWidth = 1;
using vf = float;

inline vf load(const float* p) { return *p; }
inline vf load_part(const float* p, int64_t n, float fill) { return n > 0 ? *p : fill; }
inline void store(float* p, vf v) { *p = v; }
inline void store_part(float* p, int64_t n, vf v) {
  if (n > 0) *p = v;
}
inline vf set1(float a) { return a; }
inline vf add(vf a, vf b) { return a + b; }
inline vf sub(vf a, vf b) { return a - b; }
inline vf mul(vf a, vf b) { return a * b; }
inline vf div(vf a, vf b) { return a / b; }
inline vf fmadd(vf a, vf b, vf c) { return a * b + c; }
inline vf fnmadd(vf a, vf b, vf c) { return c - a * b; }
inline vf max(vf a, vf b) { return a > b ? a : b; }
inline vf select_nonneg(vf a, vf if_nonneg, vf otherwise) { return a >= 0.0f ? if_nonneg : otherwise; }
inline vf zero_unless_finite(vf v, vf test) { return test - test == 0.0f ? v : 0.0f; }
inline float reduce_add(vf v) { return v; }
inline float reduce_max(vf v) { return v; }

struct SumF64 {
  double s = 0.0;
};
inline void add_to(SumF64& s, vf v) { s.s += static_cast<double>(v); }
inline void add_product_to(SumF64& s, vf a, vf b) { s.s += static_cast<double>(a) * static_cast<double>(b); }
inline double total(const SumF64& s) { return s.s; }

// Same two-factor scaling as the AVX2 path, without a libm call.
inline vf scale_pow2(vf y, vf n) {
  const int32_t ni = static_cast<int32_t>(n), n1 = ni >> 1, n2 = ni - n1;
  const uint32_t b1 = static_cast<uint32_t>(n1 + 127) << 23, b2 = static_cast<uint32_t>(n2 + 127) << 23;
  float p1, p2;
  std::memcpy(&p1, &b1, sizeof p1);
  std::memcpy(&p2, &b2, sizeof p2);
  return y * p1 * p2;
}
// Nearest integer (ties to even) for |v| < 2^22: adding 1.5·2^23 leaves no fraction bits.
inline vf round_nearest(vf v) { return (v + 12582912.0f) - 12582912.0f; }

inline vf opaque(vf v) {
  volatile float keep = v;
  return keep;
}

#endif

// e^x in float32, Cephes expf's polynomial (≈1 ulp over the whole range, subnormal results
// included). x ≥ 88.73 gives +Inf, x ≤ −103.98 gives 0, NaN stays NaN.
inline vf exp(vf x) {
#if !defined(__AVX512F__) && !defined(__AVX2__)
  if (x != x) return x;  // the clamps below would turn NaN into a number
#endif
  // Clamp keeping NaN: max/min return their second operand when either is NaN.
  x = max(set1(-104.0f), x);
#if defined(__AVX512F__)
  x = _mm512_min_ps(set1(89.0f), x);
#elif defined(__AVX2__)
  x = _mm256_min_ps(set1(89.0f), x);
#else
  x = x > 89.0f ? 89.0f : x;
#endif
  const vf n = round_nearest(mul(x, set1(1.44269504088896341f)));
  // r = x − n·ln2 in two steps; the high part of ln2 has few bits, so n·ln2_hi is exact.
  vf r = fnmadd(n, set1(0.693359375f), x);
  r = fnmadd(n, set1(-2.12194440e-4f), r);
  vf p = set1(1.9875691500e-4f);
  p = fmadd(p, r, set1(1.3981999507e-3f));
  p = fmadd(p, r, set1(8.3334519073e-3f));
  p = fmadd(p, r, set1(4.1665795894e-2f));
  p = fmadd(p, r, set1(1.6666665459e-1f));
  p = fmadd(p, r, set1(5.0000001201e-1f));
  const vf y = add(fmadd(p, mul(r, r), r), set1(1.0f));
  return scale_pow2(y, n);
}

// e^(x − m) with the difference taken exactly: the float32 difference d plus its rounding error
// (TwoSum). exp turns an argument error δ into a relative error δ, and rounding x − m alone would
// cost up to |x − m|·2^-24 (≈1e-6 at |x − m| = 20); e^(d + err) ≈ e^d·(1 + err).
inline vf exp_difference(vf x, vf m) {
  // Knuth's TwoSum of a = x, b = −m: s = a + b, bb = s − a, err = (a − (s − bb)) + (b − bb).
  const vf d = sub(x, m);
  const vf bb = sub(d, x);
  const vf err = sub(sub(x, sub(d, bb)), add(m, bb));
  const vf e = exp(d);
  return fmadd(e, zero_unless_finite(err, d), e);
}

}  // namespace tensor_native::nn_simd
