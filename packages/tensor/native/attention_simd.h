// SIMD building blocks shared by attention.cc and logprob.cc: a float vector type of the widest
// width the target has (AVX-512, AVX2+FMA, else 4-lane GCC/Clang vector extensions, else scalar),
// a Cephes-style vectorised expf, horizontal reductions, and a register-blocked multiply-accumulate
// micro-kernel.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <utility>

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#endif

namespace tensor_native::simd {

#if defined(__AVX512F__)
constexpr int W = 16;  // floats per vector
constexpr int MAX_NV = 4;  // vectors per micro-kernel row (32 zmm registers)
using vf = __m512;
using vi = __m512i;
inline vf vload(const float* p) { return _mm512_loadu_ps(p); }
inline void vstore(float* p, vf v) { _mm512_storeu_ps(p, v); }
inline vf vset1(float x) { return _mm512_set1_ps(x); }
inline vf vzero() { return _mm512_setzero_ps(); }
inline vf vadd(vf a, vf b) { return _mm512_add_ps(a, b); }
inline vf vsub(vf a, vf b) { return _mm512_sub_ps(a, b); }
inline vf vmul(vf a, vf b) { return _mm512_mul_ps(a, b); }
inline vf vfma(vf a, vf b, vf c) { return _mm512_fmadd_ps(a, b, c); }
inline vf vmax(vf a, vf b) { return _mm512_max_ps(a, b); }
inline vf vmin(vf a, vf b) { return _mm512_min_ps(a, b); }
inline vf vround(vf a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
// 2^n for integral-valued n in [-127, 127] (n = -127 gives +0).
inline vf vpow2i(vf n) {
  vi bits = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
  return _mm512_castsi512_ps(bits);
}
// Partial vectors for row tails: the first n lanes (0 ≤ n < W); other lanes are zero / untouched.
inline __mmask16 first_lanes(int64_t n) { return static_cast<__mmask16>((1u << n) - 1); }
inline vf vload_first(const float* p, int64_t n) { return _mm512_maskz_loadu_ps(first_lanes(n), p); }
inline void vstore_first(float* p, vf v, int64_t n) { _mm512_mask_storeu_ps(p, first_lanes(n), v); }
inline vf vkeep_first(vf v, int64_t n) { return _mm512_maskz_mov_ps(first_lanes(n), v); }
#elif defined(__AVX2__) && defined(__FMA__)
constexpr int W = 8;
constexpr int MAX_NV = 2;  // 16 ymm registers
using vf = __m256;
using vi = __m256i;
inline vf vload(const float* p) { return _mm256_loadu_ps(p); }
inline void vstore(float* p, vf v) { _mm256_storeu_ps(p, v); }
inline vf vset1(float x) { return _mm256_set1_ps(x); }
inline vf vzero() { return _mm256_setzero_ps(); }
inline vf vadd(vf a, vf b) { return _mm256_add_ps(a, b); }
inline vf vsub(vf a, vf b) { return _mm256_sub_ps(a, b); }
inline vf vmul(vf a, vf b) { return _mm256_mul_ps(a, b); }
inline vf vfma(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }
inline vf vmax(vf a, vf b) { return _mm256_max_ps(a, b); }
inline vf vmin(vf a, vf b) { return _mm256_min_ps(a, b); }
inline vf vround(vf a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
inline vf vpow2i(vf n) {
  vi bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_castsi256_ps(bits);
}
inline vi first_lanes(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
inline vf vload_first(const float* p, int64_t n) { return _mm256_maskload_ps(p, first_lanes(n)); }
inline void vstore_first(float* p, vf v, int64_t n) { _mm256_maskstore_ps(p, first_lanes(n), v); }
inline vf vkeep_first(vf v, int64_t n) { return _mm256_and_ps(v, _mm256_castsi256_ps(first_lanes(n))); }
#elif defined(__GNUC__)
// Portable 4-lane vectors (GCC/Clang vector extensions): SSE2 on any x86-64, NEON on arm64.
constexpr int W = 4;
constexpr int MAX_NV = 2;
typedef float vf __attribute__((vector_size(16)));
typedef int32_t vi __attribute__((vector_size(16)));
inline vf vload(const float* p) {
  vf v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
inline void vstore(float* p, vf v) { __builtin_memcpy(p, &v, sizeof v); }
inline vf vset1(float x) { return vf{x, x, x, x}; }
inline vf vzero() { return vf{0.0f, 0.0f, 0.0f, 0.0f}; }
inline vf vadd(vf a, vf b) { return a + b; }
inline vf vsub(vf a, vf b) { return a - b; }
inline vf vmul(vf a, vf b) { return a * b; }
inline vf vfma(vf a, vf b, vf c) { return a * b + c; }
inline vf vselect(vi mask, vf a, vf b) { return (vf)(((vi)a & mask) | ((vi)b & ~mask)); }
inline vf vmax(vf a, vf b) { return vselect(a > b, a, b); }
inline vf vmin(vf a, vf b) { return vselect(a < b, a, b); }
// Round to nearest (|a| < 2²²): adding and removing 1.5·2²³ drops the fraction bits.
inline vf vround(vf a) { return (a + vset1(12582912.0f)) - vset1(12582912.0f); }
inline vf vpow2i(vf n) { return (vf)((__builtin_convertvector(n, vi) + 127) << 23); }
inline vf vload_first(const float* p, int64_t n) {
  vf v = vzero();
  for (int64_t i = 0; i < n; i++) v[i] = p[i];
  return v;
}
inline void vstore_first(float* p, vf v, int64_t n) {
  for (int64_t i = 0; i < n; i++) p[i] = v[i];
}
inline vf vkeep_first(vf v, int64_t n) {
  for (int64_t i = n; i < W; i++) v[i] = 0.0f;
  return v;
}
#else
constexpr int W = 1;
constexpr int MAX_NV = 4;
using vf = float;
inline vf vload(const float* p) { return *p; }
inline void vstore(float* p, vf v) { *p = v; }
inline vf vset1(float x) { return x; }
inline vf vzero() { return 0.0f; }
inline vf vadd(vf a, vf b) { return a + b; }
inline vf vsub(vf a, vf b) { return a - b; }
inline vf vmul(vf a, vf b) { return a * b; }
inline vf vfma(vf a, vf b, vf c) { return a * b + c; }  // std::fma is a slow library call without FMA hardware
inline vf vmax(vf a, vf b) { return a > b ? a : b; }
inline vf vmin(vf a, vf b) { return a < b ? a : b; }
inline vf vround(vf a) { return std::nearbyint(a); }
inline vf vpow2i(vf n) {
  int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float out;
  __builtin_memcpy(&out, &bits, sizeof out);
  return out;
}
inline vf vload_first(const float*, int64_t) { return 0.0f; }  // n < W = 1: nothing to load
inline void vstore_first(float*, vf, int64_t) {}
inline vf vkeep_first(vf, int64_t) { return 0.0f; }
#endif

// Rounds n up to a multiple of the vector width.
inline int64_t round_up_w(int64_t n) { return (n + W - 1) / W * W; }

inline float hsum(vf v) {
  alignas(64) float lanes[W];
  vstore(lanes, v);
  // Pairwise halving: a fixed order, so the result is reproducible.
  for (int width = W / 2; width >= 1; width /= 2)
    for (int i = 0; i < width; i++) lanes[i] += lanes[i + width];
  return lanes[0];
}

// expf, Cephes polynomial (about 1 ulp on [-87, 88]); -inf and very negative inputs give 0, large
// inputs saturate at about 3.4e38 rather than inf. NaN inputs give an unspecified finite value.
inline vf vexp(vf x) {
  x = vmin(vmax(x, vset1(-88.3762626647949f)), vset1(88.3762626647949f));
  vf n = vround(vmul(x, vset1(1.44269504088896341f)));
  // r = x − n·ln2 in two steps (ln2 = C1 + C2, C1 exact in few bits) to keep r accurate.
  vf r = vfma(n, vset1(-0.693359375f), x);
  r = vfma(n, vset1(2.12194440e-4f), r);
  vf p = vset1(1.9875691500e-4f);
  p = vfma(p, r, vset1(1.3981999507e-3f));
  p = vfma(p, r, vset1(8.3334519073e-3f));
  p = vfma(p, r, vset1(4.1665795894e-2f));
  p = vfma(p, r, vset1(1.6666665459e-1f));
  p = vfma(p, r, vset1(5.0000001201e-1f));
  p = vfma(p, vmul(r, r), vadd(r, vset1(1.0f)));
  return vmul(p, vpow2i(n));
}

// Σ x[i]·y[i] (lane-wise partial sums, then a fixed-order horizontal sum).
inline float dot(const float* x, const float* y, int64_t n) {
  vf acc = vzero();
  int64_t i = 0;
  for (; i + W <= n; i += W) acc = vfma(vload(x + i), vload(y + i), acc);
  if (i < n) acc = vfma(vload_first(x + i, n - i), vload_first(y + i, n - i), acc);
  return hsum(acc);
}

// max (or min) of x[0..n), n ≥ 1.
template <bool MAX>
inline float extreme_of(const float* x, int64_t n) {
  auto pick = [](auto a, auto b) { return MAX ? vmax(a, b) : vmin(a, b); };
  int64_t i = 0;
  float m = x[0];
  if (n >= W) {
    vf acc = vload(x);
    for (i = W; i + W <= n; i += W) acc = pick(acc, vload(x + i));
    alignas(64) float lanes[W];
    vstore(lanes, acc);
    for (int j = 0; j < W; j++) m = MAX ? std::max(m, lanes[j]) : std::min(m, lanes[j]);
  }
  for (; i < n; i++) m = MAX ? std::max(m, x[i]) : std::min(m, x[i]);
  return m;
}
inline float max_of(const float* x, int64_t n) { return extreme_of<true>(x, n); }
inline float min_of(const float* x, int64_t n) { return extreme_of<false>(x, n); }

// x[i] = exp(x[i]·scale − shift) in place; returns Σ x[i] (fixed summation order).
inline float exp_scaled_inplace(float* x, int64_t n, float scale, float shift) {
  const vf vs = vset1(scale), vshift = vset1(-shift);
  vf acc = vzero();
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    vf e = vexp(vfma(vload(x + i), vs, vshift));
    vstore(x + i, e);
    acc = vadd(acc, e);
  }
  if (i < n) {
    vf e = vkeep_first(vexp(vfma(vload_first(x + i, n - i), vs, vshift)), n - i);
    vstore_first(x + i, e, n - i);
    acc = vadd(acc, e);
  }
  return hsum(acc);
}

// Micro-kernel: for r < R and the NV·W columns c,
//   C[r·ldc + c] (+)= Σ_{l < len} A[r·a_row + l·a_step] · B[l·ldb + c]
// A is read one scalar at a time (any strides), B one row of vectors at a time; the R×NV block of
// C stays in registers for the whole reduction. Overwrites C unless `accumulate`.
template <int R, int NV>
inline void micro_kernel(int64_t len, const float* a, int64_t a_row, int64_t a_step, const float* b, int64_t ldb,
                         float* c, int64_t ldc, bool accumulate) {
  vf acc[R][NV];
  for (int r = 0; r < R; r++)
    for (int v = 0; v < NV; v++) acc[r][v] = accumulate ? vload(c + r * ldc + v * W) : vzero();
  for (int64_t l = 0; l < len; l++) {
    vf bv[NV];
    for (int v = 0; v < NV; v++) bv[v] = vload(b + l * ldb + v * W);
    for (int r = 0; r < R; r++) {
      vf av = vset1(a[r * a_row + l * a_step]);
      for (int v = 0; v < NV; v++) acc[r][v] = vfma(av, bv[v], acc[r][v]);
    }
  }
  for (int r = 0; r < R; r++)
    for (int v = 0; v < NV; v++) vstore(c + r * ldc + v * W, acc[r][v]);
}

#if defined(__AVX512F__)
constexpr int MAX_R = 6;  // rows per micro-kernel call: 6·4 accumulators + 4 B vectors fit in 32 registers
#else
constexpr int MAX_R = 4;
#endif

using MicroKernel = void (*)(int64_t, const float*, int64_t, int64_t, const float*, int64_t, float*, int64_t, bool);

template <int R, int... NVs>
constexpr std::array<MicroKernel, MAX_NV> micro_kernels_with_rows(std::integer_sequence<int, NVs...>) {
  return {micro_kernel<R, NVs + 1>...};
}

template <int... Rs>
constexpr std::array<std::array<MicroKernel, MAX_NV>, MAX_R> micro_kernel_table(std::integer_sequence<int, Rs...>) {
  return {micro_kernels_with_rows<Rs + 1>(std::make_integer_sequence<int, MAX_NV>{})...};
}

// The micro-kernel for rows in [1, MAX_R] and nv in [1, MAX_NV].
inline MicroKernel micro_kernel_for(int rows, int nv) {
  static constexpr auto table = micro_kernel_table(std::make_integer_sequence<int, MAX_R>{});
  return table[rows - 1][nv - 1];
}

// C[rows × cols] (+)= A · B with the micro-kernel, cols a multiple of W (rows ≤ MAX_R).
inline void row_block_multiply(int rows, int64_t cols, int64_t len, const float* a, int64_t a_row, int64_t a_step,
                               const float* b, int64_t ldb, float* c, int64_t ldc, bool accumulate) {
  for (int64_t col = 0; col < cols; col += MAX_NV * W) {
    int nv = static_cast<int>(std::min<int64_t>(MAX_NV, (cols - col) / W));
    micro_kernel_for(rows, nv)(len, a, a_row, a_step, b + col, ldb, c + col, ldc, accumulate);
  }
}

}  // namespace tensor_native::simd
