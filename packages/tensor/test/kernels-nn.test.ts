// Transformer building blocks (embedding, rmsnorm, rope, swiglu, softmax, logSoftmax, gatherRows):
// ref against hand-computed cases and float64 central finite differences, native against ref on odd
// sizes, accumulate flags, and 1 vs 2 threads giving the same bits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { backendKernels } from '../src/backend/select.js';
import type { F32, Kernels } from '../src/backend/kernels.js';
import { assertClose, randInt, randn, relativeError } from './support/data.js';

const ref = backendKernels('ref');
const cpu = backendKernels('cpu');

// ---- helpers -------------------------------------------------------------------------------------

/**
 * The ref kernels only index their arrays, so handing them Float64Arrays evaluates them in float64
 * end to end (nothing is rounded to float32): that is what makes finite differences sharp.
 */
const f64 = (a: Float64Array): F32 => a as unknown as F32;

function toF64(a: ArrayLike<number>): Float64Array {
  return Float64Array.from(a);
}

function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

function maxAbs(a: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]!));
  return m;
}

/** ∂/∂x of Σ dOut·forward(x) by central differences, every element of x, in float64. */
function numericGradient(
  x: Float64Array,
  dOut: Float64Array,
  forward: (out: Float64Array) => void,
  h = 1e-5,
): Float64Array {
  const out = new Float64Array(dOut.length);
  const grad = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) {
    const saved = x[i]!;
    x[i] = saved + h;
    forward(out);
    const plus = dot(dOut, out);
    x[i] = saved - h;
    forward(out);
    const minus = dot(dOut, out);
    x[i] = saved;
    grad[i] = (plus - minus) / (2 * h);
  }
  return grad;
}

/** Closeness relative to the whole tensor: |a − e| ≤ rtol·(|e| + max|e|) elementwise. */
function assertCloseToScale(actual: ArrayLike<number>, expected: ArrayLike<number>, label: string, rtol: number) {
  assertClose(actual, expected, label, { rtol, atol: rtol * maxAbs(expected) + 1e-30 });
}

/** assertClose that also accepts equal infinities (log-probabilities of masked entries). */
function assertCloseOrSameInfinity(
  actual: ArrayLike<number>,
  expected: ArrayLike<number>,
  label: string,
  tolerance: { rtol: number; atol: number },
): void {
  const a = Float64Array.from(actual);
  const e = Float64Array.from(expected);
  for (let i = 0; i < e.length; i++) if (a[i] === e[i] && !Number.isFinite(e[i])) a[i] = e[i] = 0;
  assertClose(a, e, label, tolerance);
}

function bits(a: Float32Array): Uint32Array {
  return new Uint32Array(a.buffer, a.byteOffset, a.length);
}

function assertSameBits(actual: Float32Array, expected: Float32Array, label: string): void {
  assert.equal(actual.length, expected.length, `${label}: length`);
  const a = bits(actual);
  const e = bits(expected);
  for (let i = 0; i < a.length; i++)
    if (a[i] !== e[i]) assert.fail(`${label}: element ${i} is ${actual[i]}, expected the bits of ${expected[i]}`);
}

/** Runs fn on the cpu backend with 1 and with 2 threads and asserts identical outputs. */
function assertThreadInvariant(label: string, fn: (k: Kernels) => Float32Array[]): void {
  const saved = cpu.threads();
  try {
    cpu.setThreads(1);
    const one = fn(cpu);
    cpu.setThreads(2);
    const two = fn(cpu);
    one.forEach((a, i) => assertSameBits(two[i]!, a, `${label} output ${i}, 2 threads vs 1`));
  } finally {
    cpu.setThreads(saved);
  }
}

/** Random floats quantised to multiples of 2^-12 (so x ± h stays exact where a test needs it). */
function randq(n: number, seed: number, scale = 1): Float32Array {
  return randn(n, seed, scale).map((v) => Math.round(v * 4096) / 4096);
}

// ---- embedding -----------------------------------------------------------------------------------

test('embedding: hand-computed rows, and backward sums repeated ids in row order', () => {
  const weight = new Float32Array([1, 2, 3, 4, 5, 6]); // vocab 3, dim 2
  const ids = new Int32Array([2, 0, 2]);
  for (const k of [ref, cpu]) {
    const out = new Float32Array(6);
    k.embedding(weight, ids, 3, 2, out);
    assert.deepEqual([...out], [5, 6, 1, 2, 5, 6], k.name);
    const dWeight = new Float32Array([0.5, 0.5, 0.5, 0.5, 0.5, 0.5]);
    k.embeddingBackward(new Float32Array([1, 2, 10, 20, 100, 200]), ids, 3, 2, dWeight);
    assert.deepEqual([...dWeight], [10.5, 20.5, 0.5, 0.5, 101.5, 202.5], k.name);
  }
});

test('embedding: ids out of range are rejected naming the id and its row, before anything is written', () => {
  const weight = randn(12, 1); // vocab 4, dim 3
  for (const k of [ref, cpu]) {
    for (const [bad, message] of [
      [4, /embedding: ids\[1\] = 4 is out of range \[0, 4\)/],
      [-1, /embedding: ids\[1\] = -1 is out of range \[0, 4\)/],
    ] as const) {
      const ids = new Int32Array([0, bad, 9]);
      const out = new Float32Array(9).fill(7);
      assert.throws(() => k.embedding(weight, ids, 3, 3, out), message, k.name);
      assert.ok(
        out.every((v) => v === 7),
        `${k.name}: output untouched`,
      );
      const dWeight = new Float32Array(12);
      assert.throws(
        () => k.embeddingBackward(randn(9, 2), ids, 3, 3, dWeight),
        new RegExp(message.source.replace('embedding', 'embeddingBackward')),
        k.name,
      );
      assert.ok(
        dWeight.every((v) => v === 0),
        `${k.name}: dWeight untouched`,
      );
    }
    // Only the first `rows` ids are read.
    assert.doesNotThrow(() => k.embedding(weight, new Int32Array([3, 99]), 1, 3, new Float32Array(3)));
  }
});

test('embedding: native matches ref bit for bit (odd dims, many repeated ids, 1 vs 2 threads)', () => {
  for (const [rows, dim, vocab] of [
    [1, 1, 1],
    [0, 5, 3],
    [3, 0, 3],
    [37, 45, 11],
    [400, 131, 23], // large enough to use both threads
  ] as const) {
    const weight = randn(vocab * dim, 3);
    const ids = randInt(rows, vocab, 4);
    const dOut = randn(rows * dim, 5);
    const dWeightStart = randn(vocab * dim, 6);
    const run = (k: Kernels) => {
      const out = new Float32Array(rows * dim);
      k.embedding(weight, ids, rows, dim, out);
      const dWeight = dWeightStart.slice();
      k.embeddingBackward(dOut, ids, rows, dim, dWeight);
      return [out, dWeight];
    };
    const expected = run(ref);
    run(cpu).forEach((a, i) => assertSameBits(a, expected[i]!, `embedding [${rows}, ${dim}] output ${i}`));
    assertThreadInvariant(`embedding [${rows}, ${dim}]`, run);
  }
});

// ---- rmsnorm -------------------------------------------------------------------------------------

test('rmsnorm: hand-computed rows (a constant row, and [3, 4])', () => {
  const eps = 1e-5;
  const w = new Float32Array([0.5, -2]);
  const x = new Float32Array([-3, -3, 3, 4, 0, 0]);
  const s0 = 1 / Math.sqrt(9 + eps);
  const s1 = 1 / Math.sqrt(12.5 + eps);
  const s2 = 1 / Math.sqrt(eps);
  for (const k of [ref, cpu]) {
    const y = new Float32Array(6);
    const rstd = new Float32Array(3);
    k.rmsnorm(x, w, 3, 2, eps, y, rstd);
    assertClose(rstd, [s0, s1, s2], `${k.name} rstd`, { rtol: 1e-6, atol: 0 });
    assertClose(y, [-3 * s0 * 0.5, -3 * s0 * -2, 3 * s1 * 0.5, 4 * s1 * -2, 0, 0], `${k.name} y`, {
      rtol: 1e-6,
      atol: 0,
    });
  }
});

test('rmsnormBackward (ref): matches float64 finite differences; dx accumulate flag; dw accumulates', () => {
  const rows = 3;
  const dim = 5;
  const eps = 1e-3;
  const x = toF64(randn(rows * dim, 10, 2));
  const w = toF64(randn(dim, 11));
  const dy = toF64(randn(rows * dim, 12));
  const rstd = new Float64Array(rows);
  const forward = (y: Float64Array) => ref.rmsnorm(f64(x), f64(w), rows, dim, eps, f64(y), f64(rstd));
  const gradX = numericGradient(x, dy, forward);
  const gradW = numericGradient(w, dy, forward);
  forward(new Float64Array(rows * dim)); // rstd for the unperturbed x

  const dxStart = toF64(randn(rows * dim, 13));
  const dwStart = toF64(randn(dim, 14));
  const dx = dxStart.slice();
  const dw = dwStart.slice();
  ref.rmsnormBackward(f64(dy), f64(x), f64(w), f64(rstd), rows, dim, f64(dx), f64(dw), false);
  assertClose(dx, gradX, 'dx', { rtol: 1e-6, atol: 1e-8 });
  assertClose(
    dw.map((v, j) => v - dwStart[j]!),
    gradW,
    'dw (accumulated)',
    { rtol: 1e-6, atol: 1e-8 },
  );
  const dxAcc = dxStart.slice();
  ref.rmsnormBackward(f64(dy), f64(x), f64(w), f64(rstd), rows, dim, f64(dxAcc), f64(dw), true);
  assertClose(
    dxAcc,
    dxStart.map((v, i) => v + gradX[i]!),
    'dx (accumulated)',
    { rtol: 1e-6, atol: 1e-8 },
  );
});

test('rmsnorm + backward: native matches ref (odd dims, one row, accumulate, 1 vs 2 threads)', () => {
  for (const [rows, dim] of [
    [1, 1],
    [1, 17],
    [7, 5],
    [5, 64],
    [300, 511], // several row blocks and both threads
  ] as const) {
    const x = randn(rows * dim, 20, 3);
    const w = randn(dim, 21);
    const dy = randn(rows * dim, 22);
    const dxStart = randn(rows * dim, 23);
    const dwStart = randn(dim, 24);
    const run = (k: Kernels) => {
      const y = new Float32Array(rows * dim);
      const rstd = new Float32Array(rows);
      k.rmsnorm(x, w, rows, dim, 1e-5, y, rstd);
      const dx = new Float32Array(rows * dim).fill(NaN); // written, never read
      const dw = dwStart.slice();
      k.rmsnormBackward(dy, x, w, rstd, rows, dim, dx, dw, false);
      const dxAcc = dxStart.slice();
      k.rmsnormBackward(dy, x, w, rstd, rows, dim, dxAcc, dw, true);
      return [y, rstd, dx, dw, dxAcc];
    };
    const expected = run(ref);
    const actual = run(cpu);
    const label = `rmsnorm [${rows}, ${dim}]`;
    assertClose(actual[0]!, expected[0]!, `${label} y`, { rtol: 1e-6, atol: 1e-7 });
    assertClose(actual[1]!, expected[1]!, `${label} rstd`, { rtol: 1e-6, atol: 0 });
    // dx = s·w·dy − (s³/D)·x·Σ dy·w·x cancels (completely for dim 1): compare to the size of its terms.
    const termScale = maxAbs(dy) * maxAbs(w) * maxAbs(expected[1]!);
    assertClose(actual[2]!, expected[2]!, `${label} dx`, { rtol: 1e-6, atol: 1e-6 * termScale });
    assertCloseToScale(actual[3]!, expected[3]!, `${label} dw`, 1e-5);
    assertClose(actual[4]!, expected[4]!, `${label} dx accumulated`, { rtol: 1e-6, atol: 1e-6 * termScale });
    assertThreadInvariant(label, run);
  }
  for (const k of [ref, cpu]) {
    const dw = new Float32Array([1, 2]);
    k.rmsnormBackward(new Float32Array(0), new Float32Array(0), new Float32Array(2), new Float32Array(0), 0, 2,
      new Float32Array(0), dw, false); // prettier-ignore
    assert.deepEqual([...dw], [1, 2], `${k.name}: zero rows leave dw alone`);
  }
});

// ---- rope ----------------------------------------------------------------------------------------

/** Float64 rope by the definition (no float32 rounding except the inputs). */
function ropeF64(x: ArrayLike<number>, positions: Int32Array, heads: number, dim: number, theta: number, sign = 1) {
  const out = new Float64Array(x.length);
  const half = dim / 2;
  for (let t = 0; t < positions.length; t++)
    for (let h = 0; h < heads; h++)
      for (let i = 0; i < half; i++) {
        const angle = sign * positions[t]! * Math.pow(theta, (-2 * i) / dim);
        const base = (t * heads + h) * dim;
        out[base + i] = x[base + i]! * Math.cos(angle) - x[base + half + i]! * Math.sin(angle);
        out[base + half + i] = x[base + half + i]! * Math.cos(angle) + x[base + i]! * Math.sin(angle);
      }
  return out;
}

test('rope: position 0 is the identity; rope then inverse rope is the identity; hand-computed angles', () => {
  const heads = 2;
  const dim = 6;
  const x = randn(3 * heads * dim, 30, 2);
  const positions = new Int32Array([0, 5, 123]);
  for (const k of [ref, cpu]) {
    const out = new Float32Array(x.length);
    k.rope(x, new Int32Array(3), 3, heads, dim, 10000, false, out);
    assertSameBits(out, x, `${k.name}: position 0`);

    k.rope(x, positions, 3, heads, dim, 10000, false, out);
    assertClose(out, ropeF64(x, positions, heads, dim, 10000), `${k.name}: against the definition`, {
      rtol: 1e-5,
      atol: 5e-5, // the float32 angle is off by up to ~pos·2^-24 radians
    });
    const back = new Float32Array(x.length);
    k.rope(out, positions, 3, heads, dim, 10000, true, back);
    assertClose(back, x, `${k.name}: inverse(rope(x))`, { rtol: 0, atol: 2e-6 });

    // dim = 2, theta irrelevant: a plain rotation by `pos` radians.
    const pair = new Float32Array(2);
    k.rope(new Float32Array([1, 0]), new Int32Array([1]), 1, 1, 2, 7, false, pair);
    assertClose(pair, [Math.cos(1), Math.sin(1)], `${k.name}: dim 2`, { rtol: 1e-7, atol: 1e-7 });
    k.rope(new Float32Array([1, 0]), new Int32Array([1]), 1, 1, 2, 7, true, pair);
    assertClose(pair, [Math.cos(1), -Math.sin(1)], `${k.name}: dim 2 inverse`, { rtol: 1e-7, atol: 1e-7 });

    assert.throws(
      () => k.rope(new Float32Array(3), new Int32Array(1), 1, 1, 3, 10, false, new Float32Array(3)),
      /even/,
    );
  }
});

test('rope (ref): the inverse rotation is the exact adjoint (the backward pass), by finite differences', () => {
  const tokens = 4;
  const heads = 2;
  const dim = 8;
  const x = toF64(randq(tokens * heads * dim, 31));
  const dOut = toF64(randn(tokens * heads * dim, 32));
  const positions = new Int32Array([3, 0, 17, 1000]);
  // rope is linear in x, so a large step is exact up to float32 rounding of the outputs.
  const gradX = numericGradient(
    x,
    dOut,
    (out) => ref.rope(f64(x), positions, tokens, heads, dim, 500, false, f64(out)),
    0.5,
  );
  const dx = new Float32Array(x.length);
  ref.rope(Float32Array.from(dOut), positions, tokens, heads, dim, 500, true, dx);
  assertClose(dx, gradX, 'dx', { rtol: 1e-5, atol: 5e-6 });
});

test('rope: native matches ref (dim 2, odd half-dims, positions cached, negative and huge, aliasing)', () => {
  const cases: [number, number, number, number, Int32Array][] = [
    [1, 1, 2, 10000, new Int32Array([7])],
    [5, 3, 6, 10000, new Int32Array([0, 1, 2, 3, 4])],
    [7, 3, 34, 500, randInt(7, 4096, 33)],
    [6, 2, 64, 10000, new Int32Array([-3, 5, 1 << 20, 9, 0, 2_000_000_000])], // outside the cache
    [9, 2, 130, 1e6, randInt(9, 100, 34)],
    [200, 4, 64, 10000, randInt(200, 512, 35)], // both threads
  ];
  for (const [tokens, heads, dim, theta, positions] of cases) {
    const x = randn(tokens * heads * dim, 36, 3);
    for (const inverse of [false, true]) {
      const run = (k: Kernels) => {
        const out = new Float32Array(x.length);
        k.rope(x, positions, tokens, heads, dim, theta, inverse, out);
        const inPlace = x.slice();
        k.rope(inPlace, positions, tokens, heads, dim, theta, inverse, inPlace);
        return [out, inPlace];
      };
      const label = `rope [${tokens}, ${heads}, ${dim}] theta ${theta}${inverse ? ' inverse' : ''}`;
      const [expected, expectedInPlace] = run(ref);
      assertSameBits(expectedInPlace!, expected!, `${label}: ref in place`);
      // Same float32 steps as ref; cos/sin come from float64 libm (V8's and glibc's), so allow an ulp.
      for (const out of run(cpu)) assertClose(out, expected!, label, { rtol: 2.4e-7, atol: 1e-30 });
      assertThreadInvariant(label, run);
    }
  }
});

// ---- swiglu --------------------------------------------------------------------------------------

test('swiglu: hand-computed values, extremes without NaN', () => {
  const g = new Float32Array([0, 1, -1, 100, -100, -1000]);
  const u = new Float32Array([5, 2, 3, 0.5, 7, 1]);
  const silu = (v: number) => v / (1 + Math.exp(-v));
  for (const k of [ref, cpu]) {
    const out = new Float32Array(6);
    k.swiglu(g, u, out, 6);
    assertClose(out, [0, 2 * silu(1), 3 * silu(-1), 50, 7 * silu(-100), 0], k.name, { rtol: 1e-6, atol: 1e-30 });
    const dg = new Float32Array(6);
    const du = new Float32Array(6);
    k.swigluBackward(g, u, new Float32Array(6).fill(1), dg, du, 6, false);
    assert.ok(dg.every(Number.isFinite) && du.every(Number.isFinite), `${k.name}: finite gradients`);
    assertClose([dg[0]!, du[0]!, dg[3]!, du[3]!], [5 * 0.5, 0, 0.5, 100], k.name, { rtol: 1e-6, atol: 0 });
  }
});

test('swigluBackward (ref): matches float64 finite differences; accumulate flag', () => {
  const n = 9;
  const g = toF64(randn(n, 40, 4));
  g[0] = -1.2784645; // near the minimum of silu, where d silu/dg = 0
  const u = toF64(randn(n, 41, 2));
  const dOut = toF64(randn(n, 42));
  const gradG = numericGradient(g, dOut, (out) => ref.swiglu(f64(g), f64(u), f64(out), n));
  const gradU = numericGradient(u, dOut, (out) => ref.swiglu(f64(g), f64(u), f64(out), n));
  const dgStart = toF64(randn(n, 43));
  const duStart = toF64(randn(n, 44));
  for (const accumulate of [false, true]) {
    const dg = dgStart.slice();
    const du = duStart.slice();
    ref.swigluBackward(f64(g), f64(u), f64(dOut), f64(dg), f64(du), n, accumulate);
    const base = (start: Float64Array, i: number) => (accumulate ? start[i]! : 0);
    assertClose(dg, gradG.map((v, i) => v + base(dgStart, i)), `dg accumulate=${accumulate}`, { rtol: 1e-7, atol: 1e-9 }); // prettier-ignore
    assertClose(du, gradU.map((v, i) => v + base(duStart, i)), `du accumulate=${accumulate}`, { rtol: 1e-7, atol: 1e-9 }); // prettier-ignore
  }
});

test('swiglu + backward: native matches ref within 1e-6 (odd sizes, extremes, 1 vs 2 threads)', () => {
  for (const n of [1, 15, 17, 1000, 40_001]) {
    const g = randn(n, 50, 12);
    g.set([88.7, -88.7, 104, -104, 0, -0].slice(0, n)); // exp overflow / underflow edges
    const u = randn(n, 51, 2);
    const dOut = randn(n, 52);
    const dgStart = randn(n, 53);
    const duStart = randn(n, 54);
    const run = (k: Kernels) => {
      const out = new Float32Array(n);
      k.swiglu(g, u, out, n);
      const dg = new Float32Array(n).fill(NaN);
      const du = new Float32Array(n).fill(NaN);
      k.swigluBackward(g, u, dOut, dg, du, n, false);
      const dgAcc = dgStart.slice();
      const duAcc = duStart.slice();
      k.swigluBackward(g, u, dOut, dgAcc, duAcc, n, true);
      return [out, dg, du, dgAcc, duAcc];
    };
    const expected = run(ref);
    const names = ['out', 'dg', 'du', 'dg accumulated', 'du accumulated'];
    run(cpu).forEach((a, i) => assertCloseToScale(a, expected[i]!, `swiglu n=${n} ${names[i]}`, 1e-6));
    assertThreadInvariant(`swiglu n=${n}`, run);
  }
});

// ---- softmax / logSoftmax ------------------------------------------------------------------------

test('softmax / logSoftmax: hand-computed rows, −Inf entries, huge values; an all −Inf row is NaN', () => {
  const inf = Infinity;
  const x = new Float32Array([1, 2, 3, 0, -inf, 0, 1000, 1000, 0, -1000, -inf, -inf, 5, 5, 5]);
  const e = [Math.exp(-2), Math.exp(-1), 1];
  const z = e[0]! + e[1]! + e[2]!;
  const expectedSoftmax = [e[0]! / z, e[1]! / z, 1 / z, 0.5, 0, 0.5, 0.5, 0.5, 0, 1, 0, NaN, 1 / 3, 1 / 3, 1 / 3];
  const ln2 = Math.log(2);
  const ln3 = Math.log(3);
  const expectedLog = [
    ...e.map((v) => Math.log(v / z)),
    -ln2,
    -inf,
    -ln2,
    -ln2,
    -ln2,
    -1000 - ln2,
    0,
    -inf,
    NaN,
  ].concat([-ln3, -ln3, -ln3]);
  for (const k of [ref, cpu]) {
    const row = (rows: number, n: number, from: number) => x.subarray(from, from + rows * n);
    const out = new Float32Array(15);
    k.softmax(row(1, 3, 0), 1, 3, out.subarray(0, 3));
    k.softmax(row(2, 3, 3), 2, 3, out.subarray(3, 9));
    k.softmax(row(1, 2, 9), 1, 2, out.subarray(9, 11));
    k.softmax(row(1, 1, 11), 1, 1, out.subarray(11, 12)); // all −Inf
    k.softmax(row(1, 3, 12), 1, 3, out.subarray(12, 15));
    assertClose(out.slice(0, 10), expectedSoftmax.slice(0, 10), `${k.name} softmax`, { rtol: 1e-6, atol: 0 });
    assert.ok(Number.isNaN(out[11]!), `${k.name}: an all −Inf row gives NaN`);
    assertClose(out.slice(12), expectedSoftmax.slice(12), `${k.name} softmax constant row`, { rtol: 1e-6, atol: 0 });

    const logOut = new Float32Array(15);
    k.logSoftmax(row(1, 3, 0), 1, 3, logOut.subarray(0, 3));
    k.logSoftmax(row(2, 3, 3), 2, 3, logOut.subarray(3, 9));
    k.logSoftmax(row(1, 2, 9), 1, 2, logOut.subarray(9, 11));
    k.logSoftmax(row(1, 1, 11), 1, 1, logOut.subarray(11, 12));
    k.logSoftmax(row(1, 3, 12), 1, 3, logOut.subarray(12, 15));
    assertCloseOrSameInfinity(logOut.slice(0, 11), expectedLog.slice(0, 11), `${k.name} logSoftmax`, {
      rtol: 1e-6,
      atol: 0,
    });
    assert.ok(Number.isNaN(logOut[11]!), `${k.name}: an all −Inf row gives NaN`);
    assertClose(logOut.slice(12), expectedLog.slice(12), `${k.name} logSoftmax constant row`, { rtol: 1e-6, atol: 0 });
  }
});

test('softmaxBackward / logSoftmaxBackward (ref): match float64 finite differences; accumulate flag', () => {
  const rows = 3;
  const n = 5;
  const x = toF64(randn(rows * n, 60, 3));
  const dOut = toF64(randn(rows * n, 61));
  const dxStart = toF64(randn(rows * n, 62));
  for (const kind of ['softmax', 'logSoftmax'] as const) {
    const forward = (out: Float64Array) => ref[kind](f64(x), rows, n, f64(out));
    const gradX = numericGradient(x, dOut, forward);
    const y = new Float64Array(rows * n);
    forward(y);
    const backward = kind === 'softmax' ? ref.softmaxBackward : ref.logSoftmaxBackward;
    for (const accumulate of [false, true]) {
      const dx = dxStart.slice();
      backward(f64(y), f64(dOut), rows, n, f64(dx), accumulate);
      const expected = gradX.map((v, i) => v + (accumulate ? dxStart[i]! : 0));
      assertClose(dx, expected, `${kind} accumulate=${accumulate}`, { rtol: 1e-7, atol: 1e-9 });
    }
  }
});

test('softmax family: native matches ref within 1e-6 (odd widths, one row, in place, 1 vs 2 threads)', () => {
  for (const [rows, n] of [
    [1, 1],
    [3, 7],
    [1, 17],
    [5, 100],
    [2, 1000],
    [70, 1001], // both threads
  ] as const) {
    // |x − max| up to 60: rounding x − max to float32 alone would cost up to 60·2^-24 ≈ 3.6e-6 in exp.
    const x = randn(rows * n, 70, 30);
    x[0] = -Infinity; // a masked entry
    if (x.length > 2) x[2] = -95; // exp underflows to a subnormal
    const dy = randn(rows * n, 71);
    const dxStart = randn(rows * n, 72);
    const run = (k: Kernels) => {
      const y = new Float32Array(rows * n);
      k.softmax(x, rows, n, y);
      const logY = x.slice();
      k.logSoftmax(logY, rows, n, logY); // in place
      const outs = [y, logY];
      for (const accumulate of [false, true]) {
        const dx = accumulate ? dxStart.slice() : new Float32Array(rows * n).fill(NaN);
        k.softmaxBackward(y, dy, rows, n, dx, accumulate);
        const dxLog = accumulate ? dxStart.slice() : new Float32Array(rows * n).fill(NaN);
        k.logSoftmaxBackward(logY, dy, rows, n, dxLog, accumulate);
        outs.push(dx, dxLog);
      }
      return outs;
    };
    const label = `softmax [${rows}, ${n}]`;
    const expected = run(ref);
    const actual = run(cpu);
    if (n === 1) {
      assert.ok(Number.isNaN(actual[0]![0]!) && Number.isNaN(expected[0]![0]!), `${label}: all −Inf row`);
      continue;
    }
    // Forward outputs have no cancellation: 1e-6 relative per element.
    assertClose(actual[0]!, expected[0]!, `${label} softmax`, { rtol: 1e-6, atol: 1e-44 });
    assertCloseOrSameInfinity(actual[1]!, expected[1]!, `${label} logSoftmax`, { rtol: 1e-6, atol: 0 });
    const names = ['softmaxBackward', 'logSoftmaxBackward', 'softmaxBackward acc', 'logSoftmaxBackward acc'];
    for (let i = 2; i < 6; i++) assertCloseToScale(actual[i]!, expected[i]!, `${label} ${names[i - 2]}`, 1e-6);
    assert.ok(relativeError(actual[0]!, expected[0]!) <= 1e-6, `${label}: softmax relative error`);
    assertThreadInvariant(label, run);
  }
});

// ---- gatherRows ----------------------------------------------------------------------------------

test('gatherRows + backward: hand-computed, accumulates, validates idx; native matches ref', () => {
  const x = new Float32Array([1, 2, 3, 4, 5, 6]); // [2, 3]
  for (const k of [ref, cpu]) {
    const out = new Float32Array(2);
    k.gatherRows(x, new Int32Array([2, 0]), 2, 3, out);
    assert.deepEqual([...out], [3, 4], k.name);
    const dx = new Float32Array(6).fill(1);
    k.gatherRowsBackward(new Float32Array([10, 20]), new Int32Array([2, 0]), 2, 3, dx);
    assert.deepEqual([...dx], [1, 1, 11, 21, 1, 1], k.name);
    for (const bad of [3, -1]) {
      const untouched = new Float32Array(6).fill(1);
      assert.throws(
        () => k.gatherRows(x, new Int32Array([0, bad]), 2, 3, new Float32Array(2)),
        new RegExp(`gatherRows: idx\\[1\\] = ${bad} is out of range \\[0, 3\\)`),
        k.name,
      );
      assert.throws(
        () => k.gatherRowsBackward(new Float32Array(2), new Int32Array([0, bad]), 2, 3, untouched),
        new RegExp(`gatherRowsBackward: idx\\[1\\] = ${bad} is out of range \\[0, 3\\)`),
        k.name,
      );
      assert.ok(
        untouched.every((v) => v === 1),
        `${k.name}: dx untouched`,
      );
    }
  }
  const rows = 33;
  const n = 19;
  const big = randn(rows * n, 80);
  const idx = randInt(rows, n, 81);
  const dOut = randn(rows, 82);
  const run = (k: Kernels) => {
    const out = new Float32Array(rows);
    k.gatherRows(big, idx, rows, n, out);
    const dx = randn(rows * n, 83);
    k.gatherRowsBackward(dOut, idx, rows, n, dx);
    return [out, dx];
  };
  const expected = run(ref);
  run(cpu).forEach((a, i) => assertSameBits(a, expected[i]!, `gatherRows output ${i}`));
});

test('zero sizes are no-ops on both backends', () => {
  const empty = new Float32Array(0);
  const none = new Int32Array(0);
  for (const k of [ref, cpu]) {
    const untouched = new Float32Array([3]);
    k.embedding(untouched, none, 0, 1, empty);
    k.embeddingBackward(empty, none, 0, 1, untouched);
    k.rmsnorm(empty, untouched, 0, 1, 1e-5, empty, empty);
    k.rope(empty, none, 0, 4, 8, 10000, false, empty);
    k.rope(empty, new Int32Array([5]), 1, 0, 8, 10000, true, empty);
    k.swiglu(empty, empty, empty, 0);
    k.swigluBackward(empty, empty, empty, empty, empty, 0, true);
    for (const [rows, n] of [
      [0, 4],
      [2, 0],
    ] as const) {
      k.softmax(empty, rows, n, empty);
      k.logSoftmax(empty, rows, n, empty);
      k.softmaxBackward(empty, empty, rows, n, empty, false);
      k.logSoftmaxBackward(empty, empty, rows, n, empty, true);
    }
    k.gatherRows(empty, none, 0, 3, empty);
    k.gatherRowsBackward(empty, none, 0, 3, empty);
    assert.deepEqual([...untouched], [3], k.name);
  }
});
