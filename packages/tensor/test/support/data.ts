// Shared test helpers: seeded random data and closeness checks with useful failure messages.
import assert from 'node:assert/strict';

/** Deterministic uniform [-scale, scale) floats (mulberry32). */
export function randn(n: number, seed: number, scale = 1): Float32Array {
  let s = seed >>> 0;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    const u = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    out[i] = (u * 2 - 1) * scale;
  }
  return out;
}

/** Deterministic integers in [0, hi). */
export function randInt(n: number, hi: number, seed: number): Int32Array {
  const u = randn(n, seed, 1);
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.min(hi - 1, Math.floor(((u[i]! + 1) / 2) * hi));
  return out;
}

/**
 * Asserts |actual − expected| ≤ atol + rtol·|expected| elementwise; reports the worst element.
 */
export function assertClose(
  actual: ArrayLike<number>,
  expected: ArrayLike<number>,
  label: string,
  { rtol = 1e-5, atol = 1e-6 }: { rtol?: number; atol?: number } = {},
): void {
  assert.equal(actual.length, expected.length, `${label}: length ${actual.length} vs ${expected.length}`);
  let worst = -1;
  let worstExcess = 0;
  for (let i = 0; i < actual.length; i++) {
    const a = actual[i]!;
    const e = expected[i]!;
    if (Number.isNaN(e) && Number.isNaN(a)) continue;
    const excess = Math.abs(a - e) - (atol + rtol * Math.abs(e));
    if (!(excess <= 0) && (worst < 0 || !(excess <= worstExcess))) {
      worst = i;
      worstExcess = excess;
    }
  }
  if (worst >= 0)
    assert.fail(
      `${label}: element ${worst} is ${actual[worst]}, expected ${expected[worst]} (rtol ${rtol}, atol ${atol})`,
    );
}

/** max|a − b| / max|b|: the relative error of a whole tensor. */
export function relativeError(actual: ArrayLike<number>, expected: ArrayLike<number>): number {
  let num = 0;
  let den = 0;
  for (let i = 0; i < expected.length; i++) {
    num = Math.max(num, Math.abs(actual[i]! - expected[i]!));
    den = Math.max(den, Math.abs(expected[i]!));
  }
  return den === 0 ? num : num / den;
}
