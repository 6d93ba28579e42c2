// Elementwise kernels and reductions. ref is checked against hand-computed values and float64
// formulas (unaryBackward by central finite differences); cpu is checked against ref on random data
// with odd sizes, offsets and broadcasting, and 1 vs 2 threads for identical bits.
import test from 'node:test';
import assert from 'node:assert/strict';
import { BINARY_OPS, UNARY_OPS, type BinaryOp, type Kernels, type UnaryOp } from '../src/backend/kernels.js';
import { backendKernels } from '../src/backend/select.js';
import { assertClose as assertCloseFinite, randn } from './support/data.js';

const ref = backendKernels('ref');
const cpu = backendKernels('cpu');
const backends = [ref, cpu];

const SIZES = [0, 1, 7, 16, 17, 33, 1001];
const LARGE = 100_003; // above every grain: the pool splits it

function assertSameBits(actual: Float32Array, expected: Float32Array, label: string): void {
  assert.equal(actual.length, expected.length, `${label}: length`);
  const a = new Uint32Array(actual.buffer, actual.byteOffset, actual.length);
  const e = new Uint32Array(expected.buffer, expected.byteOffset, expected.length);
  for (let i = 0; i < a.length; i++)
    if (a[i] !== e[i]) assert.fail(`${label}: element ${i} is ${actual[i]}, expected ${expected[i]} (bits differ)`);
}

/** assertClose that also accepts equal infinities (inf − inf is NaN, which assertClose rejects). */
function assertClose(
  actual: Float32Array,
  expected: Float32Array,
  label: string,
  tolerance: { rtol?: number; atol?: number },
): void {
  const a = Float64Array.from(actual);
  const e = Float64Array.from(expected);
  for (let i = 0; i < a.length; i++)
    if (a[i] === e[i]) {
      a[i] = 0;
      e[i] = 0;
    }
  assertCloseFinite(a, e, label, tolerance);
}

/** Runs fn on cpu with 1 and with 2 threads and asserts both give the same bits; returns the result. */
function sameBitsAcrossThreads(label: string, fn: (k: Kernels) => Float32Array): Float32Array {
  cpu.setThreads(1);
  const one = fn(cpu);
  cpu.setThreads(2);
  const two = fn(cpu);
  assertSameBits(two, one, `${label}: 1 vs 2 threads`);
  return two;
}

function sigmoid64(x: number): number {
  return x >= 0 ? 1 / (1 + Math.exp(-x)) : Math.exp(x) / (1 + Math.exp(x));
}

/** The ops in float64, written independently of the ref backend. */
const F64: Record<UnaryOp, (x: number) => number> = {
  neg: (x) => -x,
  exp: Math.exp,
  log: Math.log,
  sqrt: Math.sqrt,
  rsqrt: (x) => Math.pow(x, -0.5),
  reciprocal: (x) => 1 / x,
  square: (x) => x * x,
  abs: Math.abs,
  sigmoid: sigmoid64,
  silu: (x) => x * sigmoid64(x),
  tanh: Math.tanh,
  relu: (x) => Math.max(x, 0),
};

/** Inputs in each op's domain (positive where the op or its derivative needs it). */
function inputsFor(op: UnaryOp, n: number, seed: number): Float32Array {
  const x = randn(n, seed, 1);
  for (let i = 0; i < n; i++) {
    const u = x[i]!;
    if (op === 'log' || op === 'sqrt' || op === 'rsqrt')
      x[i] = Math.exp(u * 12); // 6e-6 .. 1.6e5
    else if (op === 'exp') x[i] = u * 80;
    else if (op === 'sigmoid' || op === 'silu' || op === 'tanh') x[i] = u * 12;
    else if (op === 'reciprocal') x[i] = (u < 0 ? -1 : 1) * Math.exp(u * 10);
    else x[i] = u * 4;
  }
  return x;
}

const SPECIALS = [0, -0, 1, -1, Infinity, -Infinity, NaN, 1e-40, -1e-40, 88.5, 89, -87.5, -103, -110, 20, -20, 0.3];

// ---- unary ------------------------------------------------------------------------------------------

test('unary: ref matches hand-computed values', () => {
  const cases: [UnaryOp, number, number][] = [
    ['neg', 2, -2],
    ['exp', 0, 1],
    ['exp', 1, Math.fround(Math.E)],
    ['exp', -Infinity, 0],
    ['exp', 100, Infinity],
    ['log', 1, 0],
    ['log', 0, -Infinity],
    ['log', -1, NaN],
    ['sqrt', 4, 2],
    ['rsqrt', 4, 0.5],
    ['reciprocal', -8, -0.125],
    ['square', -3, 9],
    ['abs', -2.5, 2.5],
    ['sigmoid', 0, 0.5],
    ['sigmoid', 100, 1],
    ['sigmoid', -800, 0], // e^800 would overflow a naive formula
    ['silu', 0, 0],
    ['silu', 2, Math.fround(2 / (1 + Math.exp(-2)))],
    ['silu', -800, -0],
    ['tanh', 0, 0],
    ['tanh', 20, 1],
    ['tanh', -20, -1],
    ['relu', -1, 0],
    ['relu', 3, 3],
    ['relu', NaN, NaN],
  ];
  for (const [op, x, want] of cases) {
    const out = new Float32Array(1);
    ref.unary(op, Float32Array.of(x), out, 1);
    assert.ok(Object.is(out[0], want) || out[0] === want, `ref ${op}(${x}) = ${out[0]}, expected ${want}`);
  }
});

test('unary: ref equals the float64 formula rounded once', () => {
  for (const op of UNARY_OPS) {
    const x = inputsFor(op, 500, 1);
    const out = new Float32Array(x.length);
    ref.unary(op, x, out, x.length);
    for (let i = 0; i < x.length; i++) {
      const want = Math.fround(F64[op](x[i]!));
      // 2.5e-7: two float64 evaluations may round to neighbouring floats
      assert.ok(Math.abs(out[i]! - want) <= 2.5e-7 * Math.abs(want), `ref ${op}(${x[i]}) = ${out[i]}, want ${want}`);
    }
  }
});

test('unary: cpu matches ref (odd sizes, special values, in place); 1 and 2 threads agree', () => {
  for (const op of UNARY_OPS) {
    for (const n of SIZES) {
      const x = inputsFor(op, n, 10 + n);
      const want = new Float32Array(n);
      ref.unary(op, x, want, n);
      const got = new Float32Array(n + 1).fill(42);
      cpu.unary(op, x, got, n);
      assert.equal(got[n], 42, `cpu ${op} writes past n`);
      assertClose(got.subarray(0, n), want, `cpu ${op} n=${n}`, { rtol: 1e-6, atol: 1e-30 });
    }
    const sx = Float32Array.from(SPECIALS);
    const want = new Float32Array(sx.length);
    ref.unary(op, sx, want, sx.length);
    const got = new Float32Array(sx.length);
    cpu.unary(op, sx, got, sx.length);
    // Results below ~1e-38 may flush differently (silu/sigmoid far out): absolute 1e-37.
    assertClose(got, want, `cpu ${op} special values`, { rtol: 1e-6, atol: 1e-37 });

    const x = inputsFor(op, LARGE, 99);
    const wantLarge = new Float32Array(LARGE);
    ref.unary(op, x, wantLarge, LARGE);
    const gotLarge = sameBitsAcrossThreads(`cpu ${op}`, (k) => {
      const out = new Float32Array(LARGE);
      k.unary(op, x, out, LARGE);
      return out;
    });
    assertClose(gotLarge, wantLarge, `cpu ${op} large`, { rtol: 1e-6, atol: 1e-30 });
    const inPlace = x.slice();
    cpu.unary(op, inPlace, inPlace, LARGE);
    assertSameBits(inPlace, gotLarge, `cpu ${op} in place`);
  }
});

test('unary: cpu exp/log/tanh/sigmoid stay within a few ulp over wide ranges', (t) => {
  // Dense sweeps of the hard regions; the bound is in units of the result's f32 spacing.
  const n = 200_001;
  const sweeps: [UnaryOp, number, number][] = [
    ['exp', -104, 89],
    ['log', 1e-44, 3e38],
    ['log', 0.5, 2],
    ['tanh', -10, 10],
    ['tanh', -0.7, 0.7],
    ['sigmoid', -90, 30],
    ['silu', -30, 30],
  ];
  for (const [op, lo, hi] of sweeps) {
    const x = new Float32Array(n);
    const geometric = op === 'log' && lo > 0 && hi / lo > 1e6;
    for (let i = 0; i < n; i++) x[i] = geometric ? lo * Math.pow(hi / lo, i / (n - 1)) : lo + ((hi - lo) * i) / (n - 1);
    const got = new Float32Array(n);
    cpu.unary(op, x, got, n);
    let worst = 0;
    for (let i = 0; i < n; i++) {
      const exact = F64[op](x[i]!);
      if (!Number.isFinite(Math.fround(exact))) {
        assert.equal(got[i], Math.fround(exact), `cpu ${op}(${x[i]}) overflows`);
        continue;
      }
      const ulp = Math.max(Math.abs(exact) * 2 ** -23, 2 ** -149);
      worst = Math.max(worst, Math.abs(got[i]! - exact) / ulp);
    }
    t.diagnostic(`cpu ${op} on [${lo}, ${hi}]: worst error ${worst.toFixed(2)} ulp`);
    assert.ok(worst <= 3, `cpu ${op} on [${lo}, ${hi}]: worst error ${worst.toFixed(2)} ulp`);
  }
});

// ---- unaryBackward -------------------------------------------------------------------------------

test('unaryBackward: ref matches central finite differences in float64', () => {
  for (const op of UNARY_OPS) {
    const x = inputsFor(op, 200, 3);
    // keep clear of the kinks of abs and relu, where the difference quotient is not the derivative
    for (let i = 0; i < x.length; i++) if (Math.abs(x[i]!) < 1e-3) x[i] = 0.5;
    if (op === 'exp') for (let i = 0; i < x.length; i++) x[i] = x[i]! / 8;
    const y = new Float32Array(x.length);
    ref.unary(op, x, y, x.length);
    const dy = randn(x.length, 4);
    const dx = new Float32Array(x.length);
    ref.unaryBackward(op, x, y, dy, dx, x.length, false);
    for (let i = 0; i < x.length; i++) {
      const xi = x[i]!;
      const h = 1e-5 * Math.abs(xi); // relative step: inputs are kept ≥ 1e-3 away from 0
      const slope = (F64[op](xi + h) - F64[op](xi - h)) / (2 * h);
      const want = dy[i]! * slope;
      assert.ok(
        Math.abs(dx[i]! - want) <= 1e-5 * Math.abs(want) + 1e-7,
        `ref ${op}' at ${xi}: ${dx[i]} vs finite difference ${want}`,
      );
    }
  }
});

test('unaryBackward: ref kinks, accumulate, and hand-computed values', () => {
  const x = Float32Array.of(0, -0, 2, -2);
  const dy = Float32Array.of(1, 1, 1, 1);
  const dx = new Float32Array(4);
  ref.unaryBackward('relu', x, x, dy, dx, 4, false);
  assert.deepEqual(Array.from(dx), [0, 0, 1, 0], "relu'(0) = 0");
  ref.unaryBackward('abs', x, x, dy, dx, 4, false);
  assert.deepEqual(Array.from(dx), [0, 0, 1, -1], "abs'(0) = 0");
  dx.fill(10);
  ref.unaryBackward('square', x, x, Float32Array.of(1, 1, 0.5, 2), dx, 4, true);
  assert.deepEqual(Array.from(dx), [10, 10, 12, 2], 'square accumulates 2x·dy');
  dx.fill(0);
  ref.unaryBackward('sigmoid', Float32Array.of(0), Float32Array.of(0.5), Float32Array.of(4), dx, 1, false);
  assert.equal(dx[0], 1, "sigmoid'(0) = 1/4");
  ref.unaryBackward('silu', Float32Array.of(0), Float32Array.of(0), Float32Array.of(4), dx, 1, false);
  assert.equal(dx[0], 2, "silu'(0) = 1/2");
});

test('unaryBackward: cpu matches ref, written and accumulated; 1 and 2 threads agree', () => {
  for (const op of UNARY_OPS) {
    for (const n of [...SIZES, LARGE]) {
      const x = inputsFor(op, n, 20 + n);
      if (n > 4) x[1] = 0; // the kinks of relu and abs
      if (op === 'log' || op === 'sqrt' || op === 'rsqrt' || op === 'reciprocal') x[1] = 1.5;
      const y = new Float32Array(n);
      ref.unary(op, x, y, n);
      const dy = randn(n, 30 + n);
      const base = randn(n, 40 + n);
      for (const accumulate of [false, true]) {
        const want = base.slice();
        ref.unaryBackward(op, x, y, dy, want, n, accumulate);
        const run = (k: Kernels) => {
          const dx = base.slice();
          k.unaryBackward(op, x, y, dy, dx, n, accumulate);
          return dx;
        };
        const got = n === LARGE ? sameBitsAcrossThreads(`cpu ${op}' large`, run) : run(cpu);
        // cpu derives sigmoid/tanh gradients from the rounded y (1 − y cancels): |dy| ≤ 1, so an
        // absolute 5e-7 covers that
        assertClose(got, want, `cpu ${op}' n=${n} accumulate=${accumulate}`, { rtol: 2e-6, atol: 5e-7 });
      }
    }
  }
});

// ---- affine, powScalar, clamp, axpy --------------------------------------------------------------

test('affine, powScalar, clamp, axpy: ref hand-computed values', () => {
  const x = Float32Array.of(-2, 0.5, 3);
  const out = new Float32Array(3);
  ref.affine(x, out, 3, 2, 1);
  assert.deepEqual(Array.from(out), [-3, 2, 7]);
  ref.powScalar(x, out, 3, 2);
  assert.deepEqual(Array.from(out), [4, 0.25, 9]);
  ref.powScalar(Float32Array.of(4, 0.25, 9), out, 3, 0.5);
  assert.deepEqual(Array.from(out), [2, 0.5, 3]);
  ref.clamp(Float32Array.of(-5, 0.5, 5), out, 3, -1, 1);
  assert.deepEqual(Array.from(out), [-1, 0.5, 1]);
  ref.clamp(Float32Array.of(NaN), out, 1, -1, 1);
  assert.ok(Number.isNaN(out[0]), 'clamp keeps NaN');
  const y = Float32Array.of(1, 1, 1);
  ref.axpy(0.5, x, y, 3);
  assert.deepEqual(Array.from(y), [0, 1.25, 2.5]);
});

test('affine, powScalar, clamp, axpy: cpu matches ref; in place; 1 and 2 threads agree', () => {
  for (const n of [...SIZES, LARGE]) {
    const x = randn(n, 50 + n, 3);
    const positive = x.map((v) => Math.abs(v) + 0.01);
    const check = (label: string, run: (k: Kernels) => Float32Array, rtol = 1e-6) => {
      const want = run(ref);
      const got = n === LARGE ? sameBitsAcrossThreads(label, run) : run(cpu);
      assertClose(got, want, `${label} n=${n}`, { rtol, atol: 1e-6 });
    };
    check('cpu affine', (k) => {
      const out = new Float32Array(n);
      k.affine(x, out, n, 1.5, -0.25);
      return out;
    });
    const inPlace = x.slice();
    cpu.affine(inPlace, inPlace, n, 1.5, -0.25);
    const separate = new Float32Array(n);
    cpu.affine(x, separate, n, 1.5, -0.25);
    assertSameBits(inPlace, separate, `cpu affine in place n=${n}`);
    for (const p of [0, 1, 2, 3, -1, 0.5, 1.7, -2.5]) {
      const input = Number.isInteger(p) ? x : positive;
      check(`cpu powScalar p=${p}`, (k) => {
        const out = new Float32Array(n);
        k.powScalar(input, out, n, p);
        return out;
      });
    }
    check('cpu clamp', (k) => {
      const out = new Float32Array(n);
      k.clamp(x, out, n, -1, 0.75);
      return out;
    });
    const y0 = randn(n, 60 + n);
    check('cpu axpy', (k) => {
      const y = y0.slice();
      k.axpy(-0.3, x, y, n);
      return y;
    });
  }
  const special = Float32Array.of(NaN, Infinity, -Infinity, -0, 0);
  for (const [label, run] of [
    ['clamp', (k: Kernels, out: Float32Array) => k.clamp(special, out, 5, -1, 1)],
    ['pow 2', (k: Kernels, out: Float32Array) => k.powScalar(special, out, 5, 2)],
    ['pow -1', (k: Kernels, out: Float32Array) => k.powScalar(special, out, 5, -1)],
    ['pow 0', (k: Kernels, out: Float32Array) => k.powScalar(special, out, 5, 0)],
    ['pow 0.5', (k: Kernels, out: Float32Array) => k.powScalar(special, out, 5, 0.5)],
  ] as const) {
    const want = new Float32Array(5);
    const got = new Float32Array(5);
    run(ref, want);
    run(cpu, got);
    for (let i = 0; i < 5; i++)
      assert.ok(Object.is(got[i], want[i]), `${label}(${special[i]}): ${got[i]} vs ${want[i]}`);
  }
});

// ---- binary ---------------------------------------------------------------------------------------

test('binary: ref hand-computed broadcasting', () => {
  // a: [2,3] at offset 1 of [9, 1..6]; b: a [3] row broadcast over rows
  const a = Float32Array.of(9, 1, 2, 3, 4, 5, 6);
  const b = Float32Array.of(10, 20, 30);
  const out = new Float32Array(6);
  ref.binary('add', a, 1, [3, 1], b, 0, [0, 1], out, [2, 3]);
  assert.deepEqual(Array.from(out), [11, 22, 33, 14, 25, 36]);
  // column broadcast: b[1..2] is a [2,1] column
  ref.binary('mul', a, 1, [3, 1], b, 1, [1, 0], out, [2, 3]);
  assert.deepEqual(Array.from(out), [20, 40, 60, 120, 150, 180]);
  // a transposed: out[i,j] = a[j,i] − b[0]
  const out2 = new Float32Array(6);
  ref.binary('sub', a, 1, [1, 3], b, 0, [0, 0], out2, [3, 2]);
  assert.deepEqual(Array.from(out2), [-9, -6, -8, -5, -7, -4]);
  const one = new Float32Array(1);
  ref.binary('pow', Float32Array.of(2), 0, [], Float32Array.of(10), 0, [], one, []);
  assert.equal(one[0], 1024, 'rank 0');
  ref.binary('div', Float32Array.of(1), 0, [], Float32Array.of(3), 0, [], one, []);
  assert.equal(one[0], Math.fround(1 / 3));
  ref.binary('maximum', Float32Array.of(NaN, 1, 2), 0, [1], Float32Array.of(0, NaN, 3), 0, [1], out, [3]);
  assert.ok(Number.isNaN(out[0]) && Number.isNaN(out[1]), 'maximum propagates NaN');
  assert.equal(out[2], 3);
  ref.binary('minimum', Float32Array.of(NaN, 1, 2), 0, [1], Float32Array.of(0, NaN, 3), 0, [1], out, [3]);
  assert.ok(Number.isNaN(out[0]) && Number.isNaN(out[1]), 'minimum propagates NaN');
  assert.equal(out[2], 2);
});

interface BinaryCase {
  label: string;
  shape: number[];
  aStrides: number[];
  bStrides: number[];
  aOffset: number;
  bOffset: number;
}

function contiguous(shape: readonly number[]): number[] {
  const strides = new Array<number>(shape.length).fill(1);
  for (let d = shape.length - 2; d >= 0; d--) strides[d] = strides[d + 1]! * shape[d + 1]!;
  return strides;
}

/** Elements a strided view reads, so the test can size the source array. */
function extent(shape: readonly number[], strides: readonly number[], offset: number): number {
  let last = offset;
  for (let d = 0; d < shape.length; d++) last += (shape[d]! - 1) * strides[d]!;
  return shape.some((s) => s === 0) ? offset : last + 1;
}

const BINARY_CASES: BinaryCase[] = [
  { label: 'same shape contiguous', shape: [1001], aStrides: [1], bStrides: [1], aOffset: 0, bOffset: 0 },
  {
    label: 'same shape 3d, offsets',
    shape: [3, 7, 11],
    aStrides: [77, 11, 1],
    bStrides: [77, 11, 1],
    aOffset: 5,
    bOffset: 2,
  },
  { label: 'b scalar', shape: [5, 33], aStrides: [33, 1], bStrides: [0, 0], aOffset: 1, bOffset: 3 },
  { label: 'a scalar', shape: [5, 33], aStrides: [0, 0], bStrides: [33, 1], aOffset: 2, bOffset: 0 },
  { label: 'row broadcast b', shape: [9, 37], aStrides: [37, 1], bStrides: [0, 1], aOffset: 0, bOffset: 4 },
  { label: 'row broadcast a', shape: [9, 37], aStrides: [0, 1], bStrides: [37, 1], aOffset: 1, bOffset: 0 },
  { label: 'column broadcast b', shape: [9, 37], aStrides: [37, 1], bStrides: [1, 0], aOffset: 0, bOffset: 0 },
  { label: 'transposed a', shape: [13, 17], aStrides: [1, 13], bStrides: [17, 1], aOffset: 0, bOffset: 0 },
  { label: 'both strided', shape: [6, 10], aStrides: [20, 2], bStrides: [1, 6], aOffset: 3, bOffset: 1 },
  { label: 'middle broadcast', shape: [4, 5, 6], aStrides: [30, 6, 1], bStrides: [6, 0, 1], aOffset: 0, bOffset: 0 },
  {
    label: 'rank 8 with ones',
    shape: [2, 1, 3, 1, 2, 2, 1, 5],
    aStrides: contiguous([2, 1, 3, 1, 2, 2, 1, 5]),
    bStrides: [0, 9, 10, 9, 5, 0, 9, 1],
    aOffset: 0,
    bOffset: 0,
  },
  { label: 'rank 0', shape: [], aStrides: [], bStrides: [], aOffset: 3, bOffset: 1 },
  { label: 'zero size', shape: [4, 0, 3], aStrides: [0, 3, 1], bStrides: [0, 3, 1], aOffset: 0, bOffset: 0 },
  { label: 'large row broadcast', shape: [211, 503], aStrides: [503, 1], bStrides: [0, 1], aOffset: 0, bOffset: 0 },
  { label: 'large contiguous', shape: [LARGE], aStrides: [1], bStrides: [1], aOffset: 1, bOffset: 2 },
  { label: 'large column broadcast', shape: [503, 211], aStrides: [211, 1], bStrides: [1, 0], aOffset: 0, bOffset: 0 },
  { label: 'large transposed', shape: [317, 331], aStrides: [1, 317], bStrides: [0, 1], aOffset: 0, bOffset: 0 },
];

test('binary: cpu matches ref for every op and broadcasting pattern; 1 and 2 threads agree', () => {
  for (const c of BINARY_CASES) {
    const n = c.shape.reduce((p, s) => p * s, 1);
    const a = randn(extent(c.shape, c.aStrides, c.aOffset), 70, 3);
    const b = randn(extent(c.shape, c.bStrides, c.bOffset), 71, 3);
    const bNonZero = b.map((v) => (Math.abs(v) < 0.05 ? 0.5 : v));
    const aPositive = a.map((v) => Math.abs(v) + 0.1);
    for (const op of BINARY_OPS) {
      const aIn = op === 'pow' ? aPositive : a;
      const bIn = op === 'div' ? bNonZero : b;
      const run = (k: Kernels) => {
        const out = new Float32Array(n);
        k.binary(op, aIn, c.aOffset, c.aStrides, bIn, c.bOffset, c.bStrides, out, c.shape);
        return out;
      };
      const want = run(ref);
      const got = n > 50_000 ? sameBitsAcrossThreads(`cpu ${op} ${c.label}`, run) : run(cpu);
      if (op === 'pow') assertClose(got, want, `cpu ${op} ${c.label}`, { rtol: 1e-6, atol: 0 });
      else assertSameBits(got, want, `cpu ${op} ${c.label}`); // +,−,×,÷,max,min are exact in f32
    }
  }
});

test('binary: cpu NaN handling and bounds checks', () => {
  const a = Float32Array.of(NaN, 1, 2, -0);
  const b = Float32Array.of(0, NaN, 3, 0);
  for (const op of ['maximum', 'minimum'] as BinaryOp[]) {
    const out = new Float32Array(4);
    cpu.binary(op, a, 0, [1], b, 0, [1], out, [4]);
    assert.ok(Number.isNaN(out[0]) && Number.isNaN(out[1]), `cpu ${op} propagates NaN`);
    assert.equal(out[2], op === 'maximum' ? 3 : 2);
  }
  const out = new Float32Array(6);
  assert.throws(() => cpu.binary('add', a, 1, [3, 1], b, 0, [0, 1], out, [2, 3]), /needs at least 7/);
  assert.throws(() => cpu.binary('add', a, 0, [1], b, 0, [1, 0], out, [2]), /rank/);
});

// ---- reductions ---------------------------------------------------------------------------------

test('reduce: ref hand-computed sums, max, min over the middle dim', () => {
  // x [2, 3, 2]
  const x = Float32Array.of(1, 2, 3, 4, 5, 6, -1, -2, -3, 10, 0.5, 0.25);
  const out = new Float32Array(4);
  ref.reduce('sum', x, 2, 3, 2, out);
  assert.deepEqual(Array.from(out), [9, 12, -3.5, 8.25]);
  ref.reduce('max', x, 2, 3, 2, out);
  assert.deepEqual(Array.from(out), [5, 6, 0.5, 10]);
  ref.reduce('min', x, 2, 3, 2, out);
  assert.deepEqual(Array.from(out), [1, 2, -3, -2]);
  ref.reduce('sum', x, 1, 12, 1, out);
  assert.equal(out[0], 25.75);
  for (const k of backends) {
    // f64 accumulation: 2^24 + 1 + 1 + 1 + 1 would stay 2^24 in an f32 accumulator
    k.reduce('sum', Float32Array.of(2 ** 24, 1, 1, 1, 1), 1, 5, 1, out);
    assert.equal(out[0], 2 ** 24 + 4, `${k.name} sums in f64`);
    k.reduce('sum', Float32Array.of(2 ** 24, 1, 1, 1, 1, 1, 1, 1, 1, 1), 1, 5, 2, out);
    assert.deepEqual(Array.from(out.subarray(0, 2)), [2 ** 24 + 4, 5], `${k.name} column sums in f64`);
  }
  const empty = new Float32Array(3);
  for (const [op, want] of [
    ['sum', 0],
    ['max', -Infinity],
    ['min', Infinity],
  ] as const) {
    for (const k of backends) {
      k.reduce(op, new Float32Array(0), 3, 0, 1, empty);
      assert.deepEqual(Array.from(empty), [want, want, want], `${k.name} ${op} over an empty dim`);
    }
  }
  for (const k of backends) {
    for (const op of ['max', 'min', 'sum'] as const) {
      const o = new Float32Array(2);
      k.reduce(op, Float32Array.of(1, NaN, 3, 4, 5, 6), 2, 3, 1, o);
      assert.ok(Number.isNaN(o[0]) && !Number.isNaN(o[1]), `${k.name} ${op} propagates NaN`);
    }
  }
});

test('reduce: cpu matches ref (rows, long rows, columns, odd sizes); 1 and 2 threads agree', () => {
  const shapes: [number, number, number][] = [
    [1, 1, 1],
    [3, 7, 1],
    [1, 100_003, 1], // one long row: split into blocks across threads
    [5, 9_001, 1],
    [2_000, 33, 1], // many short rows
    [4, 17, 3],
    [3, 11, 1_100], // inner wider than a column chunk
    [1, 2_000, 70],
    [50, 3, 700],
    [7, 1, 5],
  ];
  for (const [outer, size, inner] of shapes) {
    const x = randn(outer * size * inner, outer + size + inner, 2);
    for (let i = 0; i < x.length; i++) x[i] = x[i]! + 0.3; // a nonzero mean keeps relative errors meaningful
    for (const op of ['sum', 'max', 'min'] as const) {
      const want = new Float32Array(outer * inner);
      ref.reduce(op, x, outer, size, inner, want);
      const got = sameBitsAcrossThreads(`cpu ${op} [${outer},${size},${inner}]`, (k) => {
        const out = new Float32Array(outer * inner);
        k.reduce(op, x, outer, size, inner, out);
        return out;
      });
      if (op === 'sum') assertClose(got, want, `cpu sum [${outer},${size},${inner}]`, { rtol: 1e-6, atol: 1e-6 });
      else assertSameBits(got, want, `cpu ${op} [${outer},${size},${inner}]`);
    }
  }
});

test('sumSquares: f64 accumulation; cpu matches ref; 1 and 2 threads agree', () => {
  const x = Float32Array.of(3, -4, 0.5);
  for (const k of backends) assert.equal(k.sumSquares(x, 3), 25.25, k.name);
  for (const k of backends) assert.equal(k.sumSquares(x, 0), 0, `${k.name} empty`);
  // 2^24 + 9 + 0.25: an f32 accumulator would lose the small terms
  for (const k of backends) assert.equal(k.sumSquares(Float32Array.of(4096, 3, 0.5), 3), 16777225.25, k.name);
  for (const n of [1, 17, 4095, 4097, 1_000_003]) {
    const v = randn(n, n, 5);
    const want = ref.sumSquares(v, n);
    let exact = 0;
    for (let i = 0; i < n; i++) exact += v[i]! * v[i]!;
    assert.ok(Math.abs(want - exact) <= 1e-12 * exact, `ref sumSquares n=${n}`);
    cpu.setThreads(1);
    const one = cpu.sumSquares(v, n);
    cpu.setThreads(2);
    const two = cpu.sumSquares(v, n);
    assert.equal(two, one, `cpu sumSquares n=${n}: 1 vs 2 threads`);
    assert.ok(Math.abs(two - want) <= 1e-12 * want, `cpu sumSquares n=${n}: ${two} vs ${want}`);
  }
});
