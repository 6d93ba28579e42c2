// tokenLogprobs / tokenLogprobsBackward: the ref kernel against a float64 definition and central
// finite differences; the native kernel against ref, across chunk sizes and thread counts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { backendKernels } from '../src/backend/select.js';
import type { Kernels } from '../src/backend/kernels.js';
import { assertClose, randInt, randn, relativeError } from './support/data.js';

const ref = backendKernels('ref');
const cpu = backendKernels('cpu');

interface Problem {
  rows: number;
  dim: number;
  vocab: number;
  hidden: Float32Array;
  weight: Float32Array;
  targets: Int32Array;
}

function problem(rows: number, dim: number, vocab: number, seed: number): Problem {
  return {
    rows,
    dim,
    vocab,
    hidden: randn(rows * dim, seed, 1),
    weight: randn(vocab * dim, seed + 1, 1),
    targets: randInt(rows, vocab, seed + 2),
  };
}

/** The definition in float64: z = h·Wᵀ·invT, logprob = z[target] − lse, entropy = −Σ p log p. */
function definition(
  hidden: ArrayLike<number>,
  weight: ArrayLike<number>,
  { rows, dim, vocab, targets }: Problem,
  invTemperature: number,
): { logprobs: number[]; entropy: number[] } {
  const logprobs: number[] = [];
  const entropy: number[] = [];
  for (let r = 0; r < rows; r++) {
    const z: number[] = [];
    for (let j = 0; j < vocab; j++) {
      let dot = 0;
      for (let d = 0; d < dim; d++) dot += hidden[r * dim + d]! * weight[j * dim + d]!;
      z.push(dot * invTemperature);
    }
    const lse = Math.log(z.reduce((a, x) => a + Math.exp(x), 0));
    logprobs.push(z[targets[r]!]! - lse);
    entropy.push(-z.reduce((a, x) => a + Math.exp(x - lse) * (x - lse), 0));
  }
  return { logprobs, entropy };
}

function forward(kernels: Kernels, p: Problem, invTemperature: number, chunk: number) {
  const logprobs = new Float32Array(p.rows);
  const entropy = new Float32Array(p.rows);
  const lse = new Float32Array(p.rows);
  kernels.tokenLogprobs(
    p.hidden,
    p.weight,
    p.targets,
    p.rows,
    p.dim,
    p.vocab,
    invTemperature,
    chunk,
    logprobs,
    entropy,
    lse,
  );
  return { logprobs, entropy, lse };
}

interface BackwardOptions {
  invTemperature: number;
  chunk: number;
  dLogprobs: Float32Array;
  dEntropy: Float32Array | null;
  dHiddenStart?: Float32Array;
  dWeightStart?: Float32Array;
  accumulate?: boolean;
}

function backward(kernels: Kernels, p: Problem, o: BackwardOptions) {
  const { lse, entropy } = forward(kernels, p, o.invTemperature, o.chunk);
  const dHidden = o.dHiddenStart ? o.dHiddenStart.slice() : new Float32Array(p.rows * p.dim).fill(NaN);
  const dWeight = o.dWeightStart ? o.dWeightStart.slice() : new Float32Array(p.vocab * p.dim);
  kernels.tokenLogprobsBackward(
    p.hidden,
    p.weight,
    p.targets,
    p.rows,
    p.dim,
    p.vocab,
    o.invTemperature,
    o.chunk,
    lse,
    entropy,
    o.dLogprobs,
    o.dEntropy,
    dHidden,
    dWeight,
    o.accumulate ?? false,
  );
  return { dHidden, dWeight };
}

test('ref tokenLogprobs: a hand-computed row', () => {
  // One row, dim 1, vocab 2: z = [2, −1]·0.5 = [1, −0.5].
  const p: Problem = {
    rows: 1,
    dim: 1,
    vocab: 2,
    hidden: new Float32Array([2]),
    weight: new Float32Array([1, -0.5]),
    targets: new Int32Array([1]),
  };
  const { logprobs, entropy, lse } = forward(ref, p, 0.5, 1);
  const expectedLse = Math.log(Math.exp(1) + Math.exp(-0.5));
  const p0 = Math.exp(1 - expectedLse);
  const p1 = Math.exp(-0.5 - expectedLse);
  assertClose(lse, [expectedLse], 'lse', { rtol: 1e-7 });
  assertClose(logprobs, [-0.5 - expectedLse], 'logprob', { rtol: 1e-7 });
  assertClose(entropy, [-(p0 * Math.log(p0) + p1 * Math.log(p1))], 'entropy', { rtol: 1e-6 });
});

test('ref tokenLogprobs matches the float64 definition; logprob ≤ 0, entropy ≥ 0, chunk size does not matter', () => {
  const p = problem(7, 5, 11, 1);
  for (const invTemperature of [1, 2]) {
    const expected = definition(p.hidden, p.weight, p, invTemperature);
    const results = [1, 3, 7, 100].map((chunk) => forward(ref, p, invTemperature, chunk));
    for (const r of results) {
      assertClose(r.logprobs, expected.logprobs, `logprobs (invT ${invTemperature})`, { rtol: 1e-6 });
      assertClose(r.entropy, expected.entropy, `entropy (invT ${invTemperature})`, { rtol: 1e-6 });
      assert.deepEqual(r, results[0]);
      for (let i = 0; i < p.rows; i++) {
        assert.ok(r.logprobs[i]! <= 0, `logprob ${r.logprobs[i]}`);
        assert.ok(r.entropy[i]! >= 0, `entropy ${r.entropy[i]}`);
      }
    }
  }
});

test('tokenLogprobs temperature: invT 2 equals doubled weights, and sharpening never raises entropy', () => {
  const p = problem(9, 6, 13, 4);
  const doubled = { ...p, weight: p.weight.map((w) => 2 * w) };
  for (const kernels of [ref, cpu]) {
    const hot = forward(kernels, p, 1, 4);
    const cold = forward(kernels, p, 2, 4);
    const viaWeights = forward(kernels, doubled, 1, 4);
    assertClose(cold.logprobs, viaWeights.logprobs, `${kernels.name} logprobs`, { rtol: 1e-6 });
    assertClose(cold.entropy, viaWeights.entropy, `${kernels.name} entropy`, { rtol: 1e-6 });
    for (let i = 0; i < p.rows; i++) assert.ok(cold.entropy[i]! <= hot.entropy[i]! + 1e-6, `${kernels.name} row ${i}`);
  }
});

test('ref tokenLogprobsBackward matches central finite differences (with and without dEntropy)', () => {
  const p = problem(4, 3, 5, 9);
  const invTemperature = 1 / 0.7;
  const dLogprobs = randn(p.rows, 20);
  const dEntropyValues = randn(p.rows, 21);
  for (const dEntropy of [null, dEntropyValues]) {
    const { dHidden, dWeight } = backward(ref, p, { invTemperature, chunk: 3, dLogprobs, dEntropy });
    const hidden = Float64Array.from(p.hidden);
    const weight = Float64Array.from(p.weight);
    const loss = () => {
      const { logprobs, entropy } = definition(hidden, weight, p, invTemperature);
      let total = 0;
      for (let r = 0; r < p.rows; r++)
        total += dLogprobs[r]! * logprobs[r]! + (dEntropy ? dEntropy[r]! : 0) * entropy[r]!;
      return total;
    };
    const eps = 1e-6;
    for (const [name, params, analytic] of [
      ['dHidden', hidden, dHidden],
      ['dWeight', weight, dWeight],
    ] as const) {
      const numeric = new Float64Array(params.length);
      for (let i = 0; i < params.length; i++) {
        const saved = params[i]!;
        params[i] = saved + eps;
        const up = loss();
        params[i] = saved - eps;
        const down = loss();
        params[i] = saved;
        numeric[i] = (up - down) / (2 * eps);
      }
      assertClose(analytic, numeric, `${name} (${dEntropy ? 'with' : 'without'} dEntropy)`, {
        rtol: 1e-4,
        atol: 1e-5,
      });
    }
  }
});

test('tokenLogprobsBackward: dHidden is written or accumulated, dWeight always accumulates', () => {
  const p = problem(5, 4, 7, 30);
  const options = { invTemperature: 1, chunk: 2, dLogprobs: randn(p.rows, 31), dEntropy: randn(p.rows, 32) };
  for (const kernels of [ref, cpu]) {
    const fresh = backward(kernels, p, { ...options, dWeightStart: new Float32Array(p.vocab * p.dim) });
    const dHiddenStart = randn(p.rows * p.dim, 33);
    const dWeightStart = randn(p.vocab * p.dim, 34);
    const written = backward(kernels, p, { ...options, dHiddenStart: dHiddenStart.map(() => NaN), dWeightStart });
    const added = backward(kernels, p, { ...options, dHiddenStart, dWeightStart, accumulate: true });
    const label = kernels.name;
    assertClose(written.dHidden, fresh.dHidden, `${label} written dHidden`);
    assertClose(
      written.dWeight,
      dWeightStart.map((w, i) => w + fresh.dWeight[i]!),
      `${label} dWeight`,
    );
    assertClose(
      added.dHidden,
      dHiddenStart.map((h, i) => h + fresh.dHidden[i]!),
      `${label} accumulated dHidden`,
    );
  }
});

test('tokenLogprobs rejects targets outside [0, vocab)', () => {
  const p = problem(3, 2, 4, 5);
  for (const kernels of [ref, cpu]) {
    for (const bad of [4, -1]) {
      const targets = Int32Array.from([0, bad, 1]);
      assert.throws(
        () => forward(kernels, { ...p, targets }, 1, 2),
        new RegExp(`tokenLogprobs: target ${bad} at row 1 is outside \\[0, vocab = 4\\)`),
        kernels.name,
      );
      const zeros = new Float32Array(3);
      assert.throws(
        () =>
          kernels.tokenLogprobsBackward(
            p.hidden,
            p.weight,
            targets,
            3,
            2,
            4,
            1,
            2,
            zeros,
            zeros,
            zeros,
            null,
            new Float32Array(6),
            new Float32Array(8),
            false,
          ),
        /tokenLogprobsBackward: target .* is outside/,
        kernels.name,
      );
    }
  }
});

test('cpu tokenLogprobs forward and backward match ref (odd sizes, every chunk size)', () => {
  const p = problem(37, 24, 101, 50);
  const invTemperature = 1 / 0.7;
  const dLogprobs = randn(p.rows, 51);
  const dEntropy = randn(p.rows, 52);
  const expected = forward(ref, p, invTemperature, 8);
  for (const chunk of [1, 3, 8, 37, 64]) {
    const actual = forward(cpu, p, invTemperature, chunk);
    for (const key of ['logprobs', 'entropy', 'lse'] as const)
      assertClose(actual[key], expected[key], `${key} (chunk ${chunk})`, { rtol: 1e-5, atol: 1e-5 });
  }
  for (const d of [null, dEntropy]) {
    const options = { invTemperature, chunk: 8, dLogprobs, dEntropy: d };
    const want = backward(ref, p, options);
    for (const chunk of [1, 8, 37]) {
      const got = backward(cpu, p, { ...options, chunk });
      for (const key of ['dHidden', 'dWeight'] as const) {
        const err = relativeError(got[key], want[key]);
        assert.ok(err < 1e-5, `${key} (chunk ${chunk}, ${d ? 'with' : 'without'} dEntropy): relative error ${err}`);
      }
    }
  }
});

test('cpu tokenLogprobs: 1 and 2 threads give identical bits', () => {
  const p = problem(64, 64, 1000, 60);
  const options = { invTemperature: 1, chunk: 32, dLogprobs: randn(p.rows, 61), dEntropy: randn(p.rows, 62) };
  const before = cpu.threads();
  try {
    const runs = [1, 2].map((threads) => {
      cpu.setThreads(threads);
      return { ...forward(cpu, p, 1, 32), ...backward(cpu, p, options) };
    });
    for (const key of ['logprobs', 'entropy', 'lse', 'dHidden', 'dWeight'] as const)
      assert.deepEqual(new Uint32Array(runs[1]![key].buffer), new Uint32Array(runs[0]![key].buffer), key);
  } finally {
    cpu.setThreads(before);
  }
});
