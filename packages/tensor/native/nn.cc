// Transformer building blocks (see src/backend/kernels.ts for each contract): embedding, RMSNorm,
// rotary embedding, SwiGLU, softmax / log-softmax and row gathers. Row kernels thread over rows;
// every element's result is independent of the thread split, so any thread count gives the same bits.
// Softmax-family sums accumulate in float64; exp is a vectorised Cephes polynomial (nn_simd.h).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "napi_util.h"
#include "nn_simd.h"
#include "threadpool.h"

namespace tensor_native {
namespace {

using namespace nn_simd;
constexpr int64_t W = kWidth;

// Below this many floats per thread, threading costs more than it saves.
constexpr int64_t kMinWorkPerThread = 16384;

int64_t grain_for(int64_t work_per_item) {
  return std::max<int64_t>(1, kMinWorkPerThread / std::max<int64_t>(1, work_per_item));
}

int64_t size_arg(const Args& args, size_t i, const char* what) {
  int64_t v = args.i64(i);
  if (v < 0) throw ArgError(std::string(args.name) + ": " + what + " must be ≥ 0, got " + std::to_string(v));
  return v;
}

[[noreturn]] void index_out_of_range(const char* what, int64_t r, int64_t value, const std::string& bound) {
  throw std::out_of_range(std::string(what) + "[" + std::to_string(r) + "] = " + std::to_string(value) +
                          " is out of range [0, " + bound + ")");
}

// ---- row helpers ---------------------------------------------------------------------------------

float row_max(const float* x, int64_t n) {
  vf m0 = set1(-INFINITY), m1 = m0;
  int64_t j = 0;
  for (; j + 2 * W <= n; j += 2 * W) {
    m0 = max(m0, load(x + j));
    m1 = max(m1, load(x + j + W));
  }
  for (; j + W <= n; j += W) m0 = max(m0, load(x + j));
  if (j < n) m1 = max(m1, load_part(x + j, n - j, -INFINITY));
  return reduce_max(max(m0, m1));
}

float sum_squares(const float* x, int64_t n) {
  vf s0 = set1(0.0f), s1 = s0;
  int64_t j = 0;
  for (; j + 2 * W <= n; j += 2 * W) {
    vf a = load(x + j), b = load(x + j + W);
    s0 = fmadd(a, a, s0);
    s1 = fmadd(b, b, s1);
  }
  for (; j + W <= n; j += W) {
    vf a = load(x + j);
    s0 = fmadd(a, a, s0);
  }
  if (j < n) {
    vf a = load_part(x + j, n - j, 0.0f);
    s1 = fmadd(a, a, s1);
  }
  return reduce_add(add(s0, s1));
}

// ---- embedding -------------------------------------------------------------------------------------

// Checks every id against the table's row count before anything is written. Args can check a
// minimum length but does not report the length, so the row count is searched for only on the error
// path (to name the bound in the message).
float* checked_table(const Args& args, size_t arg, const int32_t* ids, int64_t rows, int64_t dim) {
  float* table = args.f32(arg);
  int64_t min_id = 0, max_id = -1;
  for (int64_t r = 0; r < rows; r++) {
    min_id = std::min<int64_t>(min_id, ids[r]);
    max_id = std::max<int64_t>(max_id, ids[r]);
  }
  if (min_id >= 0) {
    if (dim == 0) return table;
    try {
      return args.f32(arg, static_cast<size_t>((max_id + 1) * dim));
    } catch (const ArgError&) {
    }
  }
  int64_t vocab = std::numeric_limits<int64_t>::max();
  if (dim > 0) {
    auto fits = [&](int64_t k) {
      try {
        args.f32(arg, static_cast<size_t>(k * dim));
        return true;
      } catch (const ArgError&) {
        return false;
      }
    };
    int64_t lo = 0, hi = 1;
    while (fits(hi)) {
      lo = hi;
      hi *= 2;
    }
    while (hi - lo > 1) {
      int64_t mid = lo + (hi - lo) / 2;
      (fits(mid) ? lo : hi) = mid;
    }
    vocab = lo;
  }
  for (int64_t r = 0; r < rows; r++)
    if (ids[r] < 0 || ids[r] >= vocab)
      index_out_of_range("ids", r, ids[r], dim > 0 ? std::to_string(vocab) : "Infinity");
  return table;  // not reached
}

napi_value embedding_binding(const Args& args) {
  int64_t rows = size_arg(args, 2, "rows"), dim = size_arg(args, 3, "dim");
  const int32_t* ids = args.i32(1, rows);
  float* out = args.f32(4, rows * dim);
  const float* weight = checked_table(args, 0, ids, rows, dim);
  pool::parallel_for(rows, grain_for(dim), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; r++)
      std::memcpy(out + r * dim, weight + static_cast<int64_t>(ids[r]) * dim, sizeof(float) * dim);
  });
  return args.undefined();
}

// Threads split dim into 64-byte column blocks; each walks every row in order, so repeated ids sum
// in row order (bit-identical to ref for any thread count) and no two threads share a cache line.
napi_value embedding_backward_binding(const Args& args) {
  int64_t rows = size_arg(args, 2, "rows"), dim = size_arg(args, 3, "dim");
  const float* d_out = args.f32(0, rows * dim);
  const int32_t* ids = args.i32(1, rows);
  float* d_weight = checked_table(args, 4, ids, rows, dim);
  constexpr int64_t kBlock = 16;
  int64_t blocks = (dim + kBlock - 1) / kBlock;
  pool::parallel_for(blocks, grain_for(rows * kBlock), [&](int64_t b0, int64_t b1) {
    int64_t j0 = b0 * kBlock, j1 = std::min(dim, b1 * kBlock);
    for (int64_t r = 0; r < rows; r++) {
      float* __restrict dst = d_weight + static_cast<int64_t>(ids[r]) * dim;
      const float* __restrict src = d_out + r * dim;
      for (int64_t j = j0; j < j1; j++) dst[j] += src[j];
    }
  });
  return args.undefined();
}

// ---- rmsnorm ---------------------------------------------------------------------------------------

napi_value rmsnorm_binding(const Args& args) {
  int64_t rows = size_arg(args, 2, "rows"), dim = size_arg(args, 3, "dim");
  const float* x = args.f32(0, rows * dim);
  const float* w = args.f32(1, dim);
  double eps = args.num(4);
  float* y = args.f32(5, rows * dim);
  float* rstd = args.f32(6, rows);
  pool::parallel_for(rows, grain_for(dim), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; r++) {
      const float* xr = x + r * dim;
      float* yr = y + r * dim;
      float s = static_cast<float>(1.0 / std::sqrt(static_cast<double>(sum_squares(xr, dim)) / dim + eps));
      rstd[r] = s;
      vf sv = set1(s);
      int64_t j = 0;
      for (; j + W <= dim; j += W) store(yr + j, mul(mul(load(xr + j), sv), load(w + j)));
      if (j < dim) {
        int64_t n = dim - j;
        store_part(yr + j, n, mul(mul(load_part(xr + j, n, 0.0f), sv), load_part(w + j, n, 0.0f)));
      }
    }
  });
  return args.undefined();
}

// dx_j = s·w_j·dy_j − (s³/D)·x_j·Σ_i dy_i·w_i·x_i and dw_j += Σ_rows dy_j·x_j·s. Rows are cut into a
// fixed number of blocks (a function of rows only, not of the thread count); each block sums its
// rows' dw terms into its own partial, and the partials are added in block order.
void rmsnorm_backward_rows(const float* dy, const float* x, const float* w, const float* rstd, int64_t r0, int64_t r1,
                           int64_t dim, float* dx, float* dw_partial, bool accumulate) {
  std::fill(dw_partial, dw_partial + dim, 0.0f);
  for (int64_t r = r0; r < r1; r++) {
    const float* dyr = dy + r * dim;
    const float* xr = x + r * dim;
    float* dxr = dx + r * dim;
    vf dot0 = set1(0.0f), dot1 = dot0;
    int64_t j = 0;
    for (; j + 2 * W <= dim; j += 2 * W) {
      dot0 = fmadd(mul(load(dyr + j), load(w + j)), load(xr + j), dot0);
      dot1 = fmadd(mul(load(dyr + j + W), load(w + j + W)), load(xr + j + W), dot1);
    }
    for (; j + W <= dim; j += W) dot0 = fmadd(mul(load(dyr + j), load(w + j)), load(xr + j), dot0);
    if (j < dim) {
      int64_t n = dim - j;
      dot1 = fmadd(mul(load_part(dyr + j, n, 0.0f), load_part(w + j, n, 0.0f)), load_part(xr + j, n, 0.0f), dot1);
    }
    const double s = rstd[r];
    const vf sv = set1(rstd[r]);
    const vf cv = set1(static_cast<float>(s * s * s * reduce_add(add(dot0, dot1)) / dim));
    auto step = [&](vf dyv, vf xv, vf wv, vf dxv, vf pv, vf* dx_out, vf* p_out) {
      vf g = fnmadd(cv, xv, mul(mul(sv, wv), dyv));
      *dx_out = accumulate ? add(dxv, g) : g;
      *p_out = fmadd(mul(dyv, xv), sv, pv);
    };
    vf g, p;
    for (j = 0; j + W <= dim; j += W) {
      step(load(dyr + j), load(xr + j), load(w + j), accumulate ? load(dxr + j) : set1(0.0f), load(dw_partial + j), &g,
           &p);
      store(dxr + j, g);
      store(dw_partial + j, p);
    }
    if (j < dim) {
      int64_t n = dim - j;
      step(load_part(dyr + j, n, 0.0f), load_part(xr + j, n, 0.0f), load_part(w + j, n, 0.0f),
           accumulate ? load_part(dxr + j, n, 0.0f) : set1(0.0f), load_part(dw_partial + j, n, 0.0f), &g, &p);
      store_part(dxr + j, n, g);
      store_part(dw_partial + j, n, p);
    }
  }
}

napi_value rmsnorm_backward_binding(const Args& args) {
  int64_t rows = size_arg(args, 4, "rows"), dim = size_arg(args, 5, "dim");
  const float* dy = args.f32(0, rows * dim);
  const float* x = args.f32(1, rows * dim);
  const float* w = args.f32(2, dim);
  const float* rstd = args.f32(3, rows);
  float* dx = args.f32(6, rows * dim);
  float* dw = args.f32(7, dim);
  bool accumulate = args.flag(8);
  if (rows == 0 || dim == 0) return args.undefined();
  constexpr int64_t kMaxBlocks = 32, kMinRowsPerBlock = 8;
  const int64_t blocks = std::min(kMaxBlocks, (rows + kMinRowsPerBlock - 1) / kMinRowsPerBlock);
  std::vector<float> partial(static_cast<size_t>(blocks * dim));
  pool::parallel_for(blocks, grain_for(rows / blocks * dim), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; b++)
      rmsnorm_backward_rows(dy, x, w, rstd, rows * b / blocks, rows * (b + 1) / blocks, dim, dx,
                            partial.data() + b * dim, accumulate);
  });
  for (int64_t j = 0; j < dim; j++) {
    float sum = partial[j];
    for (int64_t b = 1; b < blocks; b++) sum += partial[b * dim + j];
    dw[j] += sum;
  }
  return args.undefined();
}

// ---- rope ------------------------------------------------------------------------------------------

// One (token, head) vector: out = x·cos ∓ rotate_half(x)·sin with each product rounded on its own
// (no FMA), as PyTorch computes q·cos + rotate_half(q)·sin. `sin` already carries the sign for inverse.
inline void rotate_half_row(const float* x, float* out, const float* cos, const float* sin, int64_t half) {
  auto rotate = [](vf x1, vf x2, vf c, vf s, vf* o1, vf* o2) {
    *o1 = sub(opaque(mul(x1, c)), opaque(mul(x2, s)));
    *o2 = add(opaque(mul(x2, c)), opaque(mul(x1, s)));
  };
  vf o1, o2;
  int64_t i = 0;
  for (; i + W <= half; i += W) {
    rotate(load(x + i), load(x + half + i), load(cos + i), load(sin + i), &o1, &o2);
    store(out + i, o1);
    store(out + half + i, o2);
  }
  if (i < half) {
    int64_t n = half - i;
    rotate(load_part(x + i, n, 0.0f), load_part(x + half + i, n, 0.0f), load_part(cos + i, n, 0.0f),
           load_part(sin + i, n, 0.0f), &o1, &o2);
    store_part(out + i, n, o1);
    store_part(out + half + i, n, o2);
  }
}

// cos/sin of float32(pos)·inv_freq (a float32 product), each correctly rounded from float64.
void rope_angles(int32_t pos, const float* inv_freq, int64_t half, float* cos, float* sin) {
  const float p = static_cast<float>(pos);
  for (int64_t i = 0; i < half; i++) {
    const float angle = p * inv_freq[i];
    cos[i] = static_cast<float>(std::cos(static_cast<double>(angle)));
    sin[i] = static_cast<float>(std::sin(static_cast<double>(angle)));
  }
}

// cos/sin tables for positions [0, positions) of one (theta, dim), kept across calls: a training
// step applies rope to the same positions many times, and cos/sin cost more than the rotation.
struct RopeTable {
  std::mutex mu;
  double theta = 0.0;
  int64_t dim = 0, positions = 0;
  std::vector<float> inv_freq, cos, sin;  // cos/sin: [positions, dim/2]
};
constexpr int64_t kRopeTableMaxFloats = int64_t{1} << 22;  // 16 MiB per table (65536 positions at dim 128)

RopeTable& rope_table() {
  static RopeTable table;
  return table;
}

void extend_rope_table(RopeTable& t, int64_t positions) {
  const int64_t half = t.dim / 2;
  if (positions <= t.positions) return;
  int64_t grown = std::min(std::max(positions, 2 * t.positions), kRopeTableMaxFloats / std::max<int64_t>(1, half));
  grown = std::max(grown, positions);
  t.cos.resize(static_cast<size_t>(grown * half));
  t.sin.resize(static_cast<size_t>(grown * half));
  pool::parallel_for(grown - t.positions, grain_for(32 * half), [&](int64_t p0, int64_t p1) {
    for (int64_t p = t.positions + p0; p < t.positions + p1; p++)
      rope_angles(static_cast<int32_t>(p), t.inv_freq.data(), half, t.cos.data() + p * half, t.sin.data() + p * half);
  });
  t.positions = grown;
}

napi_value rope_binding(const Args& args) {
  int64_t tokens = size_arg(args, 2, "tokens"), heads = size_arg(args, 3, "heads"), dim = size_arg(args, 4, "dim");
  if (dim % 2 != 0) throw std::invalid_argument("dim must be even, got " + std::to_string(dim));
  const float* x = args.f32(0, tokens * heads * dim);
  const int32_t* positions = args.i32(1, tokens);
  double theta = args.num(5);
  bool inverse = args.flag(6);
  float* out = args.f32(7, tokens * heads * dim);
  const int64_t half = dim / 2, row = heads * dim;
  if (tokens == 0 || row == 0) return args.undefined();

  std::vector<float> inv_freq(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; i++)
    inv_freq[i] = static_cast<float>(1.0 / std::pow(theta, static_cast<double>(2 * i) / static_cast<double>(dim)));
  int32_t min_pos = positions[0], max_pos = positions[0];
  for (int64_t t = 1; t < tokens; t++) {
    min_pos = std::min(min_pos, positions[t]);
    max_pos = std::max(max_pos, positions[t]);
  }

  RopeTable& table = rope_table();
  std::lock_guard<std::mutex> lock(table.mu);
  const bool cached = min_pos >= 0 && (static_cast<int64_t>(max_pos) + 1) * half <= kRopeTableMaxFloats;
  if (cached) {
    if (table.theta != theta || table.dim != dim) {
      table.theta = theta;
      table.dim = dim;
      table.positions = 0;
      table.inv_freq = inv_freq;
    }
    extend_rope_table(table, static_cast<int64_t>(max_pos) + 1);
  }
  pool::parallel_for(tokens, grain_for(row), [&](int64_t t0, int64_t t1) {
    std::vector<float> cos_buf(static_cast<size_t>(half)), sin_buf(static_cast<size_t>(half));
    for (int64_t t = t0; t < t1; t++) {
      const float* cos = cos_buf.data();
      const float* sin = sin_buf.data();
      if (cached) {
        cos = table.cos.data() + static_cast<int64_t>(positions[t]) * half;
        sin = table.sin.data() + static_cast<int64_t>(positions[t]) * half;
      } else {
        rope_angles(positions[t], inv_freq.data(), half, cos_buf.data(), sin_buf.data());
      }
      if (inverse) {  // rotating by −angle: cos(−a) = cos a, sin(−a) = −sin a
        for (int64_t i = 0; i < half; i++) sin_buf[i] = -sin[i];
        sin = sin_buf.data();
      }
      for (int64_t h = 0; h < heads; h++)
        rotate_half_row(x + t * row + h * dim, out + t * row + h * dim, cos, sin, half);
    }
  });
  return args.undefined();
}

// ---- swiglu ----------------------------------------------------------------------------------------

// Runs fn(j, n) over [0, count) in vector steps (n = lanes in use, < W only for the last step),
// threaded over the pool for large counts.
template <typename Fn>
void elementwise(int64_t count, Fn fn) {
  pool::parallel_for(count, kMinWorkPerThread, [&](int64_t i0, int64_t i1) {
    int64_t i = i0;
    for (; i + W <= i1; i += W) fn(i, W);
    if (i < i1) fn(i, i1 - i);
  });
}

inline vf load_n(const float* p, int64_t n) { return n == W ? load(p) : load_part(p, n, 0.0f); }
inline void store_n(float* p, int64_t n, vf v) {
  if (n == W)
    store(p, v);
  else
    store_part(p, n, v);
}

napi_value swiglu_binding(const Args& args) {
  int64_t n = size_arg(args, 3, "n");
  const float* g = args.f32(0, n);
  const float* u = args.f32(1, n);
  float* out = args.f32(2, n);
  const vf one = set1(1.0f), zero = set1(0.0f);
  elementwise(n, [&](int64_t i, int64_t lanes) {
    vf gv = load_n(g + i, lanes);
    vf silu = div(gv, add(one, exp(sub(zero, gv))));
    store_n(out + i, lanes, mul(silu, load_n(u + i, lanes)));
  });
  return args.undefined();
}

napi_value swiglu_backward_binding(const Args& args) {
  int64_t n = size_arg(args, 5, "n");
  const float* g = args.f32(0, n);
  const float* u = args.f32(1, n);
  const float* d_out = args.f32(2, n);
  float* dg = args.f32(3, n);
  float* du = args.f32(4, n);
  bool accumulate = args.flag(6);
  const vf one = set1(1.0f), zero = set1(0.0f);
  elementwise(n, [&](int64_t i, int64_t lanes) {
    vf gv = load_n(g + i, lanes), uv = load_n(u + i, lanes), dov = load_n(d_out + i, lanes);
    vf e = exp(sub(zero, gv));
    vf s = div(one, add(one, e));
    // 1 − s = e·s for g ≥ 0 (no cancellation when s ≈ 1); for g < 0, 1 − s is exact enough and e may be Inf.
    vf one_minus_s = select_nonneg(gv, mul(e, s), sub(one, s));
    vf d_silu = mul(s, fmadd(gv, one_minus_s, one));
    vf grad_g = mul(mul(dov, uv), d_silu);
    vf grad_u = mul(dov, mul(gv, s));
    if (accumulate) {
      grad_g = add(load_n(dg + i, lanes), grad_g);
      grad_u = add(load_n(du + i, lanes), grad_u);
    }
    store_n(dg + i, lanes, grad_g);
    store_n(du + i, lanes, grad_u);
  });
  return args.undefined();
}

// ---- softmax / log-softmax -------------------------------------------------------------------------

// A row whose entries are all −Inf has max −Inf and x − max = NaN, so its output is NaN (as in
// PyTorch); any finite entry makes the row NaN-free.
template <typename RowFn>
void for_rows(int64_t rows, int64_t n, RowFn fn) {
  if (n == 0) return;
  pool::parallel_for(rows, grain_for(n), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; r++) fn(r);
  });
}

napi_value softmax_binding(const Args& args) {
  int64_t rows = size_arg(args, 1, "rows"), n = size_arg(args, 2, "n");
  const float* x = args.f32(0, rows * n);
  float* out = args.f32(3, rows * n);
  for_rows(rows, n, [&](int64_t r) {
    const float* xr = x + r * n;
    float* outr = out + r * n;
    const vf m = set1(row_max(xr, n));
    SumF64 sum;
    int64_t j = 0;
    for (; j + W <= n; j += W) {
      vf e = exp_difference(load(xr + j), m);
      store(outr + j, e);
      add_to(sum, e);
    }
    if (j < n) {
      vf e = exp_difference(load_part(xr + j, n - j, -INFINITY), m);  // padding lanes give e^−Inf = 0
      store_part(outr + j, n - j, e);
      add_to(sum, e);
    }
    const vf inv = set1(static_cast<float>(1.0 / total(sum)));
    for (j = 0; j + W <= n; j += W) store(outr + j, mul(load(outr + j), inv));
    if (j < n) store_part(outr + j, n - j, mul(load_part(outr + j, n - j, 0.0f), inv));
  });
  return args.undefined();
}

napi_value log_softmax_binding(const Args& args) {
  int64_t rows = size_arg(args, 1, "rows"), n = size_arg(args, 2, "n");
  const float* x = args.f32(0, rows * n);
  float* out = args.f32(3, rows * n);
  for_rows(rows, n, [&](int64_t r) {
    const float* xr = x + r * n;
    float* outr = out + r * n;
    const vf m = set1(row_max(xr, n));
    SumF64 sum;
    int64_t j = 0;
    for (; j + W <= n; j += W) add_to(sum, exp_difference(load(xr + j), m));
    if (j < n) add_to(sum, exp_difference(load_part(xr + j, n - j, -INFINITY), m));
    const vf log_sum = set1(static_cast<float>(std::log(total(sum))));
    // (x − max) ≤ 0 and log_sum ≥ 0: the subtraction cannot cancel.
    for (j = 0; j + W <= n; j += W) store(outr + j, sub(sub(load(xr + j), m), log_sum));
    if (j < n) store_part(outr + j, n - j, sub(sub(load_part(xr + j, n - j, 0.0f), m), log_sum));
  });
  return args.undefined();
}

napi_value softmax_backward_binding(const Args& args) {
  int64_t rows = size_arg(args, 2, "rows"), n = size_arg(args, 3, "n");
  const float* y = args.f32(0, rows * n);
  const float* dy = args.f32(1, rows * n);
  float* dx = args.f32(4, rows * n);
  bool accumulate = args.flag(5);
  for_rows(rows, n, [&](int64_t r) {
    const float *yr = y + r * n, *dyr = dy + r * n;
    float* dxr = dx + r * n;
    SumF64 dot;
    int64_t j = 0;
    for (; j + W <= n; j += W) add_product_to(dot, load(yr + j), load(dyr + j));
    if (j < n) add_product_to(dot, load_part(yr + j, n - j, 0.0f), load_part(dyr + j, n - j, 0.0f));
    const vf dotv = set1(static_cast<float>(total(dot)));
    for (j = 0; j < n; j += W) {
      const int64_t lanes = std::min(W, n - j);
      vf g = mul(load_n(yr + j, lanes), sub(load_n(dyr + j, lanes), dotv));
      store_n(dxr + j, lanes, accumulate ? add(load_n(dxr + j, lanes), g) : g);
    }
  });
  return args.undefined();
}

napi_value log_softmax_backward_binding(const Args& args) {
  int64_t rows = size_arg(args, 2, "rows"), n = size_arg(args, 3, "n");
  const float* y = args.f32(0, rows * n);
  const float* dy = args.f32(1, rows * n);
  float* dx = args.f32(4, rows * n);
  bool accumulate = args.flag(5);
  for_rows(rows, n, [&](int64_t r) {
    const float *yr = y + r * n, *dyr = dy + r * n;
    float* dxr = dx + r * n;
    SumF64 sum;
    int64_t j = 0;
    for (; j + W <= n; j += W) add_to(sum, load(dyr + j));
    if (j < n) add_to(sum, load_part(dyr + j, n - j, 0.0f));
    const vf sumv = set1(static_cast<float>(total(sum)));
    for (j = 0; j < n; j += W) {
      const int64_t lanes = std::min(W, n - j);
      vf g = fnmadd(exp(load_n(yr + j, lanes)), sumv, load_n(dyr + j, lanes));
      store_n(dxr + j, lanes, accumulate ? add(load_n(dxr + j, lanes), g) : g);
    }
  });
  return args.undefined();
}

// ---- row gathers -----------------------------------------------------------------------------------

void check_row_indices(const int32_t* idx, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; r++)
    if (idx[r] < 0 || idx[r] >= n) index_out_of_range("idx", r, idx[r], std::to_string(n));
}

napi_value gather_rows_binding(const Args& args) {
  int64_t rows = size_arg(args, 2, "rows"), n = size_arg(args, 3, "n");
  const float* x = args.f32(0, rows * n);
  const int32_t* idx = args.i32(1, rows);
  float* out = args.f32(4, rows);
  check_row_indices(idx, rows, n);
  for (int64_t r = 0; r < rows; r++) out[r] = x[r * n + idx[r]];
  return args.undefined();
}

napi_value gather_rows_backward_binding(const Args& args) {
  int64_t rows = size_arg(args, 2, "rows"), n = size_arg(args, 3, "n");
  const float* d_out = args.f32(0, rows);
  const int32_t* idx = args.i32(1, rows);
  float* dx = args.f32(4, rows * n);
  check_row_indices(idx, rows, n);
  for (int64_t r = 0; r < rows; r++) dx[r * n + idx[r]] += d_out[r];
  return args.undefined();
}

}  // namespace

void register_nn(Registry& r) {
  r.add("embedding", embedding_binding);
  r.add("embeddingBackward", embedding_backward_binding);
  r.add("rmsnorm", rmsnorm_binding);
  r.add("rmsnormBackward", rmsnorm_backward_binding);
  r.add("rope", rope_binding);
  r.add("swiglu", swiglu_binding);
  r.add("swigluBackward", swiglu_backward_binding);
  r.add("softmax", softmax_binding);
  r.add("softmaxBackward", softmax_backward_binding);
  r.add("logSoftmax", log_softmax_binding);
  r.add("logSoftmaxBackward", log_softmax_backward_binding);
  r.add("gatherRows", gather_rows_binding);
  r.add("gatherRowsBackward", gather_rows_backward_binding);
}

}  // namespace tensor_native
