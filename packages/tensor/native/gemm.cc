// Single-precision GEMM in the BLIS/GotoBLAS style: op(A) and op(B) are copied ("packed") into
// cache-sized, 64-byte-aligned panels laid out in exactly the order the register-blocked micro-kernel
// reads them, so the transposes are handled once by the packing and all four trans combinations run
// the same micro-kernel.
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
#include <new>
#include <string>

#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

#include "napi_util.h"
#include "threadpool.h"

namespace tensor_native {
namespace {

// ---- tile and cache-block sizes --------------------------------------------------------------------
// MR×NR is the register tile of C. KC·NR floats of B (one micro-panel) stay in L1 while the
// micro-kernel streams MR×KC panels of A from an MC×KC block held in L2; the KC×NC block of B lives
// in L3. Sized for Zen 4/5 (32–48 KB L1d, 1 MB L2 per core).
#if defined(__AVX512F__)
#ifndef GEMM_MR
#define GEMM_MR 12
#endif
constexpr int MR = GEMM_MR;
constexpr int NR = 32;
#elif defined(__AVX2__) && defined(__FMA__)
constexpr int MR = 6;
constexpr int NR = 16;
#else
constexpr int MR = 4;
constexpr int NR = 8;
#endif

#ifndef GEMM_KC
#define GEMM_KC 256
#endif
#ifndef GEMM_MC
#define GEMM_MC (MR * 40)
#endif
#ifndef GEMM_NC
#define GEMM_NC 4096
#endif
constexpr int64_t KC = GEMM_KC;
constexpr int64_t MC = GEMM_MC / MR * MR;
constexpr int64_t NC = GEMM_NC / NR * NR;

// Problems below this many multiply-adds run unpacked on the calling thread.
constexpr int64_t SMALL_MNK = 32 * 1024;
// Below this many multiply-adds a packed problem still runs on one thread.
constexpr int64_t THREAD_MNK = 256 * 1024;

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
// Packed A: for each group of MR rows, kc columns of MR consecutive values (rows past m are zero).
// A(i, l) = a[trans ? l·lda + i : i·lda + l], with a already offset to the block's corner.
void pack_a(bool trans, int64_t mc, int64_t kc, const float* a, int64_t lda, float* out) {
  for (int64_t i0 = 0; i0 < mc; i0 += MR) {
    const int64_t rows = std::min<int64_t>(MR, mc - i0);
    if (trans) {
      for (int64_t l = 0; l < kc; l++) {
        const float* src = a + l * lda + i0;
        int64_t r = 0;
        for (; r < rows; r++) out[r] = src[r];
        for (; r < MR; r++) out[r] = 0.0f;
        out += MR;
      }
    } else if (rows == MR) {
      const float* src = a + i0 * lda;
      for (int64_t l = 0; l < kc; l++) {
        for (int r = 0; r < MR; r++) out[r] = src[r * lda + l];
        out += MR;
      }
    } else {
      const float* src = a + i0 * lda;
      for (int64_t l = 0; l < kc; l++) {
        int64_t r = 0;
        for (; r < rows; r++) out[r] = src[r * lda + l];
        for (; r < MR; r++) out[r] = 0.0f;
        out += MR;
      }
    }
  }
}

// Packed B: for each group of NR columns, kc rows of NR consecutive values (columns past n are zero).
// B(l, j) = b[trans ? j·ldb + l : l·ldb + j], with b already offset to the block's corner.
void pack_b(bool trans, int64_t kc, int64_t nc, const float* b, int64_t ldb, float* out) {
  for (int64_t j0 = 0; j0 < nc; j0 += NR) {
    const int64_t cols = std::min<int64_t>(NR, nc - j0);
    if (!trans) {
      for (int64_t l = 0; l < kc; l++) {
        const float* src = b + l * ldb + j0;
        int64_t c = 0;
        for (; c < cols; c++) out[c] = src[c];
        for (; c < NR; c++) out[c] = 0.0f;
        out += NR;
      }
    } else if (cols == NR) {
      const float* src = b + j0 * ldb;
      for (int64_t l = 0; l < kc; l++) {
        for (int c = 0; c < NR; c++) out[c] = src[c * ldb + l];
        out += NR;
      }
    } else {
      const float* src = b + j0 * ldb;
      for (int64_t l = 0; l < kc; l++) {
        int64_t c = 0;
        for (; c < cols; c++) out[c] = src[c * ldb + l];
        for (; c < NR; c++) out[c] = 0.0f;
        out += NR;
      }
    }
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
// Per-thread packing buffers, grown on demand and kept for the thread's lifetime.
struct PackBuffers {
  float* a = nullptr;
  float* b = nullptr;
  size_t a_len = 0, b_len = 0;
  ~PackBuffers() {
    std::free(a);
    std::free(b);
  }
  static float* grow(float*& p, size_t& len, size_t want) {
    if (len < want) {
      std::free(p);
      p = static_cast<float*>(std::aligned_alloc(64, (want * sizeof(float) + 63) / 64 * 64));
      if (!p) {
        len = 0;
        throw std::bad_alloc();
      }
      len = want;
    }
    return p;
  }
};

PackBuffers& buffers() {
  thread_local PackBuffers buf;
  return buf;
}

// The K blocking: the number of blocks and their size depend on k alone.
int64_t k_block(int64_t k) {
  const int64_t blocks = (k + KC - 1) / KC;
  return (k + blocks - 1) / blocks;
}

// C = beta·C for an m×n block (k = 0, or alpha = 0 is not special-cased: it still multiplies).
void scale_c(int64_t m, int64_t n, float beta, float* c, int64_t ldc) {
  for (int64_t i = 0; i < m; i++) {
    float* cr = c + i * ldc;
    if (beta == 0.0f)
      for (int64_t j = 0; j < n; j++) cr[j] = 0.0f;
    else
      for (int64_t j = 0; j < n; j++) cr[j] = beta * cr[j];
  }
}

// Unpacked product for small problems: row i of C accumulates rows of op(B) scaled by A(i, l), in
// the same l order (and for k ≤ KC, the same rounding) as the packed kernel.
template <bool TB>
void small_gemm(bool ta, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  constexpr int64_t CHUNK = 256;
  float acc[CHUNK];
  const int64_t kc = k_block(k);
  for (int64_t i = 0; i < m; i++) {
    float* cr = c + i * ldc;
    for (int64_t j0 = 0; j0 < n; j0 += CHUNK) {
      const int64_t cols = std::min(CHUNK, n - j0);
      for (int64_t p0 = 0; p0 < k; p0 += kc) {
        const int64_t p1 = std::min(k, p0 + kc);
        for (int64_t j = 0; j < cols; j++) acc[j] = 0.0f;
        for (int64_t l = p0; l < p1; l++) {
          const float ail = ta ? a[l * lda + i] : a[i * lda + l];
          if (TB) {
            const float* bl = b + j0 * ldb + l;
            for (int64_t j = 0; j < cols; j++) acc[j] = madd(ail, bl[j * ldb], acc[j]);
          } else {
            const float* bl = b + l * ldb + j0;
            for (int64_t j = 0; j < cols; j++) acc[j] = madd(ail, bl[j], acc[j]);
          }
        }
        const float beta_block = p0 == 0 ? beta : 1.0f;
        for (int64_t j = 0; j < cols; j++) cr[j0 + j] = finish(acc[j], alpha, beta_block, cr[j0 + j]);
      }
    }
  }
}

// The packed loop nest for one (sub)problem on the calling thread.
void packed_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                 const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  PackBuffers& buf = buffers();
  const int64_t kc_max = k_block(k);
  const int64_t nc_max = std::min(NC, (n + NR - 1) / NR * NR);
  const int64_t mc_max = std::min(MC, (m + MR - 1) / MR * MR);
  float* bpack = PackBuffers::grow(buf.b, buf.b_len, static_cast<size_t>(kc_max * nc_max));
  float* apack = PackBuffers::grow(buf.a, buf.a_len, static_cast<size_t>(kc_max * mc_max));
  for (int64_t jc = 0; jc < n; jc += NC) {
    const int64_t nc = std::min(NC, n - jc);
    for (int64_t pc = 0; pc < k; pc += kc_max) {
      const int64_t kc = std::min(kc_max, k - pc);
      pack_b(tb, kc, nc, tb ? b + jc * ldb + pc : b + pc * ldb + jc, ldb, bpack);
      const float beta_block = pc == 0 ? beta : 1.0f;
      for (int64_t ic = 0; ic < m; ic += MC) {
        const int64_t mc = std::min(MC, m - ic);
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
  if (m * n * k < SMALL_MNK) {
    if (tb)
      small_gemm<true>(ta, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    else
      small_gemm<false>(ta, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else {
    packed_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
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
  // Split the longer of M and N into whole tiles, one contiguous range per thread. Each thread packs
  // its own panels (the other operand is packed twice, which costs O(1/length) of the work).
  const bool split_m = (m + MR - 1) / MR >= (n + NR - 1) / NR;
  const int64_t tile = split_m ? MR : NR;
  const int64_t units = ((split_m ? m : n) + tile - 1) / tile;
  const int parts = static_cast<int>(std::min<int64_t>(threads, units));
  pool::run_all([&](int tid, int) {
    if (tid >= parts) return;
    const int64_t begin = std::min(units * tid / parts * tile, split_m ? m : n);
    const int64_t end = std::min(units * (tid + 1) / parts * tile, split_m ? m : n);
    if (begin >= end) return;
    if (split_m)
      serial_gemm(ta, tb, end - begin, n, k, alpha, ta ? a + begin : a + begin * lda, lda, b, ldb, beta,
                  c + begin * ldc, ldc);
    else
      serial_gemm(ta, tb, m, end - begin, k, alpha, a, lda, tb ? b + begin * ldb : b + begin, ldb, beta, c + begin,
                  ldc);
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

  // Many small independent products: one whole product per thread (same numerics as sgemm). Only when
  // the C matrices do not overlap — with a shared C (stride 0) the products must run in order.
  const bool disjoint_c = sc >= (m - 1) * ldc + n;
  if (batch > 1 && disjoint_c && pool::threads() > 1 && m * n * k < 4 * THREAD_MNK) {
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
