// The kernel contract every backend implements: plain functions over typed arrays with explicit
// sizes. The tensor layer (views, broadcasting, autograd) sits above it and never touches a loop;
// a backend never sees a Tensor. The `ref` backend implements this in obvious TypeScript and is
// the oracle; `cpu` implements it in C++ (SIMD, threads) and is tested against `ref`.
//
// Conventions, for every kernel:
// - Buffers are contiguous row-major unless offsets/strides are passed; sizes are element counts.
// - Output buffers are written, never read, unless the kernel says it accumulates.
// - A kernel may not keep a reference to a buffer after it returns.
// - Results depend only on the inputs and the backend's thread count (deterministic).

export type F32 = Float32Array;
export type I32 = Int32Array;
export type U16 = Uint16Array;

export type UnaryOp =
  'neg' | 'exp' | 'log' | 'sqrt' | 'rsqrt' | 'reciprocal' | 'square' | 'abs' | 'sigmoid' | 'silu' | 'tanh' | 'relu';
export const UNARY_OPS: readonly UnaryOp[] = [
  'neg',
  'exp',
  'log',
  'sqrt',
  'rsqrt',
  'reciprocal',
  'square',
  'abs',
  'sigmoid',
  'silu',
  'tanh',
  'relu',
];

export type BinaryOp = 'add' | 'sub' | 'mul' | 'div' | 'maximum' | 'minimum' | 'pow';
export const BINARY_OPS: readonly BinaryOp[] = ['add', 'sub', 'mul', 'div', 'maximum', 'minimum', 'pow'];

export type ReduceOp = 'sum' | 'max' | 'min';

export interface Kernels {
  readonly name: string;
  /** Worker threads used by kernels (1 for `ref`). */
  threads(): number;
  setThreads(n: number): void;

  // ---- data movement -------------------------------------------------------------------------
  /** dst[i] = value for i < n. */
  fill(dst: F32, n: number, value: number): void;
  /**
   * Gather a strided view into a contiguous buffer: for every index tuple (i0..i_{r-1}) of
   * `shape` in row-major order, dst[flat] = src[offset + Σ i_d·strides[d]]. Rank ≤ 8, strides ≥ 0.
   */
  stridedCopy(src: F32, offset: number, shape: readonly number[], strides: readonly number[], dst: F32): void;
  /** Round-to-nearest-even f32 → bf16 bits; NaN stays NaN. */
  f32ToBf16(src: F32, dst: U16, n: number): void;
  bf16ToF32(src: U16, dst: F32, n: number): void;
  i32ToF32(src: I32, dst: F32, n: number): void;

  // ---- elementwise -----------------------------------------------------------------------------
  /** out[i] = op(x[i]); out may alias x. */
  unary(op: UnaryOp, x: F32, out: F32, n: number): void;
  /**
   * dx[i] (+)= dy[i] · op'(x[i]); y = op(x) is passed too so rules like exp/sqrt/sigmoid can use it.
   * Accumulates into dx when `accumulate`.
   */
  unaryBackward(op: UnaryOp, x: F32, y: F32, dy: F32, dx: F32, n: number, accumulate: boolean): void;
  /** out[i] = x[i]·scale + shift (out may alias x). */
  affine(x: F32, out: F32, n: number, scale: number, shift: number): void;
  /** out[i] = x[i]^p. */
  powScalar(x: F32, out: F32, n: number, p: number): void;
  /** out[i] = min(max(x[i], lo), hi). */
  clamp(x: F32, out: F32, n: number, lo: number, hi: number): void;
  /**
   * Broadcasting binary op. `shape` is the output shape (rank ≤ 8, out contiguous). a and b are
   * read at aOffset + Σ i_d·aStrides[d] (stride 0 on broadcast dims); likewise b.
   */
  binary(
    op: BinaryOp,
    a: F32,
    aOffset: number,
    aStrides: readonly number[],
    b: F32,
    bOffset: number,
    bStrides: readonly number[],
    out: F32,
    shape: readonly number[],
  ): void;
  /** y (+)= alpha·x, n elements (the AXPY used for gradient accumulation). */
  axpy(alpha: number, x: F32, y: F32, n: number): void;

  // ---- reductions ------------------------------------------------------------------------------
  /**
   * x viewed as [outer, size, inner] (contiguous); out[o, i] = reduce over s of x[o, s, i].
   * Sums accumulate in at least f32 in a fixed order.
   */
  reduce(op: ReduceOp, x: F32, outer: number, size: number, inner: number, out: F32): void;
  /** Σ x[i]² accumulated in f64 (gradient norms). */
  sumSquares(x: F32, n: number): number;

  // ---- linear algebra --------------------------------------------------------------------------
  /**
   * Batched GEMM: for p < batch, C_p = alpha · op(A_p) · op(B_p) + beta · C_p, with op(A_p) m×k and
   * op(B_p) k×n, row-major with leading dimensions lda/ldb/ldc.
   *   A_p(i, l) = a[aOffset + p·aBatchStride + (transA ? l·lda + i : i·lda + l)]
   *   B_p(l, j) = b[bOffset + p·bBatchStride + (transB ? j·ldb + l : l·ldb + j)]
   *   C_p(i, j) = c[cOffset + p·cBatchStride + i·ldc + j]
   * Batch strides may be 0 (a shared operand). beta = 0 ignores C's old contents (NaN included).
   */
  gemm(
    batch: number,
    transA: boolean,
    transB: boolean,
    m: number,
    n: number,
    k: number,
    alpha: number,
    a: F32,
    aOffset: number,
    lda: number,
    aBatchStride: number,
    b: F32,
    bOffset: number,
    ldb: number,
    bBatchStride: number,
    beta: number,
    c: F32,
    cOffset: number,
    ldc: number,
    cBatchStride: number,
  ): void;

  // ---- transformer ops -------------------------------------------------------------------------
  /**
   * out[r, :] = weight[ids[r], :] for r < rows. ids are validated against vocab = weight.length / dim
   * before anything is written (an error names the bad id and its row).
   */
  embedding(weight: F32, ids: I32, rows: number, dim: number, out: F32): void;
  /** dWeight[ids[r], :] += dOut[r, :] (accumulates; repeated ids sum in row order). */
  embeddingBackward(dOut: F32, ids: I32, rows: number, dim: number, dWeight: F32): void;

  /** y[r] = x[r] · rstd[r] · w, rstd[r] = 1/sqrt(mean(x[r]²) + eps); x is [rows, dim]. */
  rmsnorm(x: F32, w: F32, rows: number, dim: number, eps: number, y: F32, rstd: F32): void;
  /** dx written (or accumulated); dw accumulated (always). */
  rmsnormBackward(
    dy: F32,
    x: F32,
    w: F32,
    rstd: F32,
    rows: number,
    dim: number,
    dx: F32,
    dw: F32,
    accumulateDx: boolean,
  ): void;

  /**
   * Rotary embedding, Hugging Face "rotate_half" layout: x is [tokens, heads, dim] and pairs
   * element i with i + dim/2. angle = positions[t] · theta^(−2i/dim). inverse rotates by −angle
   * (which is the backward pass). out may alias x. dim must be even; positions may be any int32.
   */
  rope(
    x: F32,
    positions: I32,
    tokens: number,
    heads: number,
    dim: number,
    theta: number,
    inverse: boolean,
    out: F32,
  ): void;

  /** out = silu(g) · u. */
  swiglu(g: F32, u: F32, out: F32, n: number): void;
  /** dg, du written (or accumulated). */
  swigluBackward(g: F32, u: F32, dOut: F32, dg: F32, du: F32, n: number, accumulate: boolean): void;

  /**
   * Row softmax / log-softmax over the last dim of [rows, n]; out may alias x. −Inf entries get
   * probability 0; a row that is entirely −Inf gives NaN (as PyTorch does).
   */
  softmax(x: F32, rows: number, n: number, out: F32): void;
  /** dx = y ⊙ (dy − Σ y·dy) (written or accumulated). */
  softmaxBackward(y: F32, dy: F32, rows: number, n: number, dx: F32, accumulate: boolean): void;
  logSoftmax(x: F32, rows: number, n: number, out: F32): void;
  /** dx = dy − exp(y) · Σ dy (written or accumulated). */
  logSoftmaxBackward(y: F32, dy: F32, rows: number, n: number, dx: F32, accumulate: boolean): void;

  /** out[r] = x[r, idx[r]] for x [rows, n]; idx is validated against [0, n). */
  gatherRows(x: F32, idx: I32, rows: number, n: number, out: F32): void;
  /** dx[r, idx[r]] += dOut[r] (dx accumulates). */
  gatherRowsBackward(dOut: F32, idx: I32, rows: number, n: number, dx: F32): void;

  /**
   * Causal grouped-query attention over packed sequences. q [B, T, H, D], k and v [B, T, KV, D],
   * out [B, T, H, D], lse [B, H, T] (log-sum-exp of the scaled scores, saved for backward).
   * segments [B, T]: query t attends key s iff s ≤ t and segments[b, s] == segments[b, t]; a segment
   * occupies one contiguous run of positions. Query head h reads kv head h / (H / KV).
   */
  attention(
    q: F32,
    k: F32,
    v: F32,
    segments: I32,
    batch: number,
    seq: number,
    heads: number,
    kvHeads: number,
    dim: number,
    scale: number,
    out: F32,
    lse: F32,
  ): void;
  /** dq, dk, dv written (not accumulated). */
  attentionBackward(
    q: F32,
    k: F32,
    v: F32,
    segments: I32,
    out: F32,
    lse: F32,
    dOut: F32,
    batch: number,
    seq: number,
    heads: number,
    kvHeads: number,
    dim: number,
    scale: number,
    dq: F32,
    dk: F32,
    dv: F32,
  ): void;

  /**
   * Attention of new tokens against a key/value cache (inference; no backward). Token i of q [N, H, D]
   * belongs to cache slot slots[i] and sits at position positions[i]; it attends keys 0..positions[i]
   * of that slot. Caches are [slots, capacity, KV, D]; the caller has already written each token's own
   * key and value at its position. out [N, H, D].
   */
  attentionCached(
    q: F32,
    kCache: F32,
    vCache: F32,
    slots: I32,
    positions: I32,
    tokens: number,
    heads: number,
    kvHeads: number,
    dim: number,
    numSlots: number,
    capacity: number,
    scale: number,
    out: F32,
  ): void;

  /**
   * Fused LM head + log-probability of target tokens + entropy, `chunk` rows of logits at a time
   * (never the whole [rows, vocab] matrix). hidden [rows, dim], weight [vocab, dim]:
   *   z = (hidden · weightᵀ) · invTemperature
   *   logprob[r] = z[r, targets[r]] − lse[r]
   *   entropy[r] = lse[r] − Σ_j softmax(z[r])_j · z[r, j]
   * lse[r] is saved for backward.
   */
  tokenLogprobs(
    hidden: F32,
    weight: F32,
    targets: I32,
    rows: number,
    dim: number,
    vocab: number,
    invTemperature: number,
    chunk: number,
    logprobs: F32,
    entropy: F32,
    lse: F32,
  ): void;
  /**
   * Gradients of Σ dLogprobs·logprob + Σ dEntropy·entropy (dEntropy may be null: no entropy
   * gradient). dHidden is written (or accumulated); dWeight accumulates (always).
   */
  tokenLogprobsBackward(
    hidden: F32,
    weight: F32,
    targets: I32,
    rows: number,
    dim: number,
    vocab: number,
    invTemperature: number,
    chunk: number,
    lse: F32,
    entropy: F32,
    dLogprobs: F32,
    dEntropy: F32 | null,
    dHidden: F32,
    dWeight: F32,
    accumulateDHidden: boolean,
  ): void;

  // ---- optimizers (in place) ---------------------------------------------------------------------
  /**
   * One AdamW update (PyTorch semantics, decoupled decay):
   *   m = b1·m + (1−b1)·g;  v = b2·v + (1−b2)·g²
   *   p = p·(1 − lr·wd) − lr · (m / bc1) / (sqrt(v / bc2) + eps)
   * where bc1 = 1 − b1^step and bc2 = 1 − b2^step are passed in.
   */
  adamw(
    p: F32,
    g: F32,
    m: F32,
    v: F32,
    n: number,
    lr: number,
    beta1: number,
    beta2: number,
    eps: number,
    weightDecay: number,
    bc1: number,
    bc2: number,
  ): void;
  /**
   * One SGD update (PyTorch semantics): g' = g + wd·p; buf = first ? g' : momentum·buf + g';
   * d = nesterov ? g' + momentum·buf : buf (d = g' when momentum = 0); p −= lr·d.
   */
  sgd(
    p: F32,
    g: F32,
    buf: F32,
    n: number,
    lr: number,
    momentum: number,
    weightDecay: number,
    nesterov: boolean,
    first: boolean,
  ): void;
}
