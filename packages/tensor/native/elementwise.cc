// Data movement, elementwise ops and reductions (see src/backend/kernels.ts for the contract).
//
// Determinism: every elementwise result is computed lane-independently by the same code in the
// vector body and in the tail (tails run through a padded stack buffer), so the output does not
// depend on how the pool splits the work. Reductions use a fixed order that does not depend on the
// thread count either:
// - sums accumulate in f64: a row is cut into fixed blocks of kBlock elements, a block is summed in
//   8 interleaved lanes (lane l takes elements l, l+8, ...) combined by a fixed pairwise tree, and
//   the block sums are added in block order; column sums (inner > 1) add rows in order. Against
//   ref's sequential f64 sum the difference is ~1e-16 relative before the final rounding to f32;
// - max/min propagate NaN and are order-independent otherwise (up to the sign of zero).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "elementwise_simd.h"
#include "napi_util.h"
#include "threadpool.h"

namespace tensor_native {
namespace {

using simd::kWidth;
using simd::VF;

// Grains (elements per thread at least) so that small inputs run inline on the caller.
constexpr int64_t kGrainCopy = 1 << 16;
constexpr int64_t kGrainCheap = 1 << 15;
constexpr int64_t kGrainTranscendental = 1 << 13;
constexpr int kMaxRank = 8;

int64_t count_arg(const Args& args, size_t i) {
  int64_t n = args.i64(i);
  if (n < 0) throw ArgError(std::string(args.name) + ": argument " + std::to_string(i) + " must be ≥ 0");
  return n;
}

// ---- lane-wise maps with a padded tail -------------------------------------------------------------

// out[i] = f(x[i]) on [begin, end); out may alias x (each vector is loaded before it is stored).
template <class F>
void map1(const float* x, float* out, int64_t begin, int64_t end, F f) {
  int64_t i = begin;
  for (; i + kWidth <= end; i += kWidth) simd::store(out + i, f(simd::load(x + i)));
  if (i < end) {
    const size_t rest = static_cast<size_t>(end - i) * sizeof(float);
    float xb[kWidth] = {}, ob[kWidth];
    std::memcpy(xb, x + i, rest);
    simd::store(ob, f(simd::load(xb)));
    std::memcpy(out + i, ob, rest);
  }
}

// out[i] = f(a[i], b[i]).
template <class F>
void map2(const float* a, const float* b, float* out, int64_t len, F f) {
  int64_t i = 0;
  for (; i + kWidth <= len; i += kWidth) simd::store(out + i, f(simd::load(a + i), simd::load(b + i)));
  if (i < len) {
    const size_t rest = static_cast<size_t>(len - i) * sizeof(float);
    float ab[kWidth] = {}, bb[kWidth] = {}, ob[kWidth];
    std::memcpy(ab, a + i, rest);
    std::memcpy(bb, b + i, rest);
    simd::store(ob, f(simd::load(ab), simd::load(bb)));
    std::memcpy(out + i, ob, rest);
  }
}

// out[i] (+)= f(x[i], y[i], dy[i]) on [begin, end).
template <bool kAccumulate, class F>
void map3(const float* x, const float* y, const float* dy, float* out, int64_t begin, int64_t end, F f) {
  int64_t i = begin;
  for (; i + kWidth <= end; i += kWidth) {
    VF r = f(simd::load(x + i), simd::load(y + i), simd::load(dy + i));
    if (kAccumulate) r = simd::load(out + i) + r;
    simd::store(out + i, r);
  }
  if (i < end) {
    const size_t rest = static_cast<size_t>(end - i) * sizeof(float);
    float xb[kWidth] = {}, yb[kWidth] = {}, db[kWidth] = {}, ob[kWidth] = {};
    std::memcpy(xb, x + i, rest);
    std::memcpy(yb, y + i, rest);
    std::memcpy(db, dy + i, rest);
    std::memcpy(ob, out + i, rest);
    VF r = f(simd::load(xb), simd::load(yb), simd::load(db));
    if (kAccumulate) r = simd::load(ob) + r;
    simd::store(ob, r);
    std::memcpy(out + i, ob, rest);
  }
}

template <class F>
void parallel_map1(const float* x, float* out, int64_t n, int64_t grain, F f) {
  pool::parallel_for(n, grain, [&](int64_t begin, int64_t end) { map1(x, out, begin, end, f); });
}

// ---- strided walking ----------------------------------------------------------------------------

// A strided view simplified for iteration: size-1 dims dropped, dims merged where every operand is
// contiguous across them. The innermost dim is iterated by the caller's row kernel.
template <int kOperands>
struct Layout {
  int rank = 0;
  int64_t shape[kMaxRank];
  int64_t strides[kOperands][kMaxRank];
  int64_t total = 1;
};

template <int kOperands>
Layout<kOperands> simplify(const std::vector<int64_t>& shape, const std::vector<int64_t>* strides[kOperands]) {
  Layout<kOperands> l;
  for (size_t d = 0; d < shape.size(); d++) {
    l.total *= shape[d];
    if (shape[d] == 1) continue;
    if (l.rank > 0) {
      bool mergeable = true;
      for (int o = 0; o < kOperands; o++)
        if (l.strides[o][l.rank - 1] != (*strides[o])[d] * shape[d]) mergeable = false;
      if (mergeable) {
        l.shape[l.rank - 1] *= shape[d];
        for (int o = 0; o < kOperands; o++) l.strides[o][l.rank - 1] = (*strides[o])[d];
        continue;
      }
    }
    l.shape[l.rank] = shape[d];
    for (int o = 0; o < kOperands; o++) l.strides[o][l.rank] = (*strides[o])[d];
    l.rank++;
  }
  if (l.rank == 0) {  // a single element (or a rank-0 view)
    l.rank = 1;
    l.shape[0] = 1;
    for (int o = 0; o < kOperands; o++) l.strides[o][0] = 0;
  }
  return l;
}

// Calls row(offsets[kOperands], inner_begin, len, flat) for the output range [begin, end), one call
// per (partial) innermost row; offsets point at element inner_begin of that row.
template <int kOperands, class Row>
void walk(const Layout<kOperands>& l, const int64_t base[kOperands], int64_t begin, int64_t end, Row row) {
  const int r = l.rank;
  const int64_t inner = l.shape[r - 1];
  int64_t idx[kMaxRank];
  int64_t rem = begin;
  for (int d = r - 1; d >= 0; d--) {
    idx[d] = rem % l.shape[d];
    rem /= l.shape[d];
  }
  int64_t off[kOperands];
  for (int o = 0; o < kOperands; o++) {
    off[o] = base[o];
    for (int d = 0; d < r; d++) off[o] += idx[d] * l.strides[o][d];
  }
  int64_t flat = begin;
  while (flat < end) {
    const int64_t j = idx[r - 1];
    const int64_t len = std::min(inner - j, end - flat);
    row(off, j, len, flat);
    flat += len;
    if (flat >= end) break;
    // Next row: back to column 0 of the innermost dim, then carry through the outer dims.
    for (int o = 0; o < kOperands; o++) off[o] -= j * l.strides[o][r - 1];
    idx[r - 1] = 0;
    for (int d = r - 2; d >= 0; d--) {
      idx[d]++;
      for (int o = 0; o < kOperands; o++) off[o] += l.strides[o][d];
      if (idx[d] < l.shape[d]) break;
      for (int o = 0; o < kOperands; o++) off[o] -= idx[d] * l.strides[o][d];
      idx[d] = 0;
    }
  }
}

// Checks a strided view against its array: every element it reads lies in [0, length).
void check_view(const Args& args, size_t array_arg, const std::vector<int64_t>& shape,
                const std::vector<int64_t>& strides, int64_t offset, int64_t total, const char* what) {
  if (strides.size() != shape.size())
    throw ArgError(std::string(args.name) + ": " + what + " strides have rank " + std::to_string(strides.size()) +
                   ", shape has rank " + std::to_string(shape.size()));
  if (total == 0) {
    args.f32(array_arg);
    return;
  }
  int64_t lo = offset, hi = offset;
  for (size_t d = 0; d < shape.size(); d++) {
    int64_t reach = (shape[d] - 1) * strides[d];
    if (reach < 0) lo += reach;
    else hi += reach;
  }
  if (lo < 0) throw ArgError(std::string(args.name) + ": " + what + " view reaches before element 0");
  args.f32(array_arg, static_cast<size_t>(hi + 1));
}

std::vector<int64_t> shape_arg(const Args& args, size_t i, int64_t* total) {
  std::vector<int64_t> shape = args.i64_array(i);
  if (shape.size() > static_cast<size_t>(kMaxRank))
    throw ArgError(std::string(args.name) + ": rank " + std::to_string(shape.size()) + " exceeds 8");
  *total = 1;
  for (int64_t s : shape) {
    if (s < 0) throw ArgError(std::string(args.name) + ": negative dimension in shape");
    *total *= s;
  }
  return shape;
}

// ---- data movement ------------------------------------------------------------------------------

napi_value fill_binding(const Args& args) {
  const int64_t n = count_arg(args, 1);
  float* dst = args.f32(0, n);
  const float value = static_cast<float>(args.num(2));
  pool::parallel_for(n, kGrainCopy, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; i++) dst[i] = value;
  });
  return args.undefined();
}

// The innermost pair of dims is transposed in the source (its second-to-last dim has stride 1): copy
// in square tiles so that the strided reads of a tile reuse the cache lines they bring in.
void transposed_copy(const Layout<1>& l, const float* src, int64_t offset, float* dst) {
  constexpr int64_t kTile = 32;
  const int r = l.rank;
  const int64_t rows = l.shape[r - 2], cols = l.shape[r - 1], col_stride = l.strides[0][r - 1];
  const int64_t outer = l.total / (rows * cols);
  const int64_t row_tiles = (rows + kTile - 1) / kTile;
  const int64_t grain = std::max<int64_t>(1, kGrainCopy / (kTile * cols));
  pool::parallel_for(outer * row_tiles, grain, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; item++) {
      const int64_t o = item / row_tiles, i0 = (item % row_tiles) * kTile, i1 = std::min(rows, i0 + kTile);
      int64_t at = offset;  // source offset of outer index o (dims 0 .. r−3)
      for (int64_t d = r - 3, rem = o; d >= 0; d--) {
        at += (rem % l.shape[d]) * l.strides[0][d];
        rem /= l.shape[d];
      }
      const float* s = src + at;
      float* out = dst + o * rows * cols;
      for (int64_t j0 = 0; j0 < cols; j0 += kTile) {
        const int64_t j1 = std::min(cols, j0 + kTile);
        for (int64_t i = i0; i < i1; i++)
          for (int64_t j = j0; j < j1; j++) out[i * cols + j] = s[i + j * col_stride];
      }
    }
  });
}

napi_value strided_copy_binding(const Args& args) {
  const int64_t offset = args.i64(1);
  int64_t total = 0;
  const std::vector<int64_t> shape = shape_arg(args, 2, &total);
  const std::vector<int64_t> strides = args.i64_array(3);
  check_view(args, 0, shape, strides, offset, total, "source");
  const float* src = args.f32(0);
  float* dst = args.f32(4, total);
  if (total == 0) return args.undefined();
  const std::vector<int64_t>* stride_list[1] = {&strides};
  const Layout<1> l = simplify<1>(shape, stride_list);
  const int64_t inner_stride = l.strides[0][l.rank - 1];
  if (l.rank >= 2 && inner_stride != 1 && l.strides[0][l.rank - 2] == 1) {
    transposed_copy(l, src, offset, dst);
    return args.undefined();
  }
  const int64_t base[1] = {offset};
  pool::parallel_for(total, kGrainCopy, [&](int64_t begin, int64_t end) {
    walk<1>(l, base, begin, end, [&](const int64_t* off, int64_t, int64_t len, int64_t flat) {
      const float* s = src + off[0];
      float* d = dst + flat;
      if (inner_stride == 1) {
        std::memcpy(d, s, static_cast<size_t>(len) * sizeof(float));
      } else if (inner_stride == 0) {
        const float v = *s;
        for (int64_t j = 0; j < len; j++) d[j] = v;
      } else {
        for (int64_t j = 0; j < len; j++) d[j] = s[j * inner_stride];
      }
    });
  });
  return args.undefined();
}

// Round to nearest even on the top 16 bits; NaN keeps its sign and high payload and is made quiet.
// Plain integer loops: the compiler vectorises them, and (unlike vcvtneps2bf16) subnormals survive.
napi_value f32_to_bf16_binding(const Args& args) {
  const int64_t n = count_arg(args, 2);
  const float* src = args.f32(0, n);
  uint16_t* dst = args.u16(1, n);
  pool::parallel_for(n, kGrainCopy, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; i++) {
      uint32_t b;
      std::memcpy(&b, src + i, 4);
      const uint32_t rounded = (b + 0x7fffu + ((b >> 16) & 1u)) >> 16;
      const uint32_t quiet_nan = (b >> 16) | 0x40u;
      dst[i] = static_cast<uint16_t>((b & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded);
    }
  });
  return args.undefined();
}

napi_value bf16_to_f32_binding(const Args& args) {
  const int64_t n = count_arg(args, 2);
  const uint16_t* src = args.u16(0, n);
  float* dst = args.f32(1, n);
  pool::parallel_for(n, kGrainCopy, [&](int64_t begin, int64_t end) {
    const uint16_t* s = src;  // locals: a memcpy store could otherwise alias the captured pointers
    float* d = dst;
    for (int64_t i = begin; i < end; i++) {
      const uint32_t b = static_cast<uint32_t>(s[i]) << 16;
      std::memcpy(d + i, &b, 4);
    }
  });
  return args.undefined();
}

napi_value i32_to_f32_binding(const Args& args) {
  const int64_t n = count_arg(args, 2);
  const int32_t* src = args.i32(0, n);
  float* dst = args.f32(1, n);
  pool::parallel_for(n, kGrainCopy, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; i++) dst[i] = static_cast<float>(src[i]);
  });
  return args.undefined();
}

// ---- unary ----------------------------------------------------------------------------------------

enum UnaryOp { kNeg, kExp, kLog, kSqrt, kRsqrt, kReciprocal, kSquare, kAbs, kSigmoid, kSilu, kTanh, kRelu, kUnaryOps };

int unary_op_arg(const Args& args) {
  const int64_t op = args.i64(0);
  if (op < 0 || op >= kUnaryOps) throw ArgError(std::string(args.name) + ": unknown unary op " + std::to_string(op));
  return static_cast<int>(op);
}

// relu keeps NaN (like PyTorch) and maps −0 to +0.
inline VF relu(VF x) { return simd::select(simd::is_nan(x), x, simd::vmax(x, simd::splat(0.0f))); }

napi_value unary_binding(const Args& args) {
  const int op = unary_op_arg(args);
  const int64_t n = count_arg(args, 3);
  const float* x = args.f32(1, n);
  float* out = args.f32(2, n);
  const VF one = simd::splat(1.0f), zero = simd::splat(0.0f);
  switch (op) {
    case kNeg: parallel_map1(x, out, n, kGrainCheap, [&](VF v) { return zero - v; }); break;
    case kExp: parallel_map1(x, out, n, kGrainTranscendental, [](VF v) { return simd::vexp(v); }); break;
    case kLog: parallel_map1(x, out, n, kGrainTranscendental, [](VF v) { return simd::vlog(v); }); break;
    case kSqrt: parallel_map1(x, out, n, kGrainCheap, [](VF v) { return simd::vsqrt(v); }); break;
    case kRsqrt: parallel_map1(x, out, n, kGrainCheap, [&](VF v) { return one / simd::vsqrt(v); }); break;
    case kReciprocal: parallel_map1(x, out, n, kGrainCheap, [&](VF v) { return one / v; }); break;
    case kSquare: parallel_map1(x, out, n, kGrainCheap, [](VF v) { return v * v; }); break;
    case kAbs: parallel_map1(x, out, n, kGrainCheap, [](VF v) { return simd::vabs(v); }); break;
    case kSigmoid: parallel_map1(x, out, n, kGrainTranscendental, [](VF v) { return simd::vsigmoid(v); }); break;
    case kSilu: parallel_map1(x, out, n, kGrainTranscendental, [](VF v) { return simd::vsilu(v); }); break;
    case kTanh: parallel_map1(x, out, n, kGrainTranscendental, [](VF v) { return simd::vtanh(v); }); break;
    case kRelu: parallel_map1(x, out, n, kGrainCheap, [](VF v) { return relu(v); }); break;
  }
  return args.undefined();
}

// dx (+)= dy · op'(x), from x or y = op(x), whichever is cheaper. relu'(0) = abs'(0) = 0.
template <bool kAccumulate>
void unary_backward(int op, const float* x, const float* y, const float* dy, float* dx, int64_t n) {
  const VF one = simd::splat(1.0f), zero = simd::splat(0.0f), half = simd::splat(0.5f);
  auto run = [&](int64_t grain, auto f) {
    pool::parallel_for(n, grain, [&](int64_t begin, int64_t end) { map3<kAccumulate>(x, y, dy, dx, begin, end, f); });
  };
  switch (op) {
    case kNeg: run(kGrainCheap, [&](VF, VF, VF g) { return zero - g; }); break;
    case kExp: run(kGrainCheap, [](VF, VF yv, VF g) { return g * yv; }); break;
    case kLog: run(kGrainCheap, [](VF xv, VF, VF g) { return g / xv; }); break;
    case kSqrt: run(kGrainCheap, [](VF, VF yv, VF g) { return g / (yv + yv); }); break;
    // d/dx x^(−1/2) = −½·y³.
    case kRsqrt: run(kGrainCheap, [&](VF, VF yv, VF g) { return g * (zero - half * yv) * (yv * yv); }); break;
    case kReciprocal: run(kGrainCheap, [&](VF, VF yv, VF g) { return zero - g * (yv * yv); }); break;
    case kSquare: run(kGrainCheap, [](VF xv, VF, VF g) { return g * (xv + xv); }); break;
    case kAbs:
      run(kGrainCheap, [&](VF xv, VF, VF g) {
        return simd::select(xv > zero, g, simd::select(xv < zero, zero - g, zero));
      });
      break;
    case kSigmoid: run(kGrainCheap, [&](VF, VF yv, VF g) { return g * (yv * (one - yv)); }); break;
    // silu' = s·(1 + x·(1 − s)), s = sigmoid(x) recomputed (y = x·s cannot give s at x = 0). Both s and
    // 1 − s = sigmoid(−x) come from e = e^−|x| as (e or 1)/(1 + e), so neither loses accuracy.
    case kSilu:
      run(kGrainTranscendental, [&](VF xv, VF, VF g) {
        VF e = simd::vexp(zero - simd::vabs(xv));
        VF d = one + e;
        simd::VM negative = xv < zero;
        VF s = simd::select(negative, e, one) / d;
        VF one_minus_s = simd::select(negative, one, e) / d;
        return g * (s * (one + xv * one_minus_s));
      });
      break;
    case kTanh: run(kGrainCheap, [&](VF, VF yv, VF g) { return g * (one - yv * yv); }); break;
    case kRelu: run(kGrainCheap, [&](VF xv, VF, VF g) { return simd::select(xv > zero, g, zero); }); break;
  }
}

napi_value unary_backward_binding(const Args& args) {
  const int op = unary_op_arg(args);
  const int64_t n = count_arg(args, 5);
  const float* x = args.f32(1, n);
  const float* y = args.f32(2, n);
  const float* dy = args.f32(3, n);
  float* dx = args.f32(4, n);
  if (args.flag(6)) unary_backward<true>(op, x, y, dy, dx, n);
  else unary_backward<false>(op, x, y, dy, dx, n);
  return args.undefined();
}

napi_value affine_binding(const Args& args) {
  const int64_t n = count_arg(args, 2);
  const float* x = args.f32(0, n);
  float* out = args.f32(1, n);
  const VF scale = simd::splat(static_cast<float>(args.num(3)));
  const VF shift = simd::splat(static_cast<float>(args.num(4)));
  parallel_map1(x, out, n, kGrainCheap, [&](VF v) { return v * scale + shift; });
  return args.undefined();
}

// Exponents with an exact cheap form run vectorised; others call powf per element (IEEE pow
// semantics either way, special values included).
napi_value pow_scalar_binding(const Args& args) {
  const int64_t n = count_arg(args, 2);
  const float* x = args.f32(0, n);
  float* out = args.f32(1, n);
  const float p = static_cast<float>(args.num(3));
  const VF one = simd::splat(1.0f);
  if (p == 1.0f) {
    parallel_map1(x, out, n, kGrainCopy, [](VF v) { return v; });
  } else if (p == 2.0f) {
    parallel_map1(x, out, n, kGrainCheap, [](VF v) { return v * v; });
  } else if (p == 0.0f) {
    parallel_map1(x, out, n, kGrainCopy, [&](VF) { return one; });
  } else if (p == -1.0f) {
    parallel_map1(x, out, n, kGrainCheap, [&](VF v) { return one / v; });
  } else {
    pool::parallel_for(n, kGrainTranscendental / 4, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; i++) out[i] = std::pow(x[i], p);
    });
  }
  return args.undefined();
}

napi_value clamp_binding(const Args& args) {
  const int64_t n = count_arg(args, 2);
  const float* x = args.f32(0, n);
  float* out = args.f32(1, n);
  const VF lo = simd::splat(static_cast<float>(args.num(3)));
  const VF hi = simd::splat(static_cast<float>(args.num(4)));
  // min(max(x, lo), hi) with NaN passing through: vmax/vmin return the second operand on NaN.
  parallel_map1(x, out, n, kGrainCheap, [&](VF v) { return simd::vmin(hi, simd::vmax(lo, v)); });
  return args.undefined();
}

// ---- binary ---------------------------------------------------------------------------------------

enum BinaryOp { kAdd, kSub, kMul, kDiv, kMaximum, kMinimum, kPow, kBinaryOps };

// NaN-propagating maximum / minimum (torch.maximum semantics).
inline VF maximum(VF a, VF b) { return simd::select(simd::is_nan(a), a, simd::vmax(a, b)); }
inline VF minimum(VF a, VF b) { return simd::select(simd::is_nan(a), a, simd::vmin(a, b)); }
inline VF pow_lanes(VF a, VF b) {
  float ab[kWidth], bb[kWidth];
  simd::store(ab, a);
  simd::store(bb, b);
  for (int l = 0; l < kWidth; l++) ab[l] = std::pow(ab[l], bb[l]);
  return simd::load(ab);
}

// Row kernels: both operands contiguous; one a broadcast scalar; or general strides (gathered
// through small buffers into the contiguous kernel, so every path computes the same bits).
template <class F>
void binary_row(const float* a, int64_t as, const float* b, int64_t bs, float* out, int64_t len, F f) {
  if (as == 1 && bs == 1) {
    map2(a, b, out, len, f);
  } else if (as == 1 && bs == 0) {
    const VF bv = simd::splat(*b);
    map1(a, out, 0, len, [&](VF av) { return f(av, bv); });
  } else if (as == 0 && bs == 1) {
    const VF av = simd::splat(*a);
    map1(b, out, 0, len, [&](VF bv) { return f(av, bv); });
  } else {
    constexpr int64_t kChunk = 256;
    float ab[kChunk], bb[kChunk];
    for (int64_t j0 = 0; j0 < len; j0 += kChunk) {
      const int64_t m = std::min(kChunk, len - j0);
      for (int64_t j = 0; j < m; j++) {
        ab[j] = a[(j0 + j) * as];
        bb[j] = b[(j0 + j) * bs];
      }
      map2(ab, bb, out + j0, m, f);
    }
  }
}

template <class F>
void binary_run(const Layout<2>& l, const float* a, const float* b, const int64_t base[2], float* out, int64_t grain,
                F f) {
  const int64_t as = l.strides[0][l.rank - 1], bs = l.strides[1][l.rank - 1];
  pool::parallel_for(l.total, grain, [&](int64_t begin, int64_t end) {
    walk<2>(l, base, begin, end, [&](const int64_t* off, int64_t, int64_t len, int64_t flat) {
      binary_row(a + off[0], as, b + off[1], bs, out + flat, len, f);
    });
  });
}

napi_value binary_binding(const Args& args) {
  const int64_t op = args.i64(0);
  if (op < 0 || op >= kBinaryOps) throw ArgError(std::string(args.name) + ": unknown binary op " + std::to_string(op));
  const int64_t a_offset = args.i64(2), b_offset = args.i64(5);
  const std::vector<int64_t> a_strides = args.i64_array(3), b_strides = args.i64_array(6);
  int64_t total = 0;
  const std::vector<int64_t> shape = shape_arg(args, 8, &total);
  check_view(args, 1, shape, a_strides, a_offset, total, "a");
  check_view(args, 4, shape, b_strides, b_offset, total, "b");
  const float* a = args.f32(1);
  const float* b = args.f32(4);
  float* out = args.f32(7, total);
  if (total == 0) return args.undefined();
  const std::vector<int64_t>* stride_list[2] = {&a_strides, &b_strides};
  const Layout<2> l = simplify<2>(shape, stride_list);
  const int64_t base[2] = {a_offset, b_offset};
  switch (op) {
    case kAdd: binary_run(l, a, b, base, out, kGrainCheap, [](VF x, VF y) { return x + y; }); break;
    case kSub: binary_run(l, a, b, base, out, kGrainCheap, [](VF x, VF y) { return x - y; }); break;
    case kMul: binary_run(l, a, b, base, out, kGrainCheap, [](VF x, VF y) { return x * y; }); break;
    case kDiv: binary_run(l, a, b, base, out, kGrainCheap, [](VF x, VF y) { return x / y; }); break;
    case kMaximum: binary_run(l, a, b, base, out, kGrainCheap, [](VF x, VF y) { return maximum(x, y); }); break;
    case kMinimum: binary_run(l, a, b, base, out, kGrainCheap, [](VF x, VF y) { return minimum(x, y); }); break;
    case kPow: binary_run(l, a, b, base, out, kGrainTranscendental / 4, pow_lanes); break;
  }
  return args.undefined();
}

napi_value axpy_binding(const Args& args) {
  const VF alpha = simd::splat(static_cast<float>(args.num(0)));
  const int64_t n = count_arg(args, 3);
  const float* x = args.f32(1, n);
  float* y = args.f32(2, n);
  pool::parallel_for(n, kGrainCheap, [&](int64_t begin, int64_t end) {
    map2(y + begin, x + begin, y + begin, end - begin, [&](VF yv, VF xv) { return yv + alpha * xv; });
  });
  return args.undefined();
}

// ---- reductions -----------------------------------------------------------------------------------

constexpr int64_t kBlock = 4096;  // elements per partial sum of a long row
constexpr int kLanes = 8;
constexpr int64_t kColumnChunk = 512;  // columns per task when reducing over a middle dim

// Each reduction: its accumulator type and identity, how an element enters (lift) and how two
// partial results combine, and `block`, the reduction of one contiguous block.
template <class Op>
typename Op::Acc block_sum(const float* x, int64_t len);
template <bool kMax>
float block_extreme(const float* x, int64_t len);

struct SumOp {
  using Acc = double;
  static Acc identity() { return 0.0; }
  static Acc lift(float v) { return v; }
  static Acc combine(Acc a, Acc b) { return a + b; }
  static Acc block(const float* x, int64_t len) { return block_sum<SumOp>(x, len); }
};
struct SumSquaresOp {
  using Acc = double;
  static Acc identity() { return 0.0; }
  static Acc lift(float v) { return static_cast<double>(v) * static_cast<double>(v); }
  static Acc combine(Acc a, Acc b) { return a + b; }
  static Acc block(const float* x, int64_t len) { return block_sum<SumSquaresOp>(x, len); }
};
// NaN wins; otherwise the larger (smaller) value.
struct MaxOp {
  using Acc = float;
  static Acc identity() { return -std::numeric_limits<float>::infinity(); }
  static Acc lift(float v) { return v; }
  static Acc combine(Acc a, Acc v) { return (v > a || v != v) ? v : a; }
  static Acc block(const float* x, int64_t len) { return block_extreme<true>(x, len); }
};
struct MinOp {
  using Acc = float;
  static Acc identity() { return std::numeric_limits<float>::infinity(); }
  static Acc lift(float v) { return v; }
  static Acc combine(Acc a, Acc v) { return (v < a || v != v) ? v : a; }
  static Acc block(const float* x, int64_t len) { return block_extreme<false>(x, len); }
};

// One block (len ≤ kBlock) of a sum: kLanes interleaved accumulators, then a fixed pairwise tree.
template <class Op>
typename Op::Acc block_sum(const float* x, int64_t len) {
  using Acc = typename Op::Acc;
  Acc acc[kLanes];
  for (int l = 0; l < kLanes; l++) acc[l] = Op::identity();
  int64_t i = 0;
  for (; i + kLanes <= len; i += kLanes)
    for (int l = 0; l < kLanes; l++) acc[l] = Op::combine(acc[l], Op::lift(x[i + l]));
  for (int l = 0; i + l < len; l++) acc[l] = Op::combine(acc[l], Op::lift(x[i + l]));
  for (int width = kLanes / 2; width >= 1; width /= 2)
    for (int l = 0; l < width; l++) acc[l] = Op::combine(acc[l], acc[l + width]);
  return acc[0];
}

// Max (min) of one block, kWidth lanes wide; the tail is padded with the identity.
template <bool kMax>
float block_extreme(const float* x, int64_t len) {
  using Op = std::conditional_t<kMax, MaxOp, MinOp>;
  const VF identity = simd::splat(Op::identity());
  VF acc = identity;
  auto take = [&](VF v) {
    simd::VM better = kMax ? v > acc : v < acc;
    acc = simd::select(better | simd::is_nan(v), v, acc);
  };
  int64_t i = 0;
  for (; i + kWidth <= len; i += kWidth) take(simd::load(x + i));
  if (i < len) {
    float padded[kWidth];
    simd::store(padded, identity);
    std::memcpy(padded, x + i, static_cast<size_t>(len - i) * sizeof(float));
    take(simd::load(padded));
  }
  float lanes[kWidth];
  simd::store(lanes, acc);
  float result = lanes[0];
  for (int l = 1; l < kWidth; l++) result = Op::combine(result, lanes[l]);
  return result;
}

// out[o] = reduction of the contiguous row x[o·size .. o·size + size).
template <class Op>
void reduce_rows(const float* x, int64_t outer, int64_t size, float* out) {
  using Acc = typename Op::Acc;
  const int64_t blocks = (size + kBlock - 1) / kBlock;
  if (blocks <= 1) {
    pool::parallel_for(outer, std::max<int64_t>(1, kGrainCheap / std::max<int64_t>(size, 1)),
                       [&](int64_t begin, int64_t end) {
                         for (int64_t o = begin; o < end; o++)
                           out[o] = static_cast<float>(Op::block(x + o * size, size));
                       });
    return;
  }
  std::vector<Acc> partial(static_cast<size_t>(outer * blocks));
  pool::parallel_for(outer * blocks, std::max<int64_t>(1, kGrainCheap / kBlock), [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; item++) {
      const int64_t o = item / blocks, blk = item % blocks;
      const int64_t start = blk * kBlock;
      partial[item] = Op::block(x + o * size + start, std::min(kBlock, size - start));
    }
  });
  for (int64_t o = 0; o < outer; o++) {
    Acc acc = partial[o * blocks];
    for (int64_t blk = 1; blk < blocks; blk++) acc = Op::combine(acc, partial[o * blocks + blk]);
    out[o] = static_cast<float>(acc);
  }
}

// out[o, i] = reduction over s of x[o, s, i] (inner > 1), in order of s for every output.
template <class Op>
void reduce_columns(const float* x, int64_t outer, int64_t size, int64_t inner, float* out) {
  using Acc = typename Op::Acc;
  const int64_t chunks = (inner + kColumnChunk - 1) / kColumnChunk;
  const int64_t work_per_item = std::max<int64_t>(1, size * std::min(inner, kColumnChunk));
  const int64_t grain = std::max<int64_t>(1, kGrainCheap / work_per_item);
  pool::parallel_for(outer * chunks, grain, [&](int64_t begin, int64_t end) {
    Acc acc[kColumnChunk];
    for (int64_t item = begin; item < end; item++) {
      const int64_t o = item / chunks, i0 = (item % chunks) * kColumnChunk;
      const int64_t width = std::min(kColumnChunk, inner - i0);
      for (int64_t j = 0; j < width; j++) acc[j] = Op::identity();
      for (int64_t s = 0; s < size; s++) {
        const float* row = x + (o * size + s) * inner + i0;
        for (int64_t j = 0; j < width; j++) acc[j] = Op::combine(acc[j], Op::lift(row[j]));
      }
      for (int64_t j = 0; j < width; j++) out[o * inner + i0 + j] = static_cast<float>(acc[j]);
    }
  });
}

template <class Op>
void reduce_any(const float* x, int64_t outer, int64_t size, int64_t inner, float* out) {
  if (inner == 1) reduce_rows<Op>(x, outer, size, out);
  else reduce_columns<Op>(x, outer, size, inner, out);
}

napi_value reduce_binding(const Args& args) {
  const int64_t op = args.i64(0);
  if (op < 0 || op > 2) throw ArgError(std::string(args.name) + ": unknown reduce op " + std::to_string(op));
  const int64_t outer = count_arg(args, 2), size = count_arg(args, 3), inner = count_arg(args, 4);
  const float* x = args.f32(1, outer * size * inner);
  float* out = args.f32(5, outer * inner);
  if (outer * inner == 0) return args.undefined();
  if (op == 0) reduce_any<SumOp>(x, outer, size, inner, out);
  else if (op == 1) reduce_any<MaxOp>(x, outer, size, inner, out);
  else reduce_any<MinOp>(x, outer, size, inner, out);
  return args.undefined();
}

napi_value sum_squares_binding(const Args& args) {
  const int64_t n = count_arg(args, 1);
  const float* x = args.f32(0, n);
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<double> partial(static_cast<size_t>(blocks));
  pool::parallel_for(blocks, std::max<int64_t>(1, kGrainCheap / kBlock), [&](int64_t begin, int64_t end) {
    for (int64_t blk = begin; blk < end; blk++)
      partial[blk] = SumSquaresOp::block(x + blk * kBlock, std::min(kBlock, n - blk * kBlock));
  });
  double total = 0.0;
  for (int64_t blk = 0; blk < blocks; blk++) total += partial[blk];
  return args.number(total);
}

}  // namespace

void register_elementwise(Registry& r) {
  r.add("fill", fill_binding);
  r.add("stridedCopy", strided_copy_binding);
  r.add("f32ToBf16", f32_to_bf16_binding);
  r.add("bf16ToF32", bf16_to_f32_binding);
  r.add("i32ToF32", i32_to_f32_binding);
  r.add("unary", unary_binding);
  r.add("unaryBackward", unary_backward_binding);
  r.add("affine", affine_binding);
  r.add("powScalar", pow_scalar_binding);
  r.add("clamp", clamp_binding);
  r.add("binary", binary_binding);
  r.add("axpy", axpy_binding);
  r.add("reduce", reduce_binding);
  r.add("sumSquares", sum_squares_binding);
}

}  // namespace tensor_native
