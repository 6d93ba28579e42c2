// GEMM: ref against hand-computed products and an independent float64 product; native against ref
// on every trans combination, odd sizes (edge tiles, several K/M/N cache blocks), offsets, leading
// dimensions wider than the matrix, batch strides (0 included), alpha/beta; 1 vs 2 threads giving
// the same bits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { backendKernels } from '../src/backend/select.js';
import type { F32, Kernels } from '../src/backend/kernels.js';
import { assertClose, randn } from './support/data.js';

const ref = backendKernels('ref');
const cpu = backendKernels('cpu');

/** One batched GEMM call's arguments, laid out the way the tests build them. */
interface Problem {
  batch: number;
  transA: boolean;
  transB: boolean;
  m: number;
  n: number;
  k: number;
  alpha: number;
  beta: number;
  a: F32;
  aOffset: number;
  lda: number;
  aBatchStride: number;
  b: F32;
  bOffset: number;
  ldb: number;
  bBatchStride: number;
  c: F32;
  cOffset: number;
  ldc: number;
  cBatchStride: number;
}

interface Shape {
  batch?: number;
  transA: boolean;
  transB: boolean;
  m: number;
  n: number;
  k: number;
  alpha?: number;
  beta?: number;
  /** Extra columns beyond the stored matrix width (lda = width + pad), likewise ldb, ldc. */
  pad?: number;
  offset?: number;
  /** 'shared' makes A's and B's batch strides 0; 'sharedC' makes C's 0 too (products accumulate in order). */
  strides?: 'packed' | 'shared' | 'sharedC';
  /** Fill C with NaN before the call (only valid with beta = 0). */
  nanC?: boolean;
  seed?: number;
}

function makeProblem(s: Shape): Problem {
  const batch = s.batch ?? 1;
  const pad = s.pad ?? 0;
  const offset = s.offset ?? 0;
  const seed = s.seed ?? 1;
  // Stored (row-major) shapes: A is k×m when transposed, else m×k; B is n×k when transposed, else k×n.
  const aRows = s.transA ? s.k : s.m;
  const aCols = s.transA ? s.m : s.k;
  const bRows = s.transB ? s.n : s.k;
  const bCols = s.transB ? s.k : s.n;
  const lda = aCols + pad;
  const ldb = bCols + pad;
  const ldc = s.n + pad;
  const shared = s.strides === 'shared' || s.strides === 'sharedC';
  const aBatchStride = shared ? 0 : aRows * lda + 3;
  const bBatchStride = shared ? 0 : bRows * ldb + 5;
  const cBatchStride = s.strides === 'sharedC' ? 0 : s.m * ldc + 2;
  const span = (stride: number, rows: number, ld: number) => offset + (batch - 1) * stride + rows * ld + 7;
  const c = randn(span(cBatchStride, s.m, ldc), seed + 2);
  if (s.nanC) c.fill(NaN);
  return {
    batch,
    transA: s.transA,
    transB: s.transB,
    m: s.m,
    n: s.n,
    k: s.k,
    alpha: s.alpha ?? 1,
    beta: s.beta ?? 0,
    a: randn(span(aBatchStride, aRows, lda), seed),
    aOffset: offset,
    lda,
    aBatchStride,
    b: randn(span(bBatchStride, bRows, ldb), seed + 1),
    bOffset: offset,
    ldb,
    bBatchStride,
    c,
    cOffset: offset,
    ldc,
    cBatchStride,
  };
}

/** Runs the problem on a backend against a private copy of C and returns that copy. */
function run(kernels: Kernels, p: Problem): F32 {
  const c = p.c.slice();
  kernels.gemm(
    p.batch,
    p.transA,
    p.transB,
    p.m,
    p.n,
    p.k,
    p.alpha,
    p.a,
    p.aOffset,
    p.lda,
    p.aBatchStride,
    p.b,
    p.bOffset,
    p.ldb,
    p.bBatchStride,
    p.beta,
    c,
    p.cOffset,
    p.ldc,
    p.cBatchStride,
  );
  return c;
}

/**
 * An independent float64 product: op(A) and op(B) are first materialised as explicit m×k and k×n
 * matrices (transposing by hand), then multiplied; C's padding and the gaps between batches must stay
 * untouched, so the whole buffer is returned.
 */
function naive(p: Problem): Float64Array {
  const c = Float64Array.from(p.c);
  for (let q = 0; q < p.batch; q++) {
    const opA: number[][] = [];
    for (let i = 0; i < p.m; i++) {
      const row: number[] = [];
      for (let l = 0; l < p.k; l++) {
        const stored = p.transA ? [l, i] : [i, l];
        row.push(p.a[p.aOffset + q * p.aBatchStride + stored[0]! * p.lda + stored[1]!]!);
      }
      opA.push(row);
    }
    const opB: number[][] = [];
    for (let l = 0; l < p.k; l++) {
      const row: number[] = [];
      for (let j = 0; j < p.n; j++) {
        const stored = p.transB ? [j, l] : [l, j];
        row.push(p.b[p.bOffset + q * p.bBatchStride + stored[0]! * p.ldb + stored[1]!]!);
      }
      opB.push(row);
    }
    for (let i = 0; i < p.m; i++) {
      for (let j = 0; j < p.n; j++) {
        let dot = 0;
        for (let l = 0; l < p.k; l++) dot += opA[i]![l]! * opB[l]![j]!;
        const at = p.cOffset + q * p.cBatchStride + i * p.ldc + j;
        c[at] = p.beta === 0 ? p.alpha * dot : p.alpha * dot + p.beta * c[at]!;
      }
    }
  }
  return c;
}

/** Float32 rounding of a k-term dot product of values in [-1, 1]: errors grow with k. */
function tolerance(k: number): { rtol: number; atol: number } {
  return { rtol: 2e-5, atol: 2e-6 * (k + 1) };
}

const TRANS: [boolean, boolean][] = [
  [false, false],
  [false, true],
  [true, false],
  [true, true],
];
const label = (s: Shape) =>
  `${s.transA ? 'T' : 'N'}${s.transB ? 'T' : 'N'} ${s.batch ?? 1}×${s.m}×${s.n}×${s.k} ` +
  `α=${s.alpha ?? 1} β=${s.beta ?? 0} pad=${s.pad ?? 0} off=${s.offset ?? 0} ${s.strides ?? 'packed'}`;

// ---- ref against hand-computed products -----------------------------------------------------------

test('ref gemm: a 2×3 by 3×2 product, by hand', () => {
  // A = [[1, 2, 3], [4, 5, 6]], B = [[7, 8], [9, 10], [11, 12]] → AB = [[58, 64], [139, 154]].
  const a = new Float32Array([1, 2, 3, 4, 5, 6]);
  const b = new Float32Array([7, 8, 9, 10, 11, 12]);
  const c = new Float32Array(4).fill(NaN);
  ref.gemm(1, false, false, 2, 2, 3, 1, a, 0, 3, 0, b, 0, 2, 0, 0, c, 0, 2, 0);
  assert.deepEqual([...c], [58, 64, 139, 154]);

  // The same product from stored transposes: Aᵀ is 3×2 ([[1, 4], [2, 5], [3, 6]]), Bᵀ is 2×3.
  const at = new Float32Array([1, 4, 2, 5, 3, 6]);
  const bt = new Float32Array([7, 9, 11, 8, 10, 12]);
  for (const [transA, transB] of TRANS) {
    const out = new Float32Array(4);
    const [aStored, lda] = transA ? [at, 2] : [a, 3];
    const [bStored, ldb] = transB ? [bt, 3] : [b, 2];
    ref.gemm(1, transA, transB, 2, 2, 3, 1, aStored, 0, lda, 0, bStored, 0, ldb, 0, 0, out, 0, 2, 0);
    assert.deepEqual([...out], [58, 64, 139, 154], `trans ${transA} ${transB}`);
  }
});

test('ref gemm: alpha, beta, offsets, leading dimensions and a shared operand, by hand', () => {
  // A = [[1, 2], [3, 4]] at offset 1 with lda 3 (one padding column), B = I·2 shared by two batches.
  const a = new Float32Array([99, 1, 2, 99, 3, 4, 99]);
  const b = new Float32Array([2, 0, 0, 2]);
  const c = new Float32Array([10, 20, 30, 40, -1, 1, 1, 1, 1]);
  // Batch 0: C0 = 0.5·(A·2I) + 2·C0 = A + 2·C0; batch 1 (c stride 5): C1 = A + 2·C1.
  ref.gemm(2, false, false, 2, 2, 2, 0.5, a, 1, 3, 0, b, 0, 2, 0, 2, c, 0, 2, 5);
  assert.deepEqual([...c], [21, 42, 63, 84, -1, 3, 4, 5, 6]);
});

test('ref gemm: beta = 0 ignores NaN in C; k = 0 scales C by beta; m or n = 0 touches nothing', () => {
  const a = new Float32Array([2]);
  const b = new Float32Array([3]);
  const c = new Float32Array([NaN]);
  ref.gemm(1, false, false, 1, 1, 1, 1, a, 0, 1, 0, b, 0, 1, 0, 0, c, 0, 1, 0);
  assert.deepEqual([...c], [6]);

  const scaled = new Float32Array([1, 2, 3, 4]);
  ref.gemm(1, false, false, 2, 2, 0, 1, a, 0, 1, 0, b, 0, 2, 0, 3, scaled, 0, 2, 0);
  assert.deepEqual([...scaled], [3, 6, 9, 12]);
  const zeroed = new Float32Array([NaN, 2, 3, NaN]);
  ref.gemm(1, false, false, 2, 2, 0, 1, a, 0, 1, 0, b, 0, 2, 0, 0, zeroed, 0, 2, 0);
  assert.deepEqual([...zeroed], [0, 0, 0, 0]);

  const untouched = new Float32Array([NaN, 5]);
  ref.gemm(1, false, false, 0, 2, 3, 1, a, 0, 3, 0, b, 0, 2, 0, 0, untouched, 0, 2, 0);
  ref.gemm(1, false, false, 2, 0, 3, 1, a, 0, 3, 0, b, 0, 1, 0, 0, untouched, 0, 1, 0);
  assert.deepEqual([...untouched], [NaN, 5]);
});

test('ref gemm matches an independent float64 product (all trans combos, batches, strides)', () => {
  const shapes: Shape[] = [];
  for (const [transA, transB] of TRANS) {
    shapes.push({ transA, transB, m: 5, n: 7, k: 3 });
    shapes.push({ transA, transB, m: 4, n: 3, k: 6, alpha: -0.5, beta: 1.5, pad: 2, offset: 3, batch: 3 });
    shapes.push({ transA, transB, m: 3, n: 2, k: 4, beta: 0.5, batch: 3, strides: 'sharedC' });
    shapes.push({ transA, transB, m: 2, n: 5, k: 3, batch: 2, strides: 'shared', nanC: true });
  }
  for (const s of shapes) {
    const p = makeProblem(s);
    assertClose(run(ref, p), naive(p), label(s), { rtol: 1e-6, atol: 1e-6 });
  }
});

// ---- native against ref ---------------------------------------------------------------------------

test('cpu gemm matches ref: edge tiles, tiny sizes, several cache blocks, every trans combo', () => {
  const sizes: [number, number, number][] = [
    [1, 1, 1],
    [1, 17, 1],
    [3, 5, 7],
    [13, 33, 17], // unpacked path
    [12, 32, 256], // exactly one tile and one K block
    [37, 65, 300], // packed: partial tiles, two K blocks
    [64, 64, 64],
    [100, 70, 513], // three K blocks
    [2, 300, 81],
    [500, 40, 20], // more rows than one M block
    [3, 4200, 9], // more columns than one N block
    [129, 1, 260],
    [1, 77, 37], // m ≤ 4: dot products against a stored Bᵀ
    [4, 300, 301],
    [3, 1001, 100],
    [2, 5, 700],
  ];
  for (const [transA, transB] of TRANS) {
    for (const [m, n, k] of sizes) {
      const s: Shape = { transA, transB, m, n, k };
      const p = makeProblem(s);
      assertClose(run(cpu, p), run(ref, p), label(s), tolerance(k));
    }
  }
});

test('cpu gemm matches ref: alpha, beta, offsets, padded leading dimensions, batch strides', () => {
  const shapes: Shape[] = [];
  for (const [transA, transB] of TRANS) {
    shapes.push({ transA, transB, m: 33, n: 47, k: 29, alpha: 0.75, beta: 1, pad: 3, offset: 5 });
    shapes.push({ transA, transB, m: 70, n: 45, k: 300, alpha: -2, beta: 0.5, pad: 1, offset: 2 });
    shapes.push({ transA, transB, m: 19, n: 40, k: 50, beta: 0, nanC: true, pad: 4 }); // packed, NaN in C
    shapes.push({ transA, transB, m: 3, n: 5, k: 4, beta: 0, nanC: true }); // unpacked, NaN in C
    shapes.push({ transA, transB, m: 3, n: 45, k: 70, alpha: -1.5, beta: 0.75, pad: 2, offset: 3 }); // m ≤ 4
    shapes.push({ transA, transB, m: 4, n: 3000, k: 90, beta: 0, nanC: true }); // m ≤ 4, threaded
    shapes.push({ transA, transB, m: 9, n: 11, k: 13, batch: 4, alpha: 1.5, beta: 1, offset: 1 });
    shapes.push({ transA, transB, m: 40, n: 50, k: 60, batch: 3, pad: 2, offset: 7 });
    shapes.push({ transA, transB, m: 24, n: 20, k: 30, batch: 5, strides: 'shared', beta: 0.25 });
    shapes.push({ transA, transB, m: 30, n: 36, k: 40, batch: 3, strides: 'sharedC', beta: 1 }); // accumulate
    shapes.push({ transA, transB, m: 6, n: 7, k: 0, batch: 2, beta: 2 }); // k = 0: C = beta·C
    shapes.push({ transA, transB, m: 6, n: 7, k: 0, beta: 0, nanC: true });
  }
  for (const s of shapes) {
    const p = makeProblem(s);
    assertClose(run(cpu, p), run(ref, p), label(s), tolerance(s.k * (s.batch ?? 1)));
  }
});

test('cpu gemm rejects leading dimensions and buffers that are too small', () => {
  const a = new Float32Array(6);
  const b = new Float32Array(6);
  const c = new Float32Array(4);
  assert.throws(() => cpu.gemm(1, false, false, 2, 2, 3, 1, a, 0, 2, 0, b, 0, 2, 0, 0, c, 0, 2, 0), /leading/);
  assert.throws(() => cpu.gemm(1, false, false, 2, 2, 3, 1, a, 1, 3, 0, b, 0, 2, 0, 0, c, 0, 2, 0), /elements/);
  assert.throws(() => cpu.gemm(2, false, false, 2, 2, 3, 1, a, 0, 3, 0, b, 0, 2, 0, 0, c, 0, 2, 4), /elements/);
});

// ---- determinism ----------------------------------------------------------------------------------

test('cpu gemm: 1 and 2 threads give the same bits', () => {
  const shapes: Shape[] = [];
  for (const [transA, transB] of TRANS) {
    shapes.push({ transA, transB, m: 203, n: 97, k: 301, alpha: 0.5, beta: 1 }); // split over M
    shapes.push({ transA, transB, m: 50, n: 333, k: 270, pad: 1 }); // split over N
    shapes.push({ transA, transB, m: 30, n: 70, k: 50, beta: 1 }); // unpacked, rows split
    shapes.push({ transA, transB, m: 3, n: 257, k: 300, alpha: 2 }); // unpacked, columns split
    shapes.push({ transA, transB, m: 20, n: 30, k: 40, batch: 6, beta: 0.5 }); // threads over the batch
    shapes.push({ transA, transB, m: 64, n: 48, k: 32, batch: 4, strides: 'sharedC', beta: 1 });
  }
  const before = cpu.threads();
  try {
    for (const s of shapes) {
      const p = makeProblem(s);
      cpu.setThreads(1);
      const one = run(cpu, p);
      cpu.setThreads(2);
      const two = run(cpu, p);
      assert.deepEqual(two, one, label(s));
    }
  } finally {
    cpu.setThreads(before);
  }
});
