// Causal grouped-query attention over packed sequences, forward and backward (see Kernels.attention
// in src/backend/kernels.ts). Query t sees key s iff s ≤ t and both lie in the same segment; since a
// segment is one contiguous run, row t sees exactly the keys [segment_start(t), t].
//
// Both passes thread over (batch, kv head) pairs: a task packs its K/V once for the query heads that
// share them, and in the backward it owns its dk/dv rows and those heads' dq rows. Every output
// element is computed by one task in a fixed order, whatever the thread count. Both work in blocks of
// 64 queries (× 64 keys in the backward), skipping tiles that causality or segment boundaries mask.
#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <vector>

#include "attention_simd.h"
#include "napi_util.h"
#include "threadpool.h"

namespace tensor_native {
namespace {

using namespace simd;

constexpr int64_t QUERY_BLOCK = 64;
constexpr int64_t KEY_BLOCK = 64;  // backward only; a multiple of KEY_TILE
constexpr int64_t KEY_TILE = MAX_NV * W;  // keys per micro-kernel call when computing scores
constexpr double SERIAL_WORK = 1 << 18;  // below this many multiply-adds, waking the pool costs more than it saves

struct Problem {
  int64_t batch, seq, heads, kv_heads, dim;
  float scale;
  // Leading dimensions: dim rounded up to whole vectors; seq too, plus one vector so rows of the
  // transposed K/V are not a power-of-two stride apart (those all map to a few cache sets).
  int64_t seq_padded, dim_padded;
  std::vector<int32_t> seg_start, seg_end;  // per position b·T + t: the run [start, end) holding t

  int64_t group() const { return heads / kv_heads; }
  // Offset of row (b, t, head) in a [B, T, heads_total, D] tensor.
  int64_t row(int64_t b, int64_t t, int64_t head, int64_t heads_total) const {
    return ((b * seq + t) * heads_total + head) * dim;
  }
};

Problem make_problem(const int32_t* segments, int64_t batch, int64_t seq, int64_t heads, int64_t kv_heads, int64_t dim,
                     double scale) {
  if (batch < 0 || seq < 0 || heads < 0 || dim < 0)
    throw std::invalid_argument("batch, seq, heads and dim must be non-negative");
  if (kv_heads < 1 || heads % kv_heads != 0)
    throw std::invalid_argument("heads (" + std::to_string(heads) + ") must be a multiple of kvHeads (" +
                                std::to_string(kv_heads) + ")");
  Problem p{batch, seq, heads, kv_heads, dim, static_cast<float>(scale), round_up_w(seq) + W, round_up_w(dim), {}, {}};
  p.seg_start.resize(batch * seq);
  p.seg_end.resize(batch * seq);
  std::unordered_set<int32_t> finished;
  for (int64_t b = 0; b < batch; b++) {
    const int32_t* ids = segments + b * seq;
    finished.clear();
    int64_t run_start = 0;
    for (int64_t t = 0; t <= seq; t++) {
      if (t > 0 && (t == seq || ids[t] != ids[t - 1])) {
        for (int64_t i = run_start; i < t; i++) p.seg_end[b * seq + i] = static_cast<int32_t>(t);
        if (t == seq) break;
        finished.insert(ids[t - 1]);
        if (finished.count(ids[t]))
          throw std::invalid_argument("segments must be contiguous runs, but batch row " + std::to_string(b) +
                                      " has segment id " + std::to_string(ids[t]) + " again at position " +
                                      std::to_string(t) + " after a different segment");
        run_start = t;
      }
      if (t < seq) p.seg_start[b * seq + t] = static_cast<int32_t>(run_start);
    }
  }
  return p;
}

// Σ over positions of the number of keys each query sees, for batch row b (the work unit for costs).
double attended_pairs(const Problem& p, int64_t b) {
  double pairs = 0;
  for (int64_t t = 0; t < p.seq; t++) pairs += static_cast<double>(t - p.seg_start[b * p.seq + t] + 1);
  return pairs;
}

// Runs task(i) for every i < cost.size(); each thread takes one contiguous run of tasks with about
// the same total cost. Which thread runs a task never changes what the task computes.
void run_balanced(const std::vector<double>& cost, const std::function<void(int64_t)>& task) {
  const int64_t n = static_cast<int64_t>(cost.size());
  double total = 0;
  for (double c : cost) total += c;
  if (pool::threads() == 1 || n <= 1 || total < SERIAL_WORK) {
    for (int64_t i = 0; i < n; i++) task(i);
    return;
  }
  std::vector<double> midpoint(n);
  double before = 0;
  for (int64_t i = 0; i < n; i++) {
    midpoint[i] = before + cost[i] / 2;
    before += cost[i];
  }
  pool::run_all([&](int tid, int nthreads) {
    for (int64_t i = 0; i < n; i++) {
      int owner = std::min(nthreads - 1, static_cast<int>(midpoint[i] * nthreads / total));
      if (owner == tid) task(i);
    }
  });
}

// Whether any query t in [t_begin, t_end) sees any key in [k_begin, k_end).
bool any_visible(const int32_t* seg_start, int64_t t_begin, int64_t t_end, int64_t k_begin, int64_t k_end) {
  for (int64_t t = t_begin; t < t_end; t++)
    if (std::max<int64_t>(seg_start[t], k_begin) <= std::min(t, k_end - 1)) return true;
  return false;
}

// Grows (never shrinks) a per-thread buffer; contents are unspecified.
float* scratch(std::vector<float>& buffer, int64_t n) {
  if (static_cast<int64_t>(buffer.size()) < n + 1) buffer.resize(n + 1);
  return buffer.data();
}

// kt[d·ld + s] = k[s, d] for s < seq (zero up to ld): keys as columns, for the score micro-kernel.
void pack_transposed(const float* src, int64_t src_stride, int64_t seq, int64_t dim, int64_t ld, float* kt) {
  constexpr int64_t BLOCK = 16;  // square blocks: both the reads and the writes stay in a few cache lines
  for (int64_t s0 = 0; s0 < seq; s0 += BLOCK)
    for (int64_t d0 = 0; d0 < dim; d0 += BLOCK)
      for (int64_t d = d0; d < std::min(dim, d0 + BLOCK); d++)
        for (int64_t s = s0; s < std::min(seq, s0 + BLOCK); s++) kt[d * ld + s] = src[s * src_stride + d];
  for (int64_t d = 0; d < dim; d++)
    for (int64_t s = seq; s < ld; s++) kt[d * ld + s] = 0.0f;
}

// dst[s·ld + d] = src[s, d] for d < dim, zero up to ld: rows padded to whole vectors.
void pack_rows(const float* src, int64_t src_stride, int64_t seq, int64_t dim, int64_t ld, float* dst) {
  for (int64_t s = 0; s < seq; s++) {
    for (int64_t d = 0; d < dim; d++) dst[s * ld + d] = src[s * src_stride + d];
    for (int64_t d = dim; d < ld; d++) dst[s * ld + d] = 0.0f;
  }
}

struct ForwardScratch {
  std::vector<float> keys_t, values, scores, out_tile, inv_sum;
};

// One (batch, head): out rows and lse for every query, QUERY_BLOCK queries at a time, from the kv
// head packed as keys_t [D][Tp] (transposed) and values [T][Dp].
void forward_head(const Problem& p, const float* q, const float* keys_t, const float* values, float* out, float* lse,
                  int64_t b, int64_t h, ForwardScratch& s) {
  const int64_t T = p.seq, D = p.dim, Tp = p.seq_padded, Dp = p.dim_padded, H = p.heads;
  const int32_t* seg_start = p.seg_start.data() + b * T;
  float* scores = scratch(s.scores, QUERY_BLOCK * Tp);
  float* out_tile = scratch(s.out_tile, QUERY_BLOCK * Dp);
  float* inv_sum = scratch(s.inv_sum, QUERY_BLOCK);
  float* lse_row = lse + (b * H + h) * T;

  for (int64_t q0 = 0; q0 < T; q0 += QUERY_BLOCK) {
    const int64_t q1 = std::min(T, q0 + QUERY_BLOCK);
    // Score rows hold keys [key_base, q1); key_base is aligned so tiles start on whole vectors.
    const int64_t key_base = seg_start[q0] / W * W;
    auto score_row = [&](int64_t t) { return scores + (t - q0) * Tp - key_base; };  // indexed by key position

    // S = Q·Kᵀ on the tiles some query of the micro-block sees; key tiles outermost so each one
    // stays in L1 while every row micro-block uses it.
    for (int64_t k0 = key_base; k0 < q1; k0 += KEY_TILE) {
      for (int64_t ta = q0; ta < q1; ta += MAX_R) {
        const int64_t tb = std::min(q1, ta + MAX_R);
        const int64_t c0 = std::max<int64_t>(k0, seg_start[ta] / W * W), c1 = std::min(tb, k0 + KEY_TILE);
        if (c0 >= c1 || !any_visible(seg_start, ta, tb, c0, c1)) continue;
        const int nv = static_cast<int>((c1 - c0 + W - 1) / W);
        micro_kernel_for(static_cast<int>(tb - ta), nv)(D, q + p.row(b, ta, h, H), H * D, 1, keys_t + c0, Tp,
                                                        score_row(ta) + c0, Tp, false);
      }
    }

    // Softmax over each row's visible keys [seg_start, t]; P is left unnormalised (out is divided by
    // the sum instead) and zeroed where masked inside the span its micro-block multiplies over.
    for (int64_t t = q0; t < q1; t++) {
      float* row = score_row(t);
      const int64_t lo = seg_start[t], n = t - lo + 1;
      // max(S·scale) from max or min of S: rounding is monotonic, so this is exact.
      const float shift = p.scale >= 0 ? p.scale * max_of(row + lo, n) : p.scale * min_of(row + lo, n);
      const float sum = exp_scaled_inplace(row + lo, n, p.scale, shift);
      lse_row[t] = shift + std::log(sum);
      inv_sum[t - q0] = 1.0f / sum;
      const int64_t ta = q0 + (t - q0) / MAX_R * MAX_R, tb = std::min(q1, ta + MAX_R);
      for (int64_t j = seg_start[ta]; j < lo; j++) row[j] = 0.0f;
      for (int64_t j = t + 1; j < tb; j++) row[j] = 0.0f;
    }

    // O = P·V over key chunks (each stays in L1), each micro-block over the keys it can see.
    for (int64_t k0 = key_base; k0 < q1; k0 += KEY_TILE) {
      for (int64_t ta = q0; ta < q1; ta += MAX_R) {
        const int64_t tb = std::min(q1, ta + MAX_R);
        const int64_t lo = std::max<int64_t>(k0, seg_start[ta]), hi = std::min(tb, k0 + KEY_TILE);
        if (lo >= hi) continue;
        // The first chunk a micro-block sees starts at its segment start: it overwrites the tile.
        row_block_multiply(static_cast<int>(tb - ta), Dp, hi - lo, score_row(ta) + lo, Tp, 1, values + lo * Dp, Dp,
                           out_tile + (ta - q0) * Dp, Dp, lo != seg_start[ta]);
      }
    }
    for (int64_t t = q0; t < q1; t++) {
      float* dst = out + p.row(b, t, h, H);
      const float* src = out_tile + (t - q0) * Dp;
      const float inv = inv_sum[t - q0];
      for (int64_t d = 0; d < D; d++) dst[d] = src[d] * inv;
    }
  }
}

// One (batch, kv head): packs the kv head once for the query heads that share it.
void forward_group(const Problem& p, const float* q, const float* k, const float* v, float* out, float* lse, int64_t b,
                   int64_t kvh, ForwardScratch& s) {
  const int64_t T = p.seq, D = p.dim, Tp = p.seq_padded, Dp = p.dim_padded, KV = p.kv_heads;
  float* keys_t = scratch(s.keys_t, D * Tp);
  float* values = scratch(s.values, T * Dp);
  pack_transposed(k + p.row(b, 0, kvh, KV), KV * D, T, D, Tp, keys_t);
  pack_rows(v + p.row(b, 0, kvh, KV), KV * D, T, D, Dp, values);
  for (int64_t h = kvh * p.group(); h < (kvh + 1) * p.group(); h++)
    forward_head(p, q, keys_t, values, out, lse, b, h, s);
}

struct BackwardScratch {
  std::vector<float> keys_t, values_t, keys, queries, d_out, delta, d_query, d_key, d_value, probs, d_scores;
};

// One (batch, kv head): dk and dv of the kv head, and dq of the query heads that read it.
void backward_group(const Problem& p, const float* q, const float* k, const float* v, const float* out,
                    const float* lse, const float* d_out, float* dq, float* dk, float* dv, int64_t b, int64_t kvh,
                    BackwardScratch& s) {
  const int64_t T = p.seq, D = p.dim, Tp = p.seq_padded, Dp = p.dim_padded, H = p.heads, KV = p.kv_heads;
  const float scale = p.scale;
  const int32_t* seg_start = p.seg_start.data() + b * T;
  const int32_t* seg_end = p.seg_end.data() + b * T;
  float* keys_t = scratch(s.keys_t, D * Tp);
  float* values_t = scratch(s.values_t, D * Tp);
  float* keys = scratch(s.keys, T * Dp);
  float* queries = scratch(s.queries, T * Dp);
  float* d_out_rows = scratch(s.d_out, T * Dp);
  float* delta = scratch(s.delta, T);
  float* d_query = scratch(s.d_query, T * Dp);
  float* d_key = scratch(s.d_key, T * Dp);
  float* d_value = scratch(s.d_value, T * Dp);
  float* probs = scratch(s.probs, QUERY_BLOCK * KEY_BLOCK);
  float* d_scores = scratch(s.d_scores, QUERY_BLOCK * KEY_BLOCK);
  pack_transposed(k + p.row(b, 0, kvh, KV), KV * D, T, D, Tp, keys_t);
  pack_transposed(v + p.row(b, 0, kvh, KV), KV * D, T, D, Tp, values_t);
  pack_rows(k + p.row(b, 0, kvh, KV), KV * D, T, D, Dp, keys);
  std::fill(d_key, d_key + T * Dp, 0.0f);
  std::fill(d_value, d_value + T * Dp, 0.0f);

  for (int64_t h = kvh * p.group(); h < (kvh + 1) * p.group(); h++) {
    const float* lse_row = lse + (b * H + h) * T;
    pack_rows(q + p.row(b, 0, h, H), H * D, T, D, Dp, queries);
    pack_rows(d_out + p.row(b, 0, h, H), H * D, T, D, Dp, d_out_rows);
    for (int64_t t = 0; t < T; t++) delta[t] = dot(d_out + p.row(b, t, h, H), out + p.row(b, t, h, H), D);
    std::fill(d_query, d_query + T * Dp, 0.0f);

    for (int64_t k0 = 0; k0 < T; k0 += KEY_BLOCK) {
      const int64_t k1 = std::min(T, k0 + KEY_BLOCK);
      // Queries from the segment end of the block's last key on see none of its keys.
      const int64_t q_end = seg_end[k1 - 1];
      for (int64_t t0 = k0; t0 < q_end; t0 += QUERY_BLOCK) {
        const int64_t t1 = std::min(q_end, t0 + QUERY_BLOCK);
        if (!any_visible(seg_start, t0, t1, k0, k1)) continue;
        // Tile rows are queries [t0, t1), columns keys [k0, k1); index columns by key position.
        auto p_row = [&](int64_t t) { return probs + (t - t0) * KEY_BLOCK - k0; };
        auto ds_row = [&](int64_t t) { return d_scores + (t - t0) * KEY_BLOCK - k0; };

        // S = Q·Kᵀ and dP = dO·Vᵀ on visible micro-tiles.
        for (int64_t ta = t0; ta < t1; ta += MAX_R) {
          const int64_t tb = std::min(t1, ta + MAX_R);
          const int rows = static_cast<int>(tb - ta);
          const int64_t key_end = std::min(k1, tb);  // later keys are in every row's future
          for (int64_t c0 = k0; c0 < key_end; c0 += KEY_TILE) {
            const int64_t c1 = std::min(key_end, c0 + KEY_TILE);
            if (!any_visible(seg_start, ta, tb, c0, c1)) continue;
            MicroKernel kernel = micro_kernel_for(rows, static_cast<int>((c1 - c0 + W - 1) / W));
            kernel(D, q + p.row(b, ta, h, H), H * D, 1, keys_t + c0, Tp, p_row(ta) + c0, KEY_BLOCK, false);
            kernel(D, d_out + p.row(b, ta, h, H), H * D, 1, values_t + c0, Tp, ds_row(ta) + c0, KEY_BLOCK, false);
          }
        }

        // P = exp(S·scale − lse), dS = scale · P ⊙ (dP − delta) on visible keys; zero elsewhere.
        for (int64_t t = t0; t < t1; t++) {
          float* pr = p_row(t);
          float* dsr = ds_row(t);
          const int64_t lo = std::max<int64_t>(seg_start[t], k0), hi = std::min(t + 1, k1);
          if (lo < hi) {
            exp_scaled_inplace(pr + lo, hi - lo, scale, lse_row[t]);
            const float delta_t = delta[t];
            for (int64_t j = lo; j < hi; j++) dsr[j] = scale * pr[j] * (dsr[j] - delta_t);
          }
          for (int64_t j = k0; j < std::min(lo, k1); j++) pr[j] = dsr[j] = 0.0f;
          for (int64_t j = std::max(hi, k0); j < k1; j++) pr[j] = dsr[j] = 0.0f;
        }

        // dV += Pᵀ·dO and dK += dSᵀ·Q, micro-blocks of keys over the queries that can see them.
        for (int64_t sa = k0; sa < k1; sa += MAX_R) {
          const int64_t sb = std::min(k1, sa + MAX_R);
          const int64_t la = std::max(t0, sa), lb = std::min<int64_t>(t1, seg_end[sb - 1]);
          if (la >= lb) continue;
          const int rows = static_cast<int>(sb - sa);
          row_block_multiply(rows, Dp, lb - la, p_row(la) + sa, 1, KEY_BLOCK, d_out_rows + la * Dp, Dp,
                             d_value + sa * Dp, Dp, true);
          row_block_multiply(rows, Dp, lb - la, ds_row(la) + sa, 1, KEY_BLOCK, queries + la * Dp, Dp,
                             d_key + sa * Dp, Dp, true);
        }

        // dQ += dS·K, micro-blocks of queries over the keys they can see.
        for (int64_t ta = t0; ta < t1; ta += MAX_R) {
          const int64_t tb = std::min(t1, ta + MAX_R);
          const int64_t la = std::max<int64_t>(k0, seg_start[ta]), lb = std::min(k1, tb);
          if (la >= lb) continue;
          row_block_multiply(static_cast<int>(tb - ta), Dp, lb - la, ds_row(ta) + la, KEY_BLOCK, 1,
                             keys + la * Dp, Dp, d_query + ta * Dp, Dp, true);
        }
      }
    }
    for (int64_t t = 0; t < T; t++) std::copy(d_query + t * Dp, d_query + t * Dp + D, dq + p.row(b, t, h, H));
  }
  for (int64_t t = 0; t < T; t++) {
    std::copy(d_key + t * Dp, d_key + t * Dp + D, dk + p.row(b, t, kvh, KV));
    std::copy(d_value + t * Dp, d_value + t * Dp + D, dv + p.row(b, t, kvh, KV));
  }
}

napi_value attention_binding(const Args& args) {
  const int64_t B = args.i64(4), T = args.i64(5), H = args.i64(6), KV = args.i64(7), D = args.i64(8);
  const int32_t* segments = args.i32(3, std::max<int64_t>(0, B * T));
  Problem p = make_problem(segments, B, T, H, KV, D, args.num(9));
  const float* q = args.f32(0, B * T * H * D);
  const float* k = args.f32(1, B * T * KV * D);
  const float* v = args.f32(2, B * T * KV * D);
  float* out = args.f32(10, B * T * H * D);
  float* lse = args.f32(11, B * H * T);
  std::vector<double> cost(B * KV);
  for (int64_t b = 0; b < B; b++) {
    const double work = (2 * attended_pairs(p, b) * (D + 1) + T * D) * p.group();
    for (int64_t g = 0; g < KV; g++) cost[b * KV + g] = work;
  }
  run_balanced(cost, [&](int64_t task) {
    thread_local ForwardScratch s;
    forward_group(p, q, k, v, out, lse, task / KV, task % KV, s);
  });
  return args.undefined();
}

napi_value attention_backward_binding(const Args& args) {
  const int64_t B = args.i64(7), T = args.i64(8), H = args.i64(9), KV = args.i64(10), D = args.i64(11);
  const int32_t* segments = args.i32(3, std::max<int64_t>(0, B * T));
  Problem p = make_problem(segments, B, T, H, KV, D, args.num(12));
  const int64_t q_len = B * T * H * D, kv_len = B * T * KV * D;
  const float* q = args.f32(0, q_len);
  const float* k = args.f32(1, kv_len);
  const float* v = args.f32(2, kv_len);
  const float* out = args.f32(4, q_len);
  const float* lse = args.f32(5, B * H * T);
  const float* d_out = args.f32(6, q_len);
  float* dq = args.f32(13, q_len);
  float* dk = args.f32(14, kv_len);
  float* dv = args.f32(15, kv_len);
  std::vector<double> cost(B * KV);
  for (int64_t b = 0; b < B; b++) {
    const double work = 5 * attended_pairs(p, b) * (D + 1) * p.group() + T * D;
    for (int64_t g = 0; g < KV; g++) cost[b * KV + g] = work;
  }
  run_balanced(cost, [&](int64_t task) {
    thread_local BackwardScratch s;
    backward_group(p, q, k, v, out, lse, d_out, dq, dk, dv, task / KV, task % KV, s);
  });
  return args.undefined();
}

}  // namespace

void register_attention(Registry& r) {
  r.add("attention", attention_binding);
  r.add("attentionBackward", attention_backward_binding);
}

}  // namespace tensor_native
