// Data-movement kernels: fill, stridedCopy, bf16 conversions, i32ToF32. The ref backend is checked
// against hand-computed values (bf16 rounding against a float64 model of round-to-nearest-even),
// the cpu backend against ref, and 1 vs 2 threads for identical bits.
import test from 'node:test';
import assert from 'node:assert/strict';
import { backendKernels } from '../src/backend/select.js';
import { randn } from './support/data.js';

const ref = backendKernels('ref');
const cpu = backendKernels('cpu');
const backends = [ref, cpu];

function f32Bits(values: readonly number[]): Float32Array {
  const out = new Float32Array(values.length);
  new Uint32Array(out.buffer).set(values.map((v) => v >>> 0));
  return out;
}

function assertSameBits(actual: Float32Array | Uint16Array, expected: Float32Array | Uint16Array, label: string) {
  assert.equal(actual.length, expected.length, `${label}: length`);
  const a = actual instanceof Float32Array ? new Uint32Array(actual.buffer, actual.byteOffset, actual.length) : actual;
  const e =
    expected instanceof Float32Array
      ? new Uint32Array(expected.buffer, expected.byteOffset, expected.length)
      : expected;
  for (let i = 0; i < a.length; i++)
    if (a[i] !== e[i])
      assert.fail(`${label}: element ${i} has bits 0x${a[i]!.toString(16)}, expected 0x${e[i]!.toString(16)}`);
}

/** Random 32-bit patterns (every exponent, NaN payloads included). */
function randomBits(n: number, seed: number): Uint32Array {
  const out = new Uint32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = (s ^ (s >>> 13) ^ Math.imul(s >>> 7, 0x9e3779b9)) >>> 0;
  }
  return out;
}

/**
 * bf16 rounding modelled in float64: the value is rounded to a multiple of its bf16 ulp
 * (2^(e−7) for normal numbers, 2^−133 for subnormals) with ties to even; ≥ 2^128 overflows to inf.
 */
function bf16Model(v: number): number {
  if (v === 0 || !Number.isFinite(v)) return v;
  const exponent = Math.max(Math.floor(Math.log2(Math.abs(v))), -126);
  const ulp = 2 ** (exponent - 7);
  const q = v / ulp;
  let r = Math.round(q);
  if (Math.abs(q - Math.trunc(q)) === 0.5) r = 2 * Math.round(q / 2); // exact tie: even multiple
  const rounded = r * ulp;
  return Math.abs(rounded) >= 2 ** 128 ? Math.sign(v) * Infinity : rounded;
}

function bf16BitsOfValue(v: number): number {
  return new Uint32Array(new Float32Array([v]).buffer)[0]! >>> 16;
}

function prod(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/** Row-major contiguous strides of a shape. */
function contiguous(shape: readonly number[]): number[] {
  const strides = new Array<number>(shape.length).fill(1);
  for (let d = shape.length - 2; d >= 0; d--) strides[d] = strides[d + 1]! * shape[d + 1]!;
  return strides;
}

test('fill writes n elements and leaves the rest', () => {
  for (const k of backends) {
    for (const n of [0, 1, 15, 17, 100003]) {
      const dst = new Float32Array(n + 3).fill(7);
      k.fill(dst, n, 0.1);
      for (let i = 0; i < n; i++) assert.equal(dst[i], Math.fround(0.1), `${k.name} fill n=${n} at ${i}`);
      for (let i = n; i < n + 3; i++) assert.equal(dst[i], 7, `${k.name} fill n=${n} past the end`);
    }
  }
});

test('stridedCopy: hand-computed views', () => {
  const src = Float32Array.from({ length: 24 }, (_, i) => i);
  const cases: { shape: number[]; strides: number[]; offset: number; want: number[] }[] = [
    // transpose of a 2×3 matrix stored at offset 1
    { shape: [3, 2], strides: [1, 3], offset: 1, want: [1, 4, 2, 5, 3, 6] },
    // row broadcast (stride 0) of 3 elements
    { shape: [2, 3], strides: [0, 1], offset: 5, want: [5, 6, 7, 5, 6, 7] },
    // column broadcast, inner stride 0
    { shape: [2, 3], strides: [4, 0], offset: 0, want: [0, 0, 0, 4, 4, 4] },
    // every other element of every other row of a 4×6 block
    { shape: [2, 3], strides: [12, 2], offset: 1, want: [1, 3, 5, 13, 15, 17] },
    // rank 0: one element
    { shape: [], strides: [], offset: 9, want: [9] },
    // size-1 dims with arbitrary strides
    { shape: [1, 3, 1], strides: [100, 5, 100], offset: 2, want: [2, 7, 12] },
    // zero-size dim: nothing
    { shape: [3, 0, 2], strides: [1, 1, 1], offset: 0, want: [] },
  ];
  for (const k of backends) {
    for (const c of cases) {
      const dst = new Float32Array(c.want.length + 1).fill(-1);
      k.stridedCopy(src, c.offset, c.shape, c.strides, dst);
      assert.deepEqual(Array.from(dst), [...c.want, -1], `${k.name} shape ${JSON.stringify(c.shape)}`);
    }
  }
});

test('stridedCopy: rank 8 permutation matches an index-by-index gather', () => {
  const shape = [2, 1, 3, 2, 1, 2, 3, 2];
  const src = randn(prod(shape), 11);
  const base = contiguous(shape);
  const perm = [7, 2, 0, 5, 1, 3, 6, 4];
  const vShape = perm.map((p) => shape[p]!);
  const vStrides = perm.map((p) => base[p]!);
  const want = new Float32Array(prod(vShape));
  // independent gather: decompose each flat output index
  for (let flat = 0; flat < want.length; flat++) {
    let rem = flat;
    let at = 0;
    for (let d = vShape.length - 1; d >= 0; d--) {
      at += (rem % vShape[d]!) * vStrides[d]!;
      rem = Math.floor(rem / vShape[d]!);
    }
    want[flat] = src[at]!;
  }
  for (const k of backends) {
    const dst = new Float32Array(want.length);
    k.stridedCopy(src, 0, vShape, vStrides, dst);
    assertSameBits(dst, want, `${k.name} rank-8 permutation`);
  }
});

test('stridedCopy: cpu matches ref on permutations, slices and broadcasts; 1 and 2 threads agree', () => {
  const src = randn(200_000, 3);
  const cases: { shape: number[]; strides: number[]; offset: number }[] = [
    { shape: [37, 41], strides: [41, 1], offset: 5 }, // contiguous, merged to one row
    { shape: [41, 37], strides: [1, 41], offset: 0 }, // transpose (inner stride ≠ 1)
    { shape: [4, 33, 5, 17], strides: [33 * 5 * 17, 17, 33 * 17, 1], offset: 3 }, // [B,T,H,D] → [B,H,T,D]
    { shape: [3, 50, 7], strides: [0, 7, 1], offset: 11 }, // leading broadcast
    { shape: [20, 9, 13], strides: [200, 0, 3], offset: 7 }, // middle broadcast, strided inner
    { shape: [300, 500], strides: [500, 1], offset: 1 }, // large, contiguous (threads)
    { shape: [500, 300], strides: [1, 500], offset: 0 }, // large transpose (threads, tiled)
    { shape: [3, 4, 37, 41], strides: [4 * 41 * 37, 41 * 37, 1, 37], offset: 5 }, // batched transpose
    { shape: [2, 3, 40, 50], strides: [0, 2000, 1, 40], offset: 0 }, // transpose under a broadcast dim
    { shape: [37, 41], strides: [1, 100], offset: 3 }, // transpose of a slice of a wider matrix
    { shape: [7, 1, 9000], strides: [9001, 5, 1], offset: 2 }, // rows longer than a thread's share
    { shape: [1], strides: [0], offset: 199_999 },
  ];
  for (const c of cases) {
    const n = prod(c.shape);
    const want = new Float32Array(n);
    ref.stridedCopy(src, c.offset, c.shape, c.strides, want);
    for (const threads of [1, 2]) {
      cpu.setThreads(threads);
      const got = new Float32Array(n);
      cpu.stridedCopy(src, c.offset, c.shape, c.strides, got);
      assertSameBits(got, want, `cpu stridedCopy ${JSON.stringify(c.shape)} threads=${threads}`);
    }
  }
  cpu.setThreads(2);
});

test('stridedCopy: cpu rejects views that reach outside the source', () => {
  const src = new Float32Array(10);
  assert.throws(() => cpu.stridedCopy(src, 0, [3, 4], [4, 1], new Float32Array(12)), /needs at least 12/);
  assert.throws(() => cpu.stridedCopy(src, 0, [2], [1, 1], new Float32Array(2)), /rank/);
  assert.throws(() => cpu.stridedCopy(src, 0, [1, 1, 1, 1, 1, 1, 1, 1, 1], new Array(9).fill(0), new Float32Array(1)));
});

test('f32ToBf16: rounding cases against hand-computed bits', () => {
  const cases: [number, number, string][] = [
    [0x3f800000, 0x3f80, '1'],
    [0x3f808000, 0x3f80, '1 + 2^-8: tie, rounds down to even'],
    [0x3f818000, 0x3f82, '1 + 3·2^-8: tie, rounds up to even'],
    [0x3f808001, 0x3f81, 'just above the tie rounds up'],
    [0x3f807fff, 0x3f80, 'just below the tie rounds down'],
    [0xbf818000, 0xbf82, 'negative tie to even'],
    [0x7f7fffff, 0x7f80, 'largest float overflows to +inf'],
    [0xff7fffff, 0xff80, 'most negative float overflows to -inf'],
    [0x7f7f7fff, 0x7f7f, 'largest float below the overflow tie stays finite'],
    [0x7f7f8000, 0x7f80, 'tie at the top of the range rounds to even = inf'],
    [0x7f800000, 0x7f80, '+inf'],
    [0xff800000, 0xff80, '-inf'],
    [0x00000000, 0x0000, '+0'],
    [0x80000000, 0x8000, '-0'],
    [0x00000001, 0x0000, 'smallest subnormal rounds to 0'],
    [0x00008000, 0x0000, 'subnormal tie rounds to even 0'],
    [0x00018000, 0x0002, 'subnormal tie rounds up to even'],
    [0x00008001, 0x0001, 'subnormal above the tie'],
    [0x007fffff, 0x0080, 'largest subnormal rounds up to the smallest normal'],
    [0x80018000, 0x8002, 'negative subnormal tie'],
    [0x7fc00000, 0x7fc0, 'quiet NaN'],
    [0xffc00000, 0xffc0, 'negative quiet NaN'],
    [0x7f800001, 0x7fc0, 'signalling NaN with a low payload becomes quiet'],
    [0x7fbfffff, 0x7fff, 'NaN that would round into the exponent field stays NaN'],
    [0xff810000, 0xffc1, 'signalling NaN keeps sign and top payload, quiet bit set'],
  ];
  const src = f32Bits(cases.map((c) => c[0]));
  for (const k of backends) {
    const dst = new Uint16Array(cases.length);
    k.f32ToBf16(src, dst, cases.length);
    cases.forEach(([input, want, what], i) =>
      assert.equal(dst[i], want, `${k.name}: 0x${input.toString(16)} (${what}) → 0x${dst[i]!.toString(16)}`),
    );
  }
});

test('f32ToBf16: ref matches a float64 model of round-to-nearest-even on random bit patterns', () => {
  const bits = randomBits(20_000, 5);
  const src = new Float32Array(bits.buffer);
  const dst = new Uint16Array(bits.length);
  ref.f32ToBf16(src, dst, bits.length);
  let checked = 0;
  for (let i = 0; i < bits.length; i++) {
    const v = src[i]!;
    if (Number.isNaN(v)) {
      assert.equal(dst[i]! & 0x7fc0, 0x7fc0, `NaN 0x${bits[i]!.toString(16)} must map to a quiet NaN`);
      continue;
    }
    assert.equal(dst[i], bf16BitsOfValue(bf16Model(v)), `0x${bits[i]!.toString(16)} (${v})`);
    checked++;
  }
  assert.ok(checked > 19_000);
});

test('bf16ToF32 widens exactly; round trips through the float64 model', () => {
  const half = Uint16Array.from([0x3f80, 0xbf82, 0x7f80, 0xff80, 0x0001, 0x8000, 0x7fc0, 0x4049]);
  const want = [1, -(1 + 2 ** -6), Infinity, -Infinity, 2 ** -133, -0, NaN, 3.140625];
  for (const k of backends) {
    const out = new Float32Array(half.length);
    k.bf16ToF32(half, out, half.length);
    want.forEach((w, i) => assert.ok(Object.is(out[i], w), `${k.name}: 0x${half[i]!.toString(16)} → ${out[i]}`));
  }
  const values = randn(5000, 9, 1e3);
  const b = new Uint16Array(values.length);
  const back = new Float32Array(values.length);
  ref.f32ToBf16(values, b, values.length);
  ref.bf16ToF32(b, back, values.length);
  for (let i = 0; i < values.length; i++) assert.equal(back[i], bf16Model(values[i]!), `round trip of ${values[i]}`);
});

test('bf16 conversions: cpu matches ref bit for bit at odd sizes; 1 and 2 threads agree', () => {
  for (const n of [0, 1, 15, 16, 17, 33, 1001, 200_003]) {
    const bits = randomBits(n, 100 + n);
    const src = new Float32Array(bits.buffer);
    const wantHalf = new Uint16Array(n);
    ref.f32ToBf16(src, wantHalf, n);
    const wantWide = new Float32Array(n);
    ref.bf16ToF32(wantHalf, wantWide, n);
    for (const threads of [1, 2]) {
      cpu.setThreads(threads);
      const half = new Uint16Array(n + 1).fill(0xabcd);
      cpu.f32ToBf16(src, half, n);
      assertSameBits(half.subarray(0, n), wantHalf, `cpu f32ToBf16 n=${n} threads=${threads}`);
      assert.equal(half[n], 0xabcd, 'f32ToBf16 writes past n');
      const wide = new Float32Array(n);
      cpu.bf16ToF32(wantHalf, wide, n);
      assertSameBits(wide, wantWide, `cpu bf16ToF32 n=${n} threads=${threads}`);
    }
  }
  cpu.setThreads(2);
});

test('i32ToF32 rounds to nearest even', () => {
  const src = Int32Array.from([0, -1, 7, 2 ** 24, 2 ** 24 + 1, 2 ** 24 + 3, -(2 ** 24 + 3), 2 ** 31 - 1, -(2 ** 31)]);
  const want = [0, -1, 7, 2 ** 24, 2 ** 24, 2 ** 24 + 4, -(2 ** 24 + 4), 2 ** 31, -(2 ** 31)];
  for (const k of backends) {
    const out = new Float32Array(src.length);
    k.i32ToF32(src, out, src.length);
    assert.deepEqual(Array.from(out), want, k.name);
  }
  const n = 100_003;
  const big = new Int32Array(randomBits(n, 77).buffer);
  const want2 = new Float32Array(n);
  ref.i32ToF32(big, want2, n);
  const got = new Float32Array(n);
  cpu.i32ToF32(big, got, n);
  assertSameBits(got, want2, 'cpu i32ToF32 random');
});
