// Single-precision GEMM in the BLIS/GotoBLAS style: op(A) and op(B) are copied ("packed") into
// cache-sized, 64-byte-aligned panels laid out in exactly the order the register-blocked micro-kernel
// reads them, so the transposes are handled once by the packing and all four trans combinations run
// the same micro-kernel. Threads split M (sharing one packed B block) or, for wide and short
// products, N. Small products (below 256K multiply-adds, about 64³) skip packing: a 4-row register
// tile reads A and B in place (a stored Bᵀ is first copied into panels).
//
// Numerics (what makes results reproducible): every C element is a sequential FMA chain over l
// inside each K block, and K is split into blocks that depend only on k. The first K block writes
// alpha·acc + beta·C (beta = 0: alpha·acc, old C never read), later blocks alpha·acc + C. Threads
// split M or N only, so an element's arithmetic never depends on which thread computes it: sgemm,
// sgemm_serial and any thread count give the same bits.
#include "gemm.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <new>
#include <string>

#if defined(__SSE__)
#include <immintrin.h>
#endif

#include "napi_util.h"
#include "threadpool.h"

namespace tensor_native {
namespace {

// ---- tile and cache-block sizes --------------------------------------------------------------------
// MR×NR is the register tile of C. KC·NR floats of B (one micro-panel, 32 KB) stay in L1 while the
// micro-kernel streams MR×KC panels of A from an MC×KC block (480 KB) held in L2; the KC×NC block of B
// lives in L3. Measured on Zen 5 (48 KB L1d, 1 MB L2): 8×32, 12×32 and 14×32 tiles are within noise of
// each other (~90% of FMA peak); KC 128–384 and MC 240–960 change little, 256/480 was best.
#if defined(__AVX512F__)
constexpr int MR = 12;
constexpr int NR = 32;
#elif defined(__AVX2__) && defined(__FMA__)
constexpr int MR = 6;
constexpr int NR = 16;
#else
constexpr int MR = 4;
constexpr int NR = 8;
#endif
constexpr int64_t KC = 256;
constexpr int64_t MC = MR * 40;
constexpr int64_t NC = 4096;

// Problems below SMALL_MNK multiply-adds skip packing (up to about 64³ the unpacked kernel is as fast);
// below THREAD_MNK they run on the calling thread (waking the pool costs more than it saves).
constexpr int64_t SMALL_MNK = 256 * 1024;
constexpr int64_t THREAD_MNK = 48 * 1024;

// The scalar multiply-add every path uses; fused wherever the hardware fuses, so the unpacked small
// path, the edge tiles and the SIMD kernels round identically.
inline float madd(float a, float b, float c) {
#if defined(__FMA__)
  return std::fma(a, b, c);
#else
  return a * b + c;
#endif
}

// The final value of one C element from its accumulated dot product.
inline float finish(float acc, float alpha, float beta, float old) {
  return beta == 0.0f ? alpha * acc : madd(alpha, acc, beta * old);
}

// ---- packing ---------------------------------------------------------------------------------------
// A panel is W values per l (W = MR for A, NR for B), kc values of l, zero-padded past `count` valid
// values, so the micro-kernel never needs to know about edges in the packed operand.

// Panel whose W values for one l are contiguous in the source: value (l, w) is src[l·ld + w].
template <int W>
void pack_rows(int64_t kc, int64_t count, const float* src, int64_t ld, float* out) {
  if (count == W) {
    for (int64_t l = 0; l < kc; l++, out += W) {
      const float* s = src + l * ld;
      for (int w = 0; w < W; w++) out[w] = s[w];
    }
    return;
  }
  for (int64_t l = 0; l < kc; l++, out += W) {
    const float* s = src + l * ld;
    int64_t w = 0;
    for (; w < count; w++) out[w] = s[w];
    for (; w < W; w++) out[w] = 0.0f;
  }
}

// Panel that is a transpose of the source: value (l, w) is src[w·ld + l]. Full panels go through 4×4
// register transposes (four rows read, four packed columns written per step).
template <int W>
void pack_columns(int64_t kc, int64_t count, const float* src, int64_t ld, float* out) {
  if (count == W) {
    int64_t l = 0;
#if defined(__SSE__)
    if constexpr (W % 4 == 0) {
      for (; l + 4 <= kc; l += 4) {
        float* o = out + l * W;
        for (int w = 0; w < W; w += 4) {
          const float* s = src + w * ld + l;
          __m128 r0 = _mm_loadu_ps(s), r1 = _mm_loadu_ps(s + ld), r2 = _mm_loadu_ps(s + 2 * ld),
                 r3 = _mm_loadu_ps(s + 3 * ld);
          _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
          _mm_storeu_ps(o + w, r0);
          _mm_storeu_ps(o + W + w, r1);
          _mm_storeu_ps(o + 2 * W + w, r2);
          _mm_storeu_ps(o + 3 * W + w, r3);
        }
      }
    }
#endif
    for (; l < kc; l++)
      for (int w = 0; w < W; w++) out[l * W + w] = src[w * ld + l];
    return;
  }
  for (int64_t l = 0; l < kc; l++, out += W) {
    int64_t w = 0;
    for (; w < count; w++) out[w] = src[w * ld + l];
    for (; w < W; w++) out[w] = 0.0f;
  }
}

// Packed A: MR-row panels of op(A)'s mc×kc block. A(i, l) = a[trans ? l·lda + i : i·lda + l], with a
// already offset to the block's corner.
void pack_a(bool trans, int64_t mc, int64_t kc, const float* a, int64_t lda, float* out) {
  for (int64_t i0 = 0; i0 < mc; i0 += MR, out += MR * kc) {
    const int64_t rows = std::min<int64_t>(MR, mc - i0);
    if (trans)
      pack_rows<MR>(kc, rows, a + i0, lda, out);
    else
      pack_columns<MR>(kc, rows, a + i0 * lda, lda, out);
  }
}

// Packed B: NR-column panels [j0, j1) of op(B)'s kc×nc block. B(l, j) = b[trans ? j·ldb + l : l·ldb + j],
// with b already offset to the block's corner; panel p lands at out + p·NR·kc.
void pack_b(bool trans, int64_t kc, int64_t nc, const float* b, int64_t ldb, float* out, int64_t panel_begin = 0,
            int64_t panel_end = INT64_MAX) {
  for (int64_t p = panel_begin; p < panel_end && p * NR < nc; p++) {
    const int64_t j0 = p * NR;
    const int64_t cols = std::min<int64_t>(NR, nc - j0);
    if (trans)
      pack_columns<NR>(kc, cols, b + j0 * ldb, ldb, out + j0 * kc);
    else
      pack_rows<NR>(kc, cols, b + j0, ldb, out + j0 * kc);
  }
}

// ---- micro-kernels ---------------------------------------------------------------------------------
// C[0:rows, 0:cols] = finish(Σ_l ap[l][r] · bp[l][c]) for one MR×NR tile (rows ≤ MR, cols ≤ NR).
#if defined(__AVX512F__)

void micro_kernel(int64_t kc, const float* ap, const float* bp, float* c, int64_t ldc, int rows, int cols,
                  float alpha, float beta) {
  __m512 lo[MR], hi[MR];
#pragma GCC unroll 16
  for (int r = 0; r < MR; r++) lo[r] = hi[r] = _mm512_setzero_ps();
  // The C tile is only needed after the loop: start fetching it now (two lines per row).
#pragma GCC unroll 16
  for (int r = 0; r < MR; r++) {
    if (r >= rows) break;
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc + NR - 1), _MM_HINT_T0);
  }
  for (int64_t l = 0; l < kc; l++) {
    const __m512 b0 = _mm512_load_ps(bp);
    const __m512 b1 = _mm512_load_ps(bp + 16);
#pragma GCC unroll 16
    for (int r = 0; r < MR; r++) {
      const __m512 av = _mm512_set1_ps(ap[r]);
      lo[r] = _mm512_fmadd_ps(av, b0, lo[r]);
      hi[r] = _mm512_fmadd_ps(av, b1, hi[r]);
    }
    ap += MR;
    bp += NR;
  }
  const __mmask16 mask_lo = cols >= 16 ? 0xffff : static_cast<__mmask16>((1u << cols) - 1);
  const __mmask16 mask_hi = cols >= 32 ? 0xffff : cols <= 16 ? 0 : static_cast<__mmask16>((1u << (cols - 16)) - 1);
  const __m512 va = _mm512_set1_ps(alpha);
  if (beta == 0.0f) {
#pragma GCC unroll 16
    for (int r = 0; r < MR; r++) {
      if (r >= rows) break;
      _mm512_mask_storeu_ps(c + r * ldc, mask_lo, _mm512_mul_ps(va, lo[r]));
      _mm512_mask_storeu_ps(c + r * ldc + 16, mask_hi, _mm512_mul_ps(va, hi[r]));
    }
  } else {
    const __m512 vb = _mm512_set1_ps(beta);
#pragma GCC unroll 16
    for (int r = 0; r < MR; r++) {
      if (r >= rows) break;
      float* cr = c + r * ldc;
      const __m512 old_lo = _mm512_mul_ps(vb, _mm512_maskz_loadu_ps(mask_lo, cr));
      const __m512 old_hi = _mm512_mul_ps(vb, _mm512_maskz_loadu_ps(mask_hi, cr + 16));
      _mm512_mask_storeu_ps(cr, mask_lo, _mm512_fmadd_ps(va, lo[r], old_lo));
      _mm512_mask_storeu_ps(cr + 16, mask_hi, _mm512_fmadd_ps(va, hi[r], old_hi));
    }
  }
}

#elif defined(__AVX2__) && defined(__FMA__)

void micro_kernel(int64_t kc, const float* ap, const float* bp, float* c, int64_t ldc, int rows, int cols,
                  float alpha, float beta) {
  __m256 lo[MR], hi[MR];
#pragma GCC unroll 8
  for (int r = 0; r < MR; r++) lo[r] = hi[r] = _mm256_setzero_ps();
  for (int64_t l = 0; l < kc; l++) {
    const __m256 b0 = _mm256_load_ps(bp);
    const __m256 b1 = _mm256_load_ps(bp + 8);
#pragma GCC unroll 8
    for (int r = 0; r < MR; r++) {
      const __m256 av = _mm256_broadcast_ss(ap + r);
      lo[r] = _mm256_fmadd_ps(av, b0, lo[r]);
      hi[r] = _mm256_fmadd_ps(av, b1, hi[r]);
    }
    ap += MR;
    bp += NR;
  }
  if (cols == NR) {
    const __m256 va = _mm256_set1_ps(alpha);
    const __m256 vb = _mm256_set1_ps(beta);
#pragma GCC unroll 8
    for (int r = 0; r < MR; r++) {
      if (r >= rows) break;
      float* cr = c + r * ldc;
      if (beta == 0.0f) {
        _mm256_storeu_ps(cr, _mm256_mul_ps(va, lo[r]));
        _mm256_storeu_ps(cr + 8, _mm256_mul_ps(va, hi[r]));
      } else {
        _mm256_storeu_ps(cr, _mm256_fmadd_ps(va, lo[r], _mm256_mul_ps(vb, _mm256_loadu_ps(cr))));
        _mm256_storeu_ps(cr + 8, _mm256_fmadd_ps(va, hi[r], _mm256_mul_ps(vb, _mm256_loadu_ps(cr + 8))));
      }
    }
    return;
  }
  // Edge tile: spill the accumulators and finish element by element (same rounding as above).
  alignas(32) float tile[MR][NR];
#pragma GCC unroll 8
  for (int r = 0; r < MR; r++) {
    _mm256_store_ps(tile[r], lo[r]);
    _mm256_store_ps(tile[r] + 8, hi[r]);
  }
  for (int r = 0; r < rows; r++)
    for (int j = 0; j < cols; j++) c[r * ldc + j] = finish(tile[r][j], alpha, beta, c[r * ldc + j]);
}

#else

void micro_kernel(int64_t kc, const float* ap, const float* bp, float* c, int64_t ldc, int rows, int cols,
                  float alpha, float beta) {
  float acc[MR][NR] = {};
  for (int64_t l = 0; l < kc; l++) {
    for (int r = 0; r < MR; r++)
      for (int j = 0; j < NR; j++) acc[r][j] = madd(ap[r], bp[j], acc[r][j]);
    ap += MR;
    bp += NR;
  }
  for (int r = 0; r < rows; r++)
    for (int j = 0; j < cols; j++) c[r * ldc + j] = finish(acc[r][j], alpha, beta, c[r * ldc + j]);
}

#endif

// ---- drivers ---------------------------------------------------------------------------------------
// Packing memory of the calling thread, grown on demand and kept for the thread's lifetime. A
// threaded call carves every task's panels out of the caller's block, so pool workers never allocate.
class PackMemory {
 public:
  ~PackMemory() { std::free(data_); }
  float* get(size_t floats) {
    if (size_ < floats) {
      std::free(data_);
      data_ = static_cast<float*>(std::aligned_alloc(64, (floats * sizeof(float) + 63) / 64 * 64));
      size_ = data_ ? floats : 0;
      if (!data_) throw std::bad_alloc();
    }
    return data_;
  }

 private:
  float* data_ = nullptr;
  size_t size_ = 0;
};

float* pack_memory(size_t floats) {
  thread_local PackMemory memory;
  return memory.get(floats);
}

// Rounds a float count up to whole 64-byte lines, so carved panels stay aligned.
size_t lines(int64_t floats) { return static_cast<size_t>((floats + 15) / 16 * 16); }

// The K blocking: the number of blocks and their size depend on k alone.
int64_t k_block(int64_t k) {
  const int64_t blocks = (k + KC - 1) / KC;
  return (k + blocks - 1) / blocks;
}

// Sizes of the packed blocks of one problem.
struct Blocks {
  int64_t kc, mc, nc;
  Blocks(int64_t m, int64_t n, int64_t k)
      : kc(k_block(k)), mc(std::min(MC, (m + MR - 1) / MR * MR)), nc(std::min(NC, (n + NR - 1) / NR * NR)) {}
  size_t a_floats() const { return lines(kc * mc); }
  size_t b_floats() const { return lines(kc * nc); }
};

// C = beta·C for an m×n block (k = 0).
void scale_c(int64_t m, int64_t n, float beta, float* c, int64_t ldc) {
  for (int64_t i = 0; i < m; i++) {
    float* cr = c + i * ldc;
    if (beta == 0.0f)
      for (int64_t j = 0; j < n; j++) cr[j] = 0.0f;
    else
      for (int64_t j = 0; j < n; j++) cr[j] = beta * cr[j];
  }
}

// ---- unpacked path for small problems -------------------------------------------------------------
// Short vectors of W floats with masked (partial) loads and stores, for the small-problem kernel.
#if defined(__AVX512F__)
struct Vec {
  static constexpr int W = 16;
  using Mask = __mmask16;
  __m512 v;
  static Mask mask(int count) {
    return count >= 16 ? static_cast<Mask>(0xffff) : static_cast<Mask>((1u << std::max(count, 0)) - 1);
  }
  static Vec zero() { return {_mm512_setzero_ps()}; }
  static Vec broadcast(float x) { return {_mm512_set1_ps(x)}; }
  static Vec load(const float* p, Mask m) { return {_mm512_maskz_loadu_ps(m, p)}; }
  void store(float* p, Mask m) const { _mm512_mask_storeu_ps(p, m, v); }
  friend Vec fma(Vec a, Vec b, Vec c) { return {_mm512_fmadd_ps(a.v, b.v, c.v)}; }
  friend Vec operator*(Vec a, Vec b) { return {_mm512_mul_ps(a.v, b.v)}; }
  float sum() const { return _mm512_reduce_add_ps(v); }
};
#elif defined(__AVX2__) && defined(__FMA__)
struct Vec {
  static constexpr int W = 8;
  using Mask = __m256i;
  __m256 v;
  static Mask mask(int count) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(count), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static Vec zero() { return {_mm256_setzero_ps()}; }
  static Vec broadcast(float x) { return {_mm256_set1_ps(x)}; }
  static Vec load(const float* p, Mask m) { return {_mm256_maskload_ps(p, m)}; }
  void store(float* p, Mask m) const { _mm256_maskstore_ps(p, m, v); }
  friend Vec fma(Vec a, Vec b, Vec c) { return {_mm256_fmadd_ps(a.v, b.v, c.v)}; }
  friend Vec operator*(Vec a, Vec b) { return {_mm256_mul_ps(a.v, b.v)}; }
  float sum() const {
    __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    x = _mm_add_ps(x, _mm_movehl_ps(x, x));
    return _mm_cvtss_f32(_mm_add_ss(x, _mm_movehdup_ps(x)));
  }
};
#else
struct Vec {
  static constexpr int W = 1;
  using Mask = bool;
  float v;
  static Mask mask(int count) { return count > 0; }
  static Vec zero() { return {0.0f}; }
  static Vec broadcast(float x) { return {x}; }
  static Vec load(const float* p, Mask m) { return {m ? *p : 0.0f}; }
  void store(float* p, Mask m) const {
    if (m) *p = v;
  }
  friend Vec fma(Vec a, Vec b, Vec c) { return {madd(a.v, b.v, c.v)}; }
  friend Vec operator*(Vec a, Vec b) { return {a.v * b.v}; }
  float sum() const { return v; }
};
#endif

// C tiles of SMALL_ROWS rows × 2 vectors, each accumulated over a K block and then finished as in the
// packed kernel (same K blocks, same sequential FMA chain per element, same rounding). B(l, j) for the
// column block at j0 is bcol[l·ldb + (j − j0)] with bcol = b + (j0 / NR)·panel_stride + j0 % NR: that
// covers both a row-major B (panel_stride = NR) and B packed into NR-wide panels (panel_stride = NR·k,
// ldb = NR); 2·W divides NR, so a column block never straddles two panels.
constexpr int SMALL_ROWS = 4;  // 8 accumulators: enough in flight for two FMA pipes
static_assert(NR % (2 * Vec::W) == 0, "a small-kernel column block must lie inside one B panel");

template <bool TA>
void small_kernel(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                  int64_t ldb, int64_t panel_stride, float beta, float* c, int64_t ldc) {
  constexpr int W = Vec::W;
  const int64_t kc = k_block(k);
  const Vec va = Vec::broadcast(alpha);
  const int64_t a_step = TA ? lda : 1;  // from A(i, l) to A(i, l + 1)
  for (int64_t i0 = 0; i0 < m; i0 += SMALL_ROWS) {
    const int rows = static_cast<int>(std::min<int64_t>(SMALL_ROWS, m - i0));
    // Rows past m repeat the last row (computed, never stored), so the inner loop has no branches.
    int64_t row[SMALL_ROWS];
    for (int r = 0; r < SMALL_ROWS; r++) row[r] = (i0 + std::min(r, rows - 1)) * (TA ? 1 : lda);
    for (int64_t j0 = 0; j0 < n; j0 += 2 * W) {
      const int cols = static_cast<int>(std::min<int64_t>(2 * W, n - j0));
      const typename Vec::Mask mask[2] = {Vec::mask(cols), Vec::mask(cols - W)};
      const float* bcol = b + (j0 / NR) * panel_stride + j0 % NR;
      for (int64_t p0 = 0; p0 < k; p0 += kc) {
        const int64_t p1 = std::min(k, p0 + kc);
        Vec acc[SMALL_ROWS][2];
#pragma GCC unroll 8
        for (int r = 0; r < SMALL_ROWS; r++) acc[r][0] = acc[r][1] = Vec::zero();
        const float* bl = bcol + p0 * ldb;
        const float* al = TA ? a + p0 * lda : a + p0;
        for (int64_t l = p0; l < p1; l++, bl += ldb, al += a_step) {
          const Vec b0 = Vec::load(bl, mask[0]), b1 = Vec::load(bl + W, mask[1]);
#pragma GCC unroll 8
          for (int r = 0; r < SMALL_ROWS; r++) {
            const Vec ar = Vec::broadcast(al[row[r]]);
            acc[r][0] = fma(ar, b0, acc[r][0]);
            acc[r][1] = fma(ar, b1, acc[r][1]);
          }
        }
        const float beta_block = p0 == 0 ? beta : 1.0f;
        const Vec vb = Vec::broadcast(beta_block);
#pragma GCC unroll 8
        for (int r = 0; r < SMALL_ROWS; r++) {
          if (r >= rows) break;
          float* cr = c + (i0 + r) * ldc + j0;
#pragma GCC unroll 2
          for (int h = 0; h < 2; h++) {
            const Vec out = beta_block == 0.0f ? va * acc[r][h]
                                               : fma(va, acc[r][h], vb * Vec::load(cr + h * W, mask[h]));
            out.store(cr + h * W, mask[h]);
          }
        }
      }
    }
  }
}

// Products with very few rows and a stored Bᵀ (one token times a weight matrix, x·Wᵀ): each C element
// is a dot product of two contiguous rows, W lanes of partial sums reduced in a fixed order, so every
// B row is read once, in place. A is m×k row-major here (row i at a + i·lda). Columns [j0, j1).
void skinny_nt(int64_t m, int64_t j0, int64_t j1, int64_t k, float alpha, const float* a, int64_t lda,
               const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  constexpr int W = Vec::W;
  const int64_t last_row = m - 1;
  for (int64_t j = j0; j < j1; j += 2) {
    // Two columns at a time (the second repeats the first at an odd end): 2·SMALL_ROWS accumulators.
    const float* b0 = b + j * ldb;
    const float* b1 = b + std::min(j + 1, j1 - 1) * ldb;
    Vec acc[SMALL_ROWS][2];
#pragma GCC unroll 8
    for (int r = 0; r < SMALL_ROWS; r++) acc[r][0] = acc[r][1] = Vec::zero();
    for (int64_t l = 0; l < k; l += W) {
      const typename Vec::Mask mask = Vec::mask(static_cast<int>(std::min<int64_t>(W, k - l)));
      const Vec v0 = Vec::load(b0 + l, mask), v1 = Vec::load(b1 + l, mask);
#pragma GCC unroll 8
      for (int r = 0; r < SMALL_ROWS; r++) {
        const Vec ar = Vec::load(a + std::min<int64_t>(r, last_row) * lda + l, mask);
        acc[r][0] = fma(ar, v0, acc[r][0]);
        acc[r][1] = fma(ar, v1, acc[r][1]);
      }
    }
    for (int r = 0; r < m; r++) {
      float* cr = c + r * ldc + j;
      cr[0] = finish(acc[r][0].sum(), alpha, beta, cr[0]);
      if (j + 1 < j1) cr[1] = finish(acc[r][1].sum(), alpha, beta, cr[1]);
    }
  }
}

// The unpacked paths, split over `threads` threads of the pool (1: the calling thread): by rows when
// there are enough 4-row blocks, else by columns.
void unpacked_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                   const float* b, int64_t ldb, float beta, float* c, int64_t ldc, int threads) {
  std::function<void(int64_t, int64_t, int64_t, int64_t)> part;  // rows [i0, i1) × columns [j0, j1)
  int64_t col_unit = 2 * Vec::W;
  if (tb && m <= SMALL_ROWS) {
    if (ta) {
      // A is k×m (m ≤ 4 columns): a contiguous copy of its rows costs nothing next to reading B.
      float* rows = pack_memory(static_cast<size_t>(m * k));
      for (int64_t i = 0; i < m; i++)
        for (int64_t l = 0; l < k; l++) rows[i * k + l] = a[l * lda + i];
      a = rows;
      lda = k;
    }
    col_unit = 2;
    part = [&](int64_t, int64_t, int64_t j0, int64_t j1) {
      skinny_nt(m, j0, j1, k, alpha, a, lda, b, ldb, beta, c, ldc);
    };
  } else {
    int64_t panel_stride = NR;
    if (tb) {
      // Stored Bᵀ is read across rows; pack it into NR-wide panels first (k·n copies, cheap next to m·n·k).
      float* packed = pack_memory(static_cast<size_t>((n + NR - 1) / NR * NR * k));
      pack_b(true, k, n, b, ldb, packed);
      b = packed;
      ldb = NR;
      panel_stride = NR * k;
    }
    if (tb) col_unit = NR;  // column splits start on a panel
    part = [&, panel_stride](int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
      const float* ai = ta ? a + i0 : a + i0 * lda;
      const float* bj = b + (j0 / NR) * panel_stride + j0 % NR;  // j0 % NR is 0 for packed panels
      float* cij = c + i0 * ldc + j0;
      if (ta)
        small_kernel<true>(i1 - i0, j1 - j0, k, alpha, ai, lda, bj, ldb, panel_stride, beta, cij, ldc);
      else
        small_kernel<false>(i1 - i0, j1 - j0, k, alpha, ai, lda, bj, ldb, panel_stride, beta, cij, ldc);
    };
  }
  const int64_t row_blocks = tb && m <= SMALL_ROWS ? 1 : (m + SMALL_ROWS - 1) / SMALL_ROWS;
  const int64_t col_blocks = (n + col_unit - 1) / col_unit;
  const bool by_rows = row_blocks >= threads;
  const int64_t units = by_rows ? row_blocks : col_blocks;
  const int size = static_cast<int>(std::min<int64_t>(threads, units));
  if (size <= 1) {
    part(0, m, 0, n);
    return;
  }
  pool::run_all([&](int tid, int) {
    if (tid >= size) return;
    const int64_t unit = by_rows ? SMALL_ROWS : col_unit, extent = by_rows ? m : n;
    const int64_t begin = std::min(extent, units * tid / size * unit);
    const int64_t end = std::min(extent, units * (tid + 1) / size * unit);
    if (begin >= end) return;
    if (by_rows)
      part(begin, end, 0, n);
    else
      part(0, m, begin, end);
  });
}

// Rows [row0, row1) of C += op(A) rows × one packed B block (kc × nc at K offset pc, N offset jc):
// the ic (M blocks) loop, then NR×MR tiles. `apack` holds one Blocks::a_floats() block.
void multiply_block(bool ta, int64_t row0, int64_t row1, int64_t jc, int64_t nc, int64_t pc, int64_t kc, float alpha,
                    const float* a, int64_t lda, float beta_block, float* c, int64_t ldc, float* apack,
                    const float* bpack) {
  for (int64_t ic = row0; ic < row1; ic += MC) {
    const int64_t mc = std::min(MC, row1 - ic);
    pack_a(ta, mc, kc, ta ? a + pc * lda + ic : a + ic * lda + pc, lda, apack);
    for (int64_t jr = 0; jr < nc; jr += NR) {
      const int cols = static_cast<int>(std::min<int64_t>(NR, nc - jr));
      for (int64_t ir = 0; ir < mc; ir += MR) {
        const int rows = static_cast<int>(std::min<int64_t>(MR, mc - ir));
        micro_kernel(kc, apack + ir * kc, bpack + jr * kc, c + (ic + ir) * ldc + jc + jr, ldc, rows, cols, alpha,
                     beta_block);
      }
    }
  }
}

// The packed loop nest on one thread (jc: N blocks, pc: K blocks). `apack` holds one
// Blocks::a_floats() block, `bpack` one Blocks::b_floats() block.
void packed_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                 const float* b, int64_t ldb, float beta, float* c, int64_t ldc, float* apack, float* bpack) {
  const int64_t kc_max = k_block(k);
  for (int64_t jc = 0; jc < n; jc += NC) {
    const int64_t nc = std::min(NC, n - jc);
    const int64_t panels = (nc + NR - 1) / NR;
    for (int64_t pc = 0; pc < k; pc += kc_max) {
      const int64_t kc = std::min(kc_max, k - pc);
      pack_b(tb, kc, nc, tb ? b + jc * ldb + pc : b + pc * ldb + jc, ldb, bpack, 0, panels);
      multiply_block(ta, 0, m, jc, nc, pc, kc, alpha, a, lda, pc == 0 ? beta : 1.0f, c, ldc, apack, bpack);
    }
  }
}

// The same loop nest split over `parts` tasks that share each packed B block: per block, one pool run
// packs slices of its panels, a second multiplies each task's MR-aligned rows of A by it. The pool's
// join between the two is the only synchronisation, and a task never waits for another one, so a
// thread that the OS deschedules only delays the tasks it already took. `memory` holds one B block
// followed by one A block per task.
void packed_gemm_parallel(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc, int parts,
                          const Blocks& blocks, float* memory) {
  const int64_t kc_max = k_block(k);
  const int64_t row_tiles = (m + MR - 1) / MR;
  float* bpack = memory;
  for (int64_t jc = 0; jc < n; jc += NC) {
    const int64_t nc = std::min(NC, n - jc);
    const int64_t panels = (nc + NR - 1) / NR;
    for (int64_t pc = 0; pc < k; pc += kc_max) {
      const int64_t kc = std::min(kc_max, k - pc);
      const float* bsrc = tb ? b + jc * ldb + pc : b + pc * ldb + jc;
      pool::run_all([&](int task, int) {
        if (task >= parts) return;
        pack_b(tb, kc, nc, bsrc, ldb, bpack, panels * task / parts, panels * (task + 1) / parts);
      });
      const float beta_block = pc == 0 ? beta : 1.0f;
      pool::run_all([&](int task, int) {
        if (task >= parts) return;
        const int64_t row0 = std::min(m, row_tiles * task / parts * MR);
        const int64_t row1 = std::min(m, row_tiles * (task + 1) / parts * MR);
        float* apack = memory + blocks.b_floats() + task * blocks.a_floats();
        multiply_block(ta, row0, row1, jc, nc, pc, kc, alpha, a, lda, beta_block, c, ldc, apack, bpack);
      });
    }
  }
}

bool trivial(int64_t m, int64_t n, int64_t k, float beta, float* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return true;
  if (k <= 0) {
    scale_c(m, n, beta, c, ldc);
    return true;
  }
  return false;
}

void serial_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                 const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m * n * k < SMALL_MNK || m <= SMALL_ROWS) {
    unpacked_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, 1);
    return;
  }
  const Blocks blocks(m, n, k);
  float* memory = pack_memory(blocks.a_floats() + blocks.b_floats());
  packed_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, memory, memory + blocks.a_floats());
}

}  // namespace

void sgemm_serial(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                  const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (trivial(m, n, k, beta, c, ldc)) return;
  serial_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
           int64_t ldb, float beta, float* c, int64_t ldc) {
  if (trivial(m, n, k, beta, c, ldc)) return;
  const int threads = pool::threads();
  if (threads <= 1 || m * n * k < THREAD_MNK) {
    serial_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  if (m * n * k < SMALL_MNK || m <= SMALL_ROWS) {
    unpacked_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, threads);
    return;
  }
  const int64_t row_tiles = (m + MR - 1) / MR, col_tiles = (n + NR - 1) / NR;
  if (row_tiles >= 4 * threads || row_tiles >= col_tiles) {
    // Split M: one shared packed B block, a private A block per thread.
    const int size = static_cast<int>(std::min<int64_t>(threads, row_tiles));
    const Blocks blocks(m, n, k);
    float* memory = pack_memory(blocks.b_floats() + size * blocks.a_floats());
    packed_gemm_parallel(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, size, blocks, memory);
    return;
  }
  // Few rows, many columns: split N into independent products (each thread packs the small A itself).
  const int size = static_cast<int>(std::min<int64_t>(threads, col_tiles));
  const int64_t part_n = (col_tiles + size - 1) / size * NR;
  const Blocks blocks(m, part_n, k);
  const size_t per_thread = blocks.a_floats() + blocks.b_floats();
  float* memory = pack_memory(size * per_thread);
  pool::run_all([&](int tid, int) {
    if (tid >= size) return;
    const int64_t begin = std::min(n, col_tiles * tid / size * NR);
    const int64_t end = std::min(n, col_tiles * (tid + 1) / size * NR);
    if (begin >= end) return;
    float* apack = memory + tid * per_thread;
    packed_gemm(ta, tb, m, end - begin, k, alpha, a, lda, tb ? b + begin * ldb : b + begin, ldb, beta, c + begin, ldc,
                apack, apack + blocks.a_floats());
  });
}

// ---- binding ---------------------------------------------------------------------------------------
// Kernels.gemm: batched, with element offsets and batch strides (0 = an operand shared by the batch).
static napi_value gemm_binding(const Args& args) {
  const int64_t batch = args.i64(0);
  const bool ta = args.flag(1), tb = args.flag(2);
  const int64_t m = args.i64(3), n = args.i64(4), k = args.i64(5);
  const float alpha = static_cast<float>(args.num(6));
  const int64_t a_off = args.i64(8), lda = args.i64(9), sa = args.i64(10);
  const int64_t b_off = args.i64(12), ldb = args.i64(13), sb = args.i64(14);
  const float beta = static_cast<float>(args.num(15));
  const int64_t c_off = args.i64(17), ldc = args.i64(18), sc = args.i64(19);
  if (batch < 0 || m < 0 || n < 0 || k < 0)
    throw ArgError("gemm: batch, m, n, k must be non-negative (got " + std::to_string(batch) + ", " +
                   std::to_string(m) + ", " + std::to_string(n) + ", " + std::to_string(k) + ")");
  if (a_off < 0 || b_off < 0 || c_off < 0 || sa < 0 || sb < 0 || sc < 0)
    throw ArgError("gemm: offsets and batch strides must be non-negative");
  const int64_t a_rows = ta ? k : m, a_cols = ta ? m : k;
  const int64_t b_rows = tb ? n : k, b_cols = tb ? k : n;
  // Nothing is touched when C is empty, and A and B are not read when k = 0.
  const bool empty = batch == 0 || m == 0 || n == 0;
  const bool reads_ab = !empty && k > 0;
  if ((reads_ab && (lda < a_cols || ldb < b_cols)) || (!empty && ldc < n))
    throw ArgError("gemm: leading dimensions too small (lda " + std::to_string(lda) + ", ldb " + std::to_string(ldb) +
                   ", ldc " + std::to_string(ldc) + " for op(A) " + std::to_string(m) + "x" + std::to_string(k) +
                   ", op(B) " + std::to_string(k) + "x" + std::to_string(n) + ")");
  // Elements each buffer must hold: the last batch's last element + 1.
  auto need = [&](int64_t off, int64_t stride, int64_t rows, int64_t cols, int64_t ld) -> size_t {
    return static_cast<size_t>(off + (batch - 1) * stride + (rows - 1) * ld + cols);
  };
  float* a = args.f32(7, reads_ab ? need(a_off, sa, a_rows, a_cols, lda) : 0);
  float* b = args.f32(11, reads_ab ? need(b_off, sb, b_rows, b_cols, ldb) : 0);
  float* c = args.f32(16, empty ? 0 : need(c_off, sc, m, n, ldc));
  if (empty) return args.undefined();

  // Enough independent products to share out evenly: whole products per thread (sgemm_serial has
  // sgemm's numerics, so the bits are the same either way). Only when the C matrices do not overlap —
  // with a shared C (stride 0) the products must run in order.
  const int threads = pool::threads();
  const bool disjoint_c = sc >= (m - 1) * ldc + n;
  const bool even = batch % threads == 0 || batch >= 4 * threads;
  if (threads > 1 && batch >= threads && even && disjoint_c && batch * m * n * k >= THREAD_MNK) {
    pool::parallel_for(batch, 1, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; p++)
        sgemm_serial(ta, tb, m, n, k, alpha, a + a_off + p * sa, lda, b + b_off + p * sb, ldb, beta,
                     c + c_off + p * sc, ldc);
    });
    return args.undefined();
  }
  for (int64_t p = 0; p < batch; p++)
    sgemm(ta, tb, m, n, k, alpha, a + a_off + p * sa, lda, b + b_off + p * sb, ldb, beta, c + c_off + p * sc, ldc);
  return args.undefined();
}

void register_gemm(Registry& r) { r.add("gemm", gemm_binding); }

}  // namespace tensor_native
