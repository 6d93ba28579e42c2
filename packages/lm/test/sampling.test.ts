// The sampler: seeded reproducibility, greedy and truncated sampling (top-k, top-p, min-p), penalties,
// the min_tokens mask, returned log-probabilities against a float64 hand computation, and empirical
// frequencies against softmax(logits / T).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Generator } from '@prime-rl/tensor';
import { Sampler, type SamplerContext } from '../src/generate/sampler.js';
import { resolveSamplingParams, type SamplingParams } from '../src/generate/sampling-params.js';

function randomLogits(vocabSize: number, seed: number, scale = 3): Float32Array {
  const generator = new Generator(seed);
  return Float32Array.from({ length: vocabSize }, () => scale * generator.normal());
}

/** Logits whose softmax is exactly the given probabilities (up to float32 rounding). */
function logitsFor(probabilities: number[]): Float32Array {
  return Float32Array.from(probabilities, (p) => (p > 0 ? Math.log(p) : -Infinity));
}

function makeSampler(
  params: Partial<SamplingParams>,
  vocabSize: number,
  context: Partial<SamplerContext> = {},
): Sampler {
  return new Sampler(resolveSamplingParams(params), { vocabSize, eosTokenIds: [], promptIds: [], ...context });
}

function tokenCounts(sampler: Sampler, logits: Float32Array, draws: number, generatedIds: number[] = []): number[] {
  const counts = new Array<number>(logits.length).fill(0);
  for (let i = 0; i < draws; i++) {
    const { token } = sampler.sample(logits, generatedIds);
    counts[token] = (counts[token] as number) + 1;
  }
  return counts;
}

function sampledSet(counts: number[]): number[] {
  return counts.flatMap((count, token) => (count > 0 ? [token] : []));
}

/** log_softmax(logits / T) in float64, the way a reference implementation would write it. */
function referenceLogSoftmax(logits: ArrayLike<number>, temperature: number): number[] {
  const scaled = Array.from(logits, (x) => x / temperature);
  const max = scaled.reduce((a, b) => Math.max(a, b), -Infinity);
  const sum = scaled.reduce((acc, s) => acc + Math.exp(s - max), 0);
  const logSumExp = max + Math.log(sum);
  return scaled.map((s) => s - logSumExp);
}

function softmax(logits: ArrayLike<number>, temperature: number): number[] {
  return referenceLogSoftmax(logits, temperature).map(Math.exp);
}

function assertFrequenciesMatch(counts: number[], probabilities: number[], draws: number): void {
  probabilities.forEach((p, token) => {
    const frequency = (counts[token] as number) / draws;
    const standardError = Math.sqrt((p * (1 - p)) / draws);
    assert.ok(
      Math.abs(frequency - p) <= 4.5 * standardError + 1e-12,
      `token ${token}: frequency ${frequency} vs probability ${p} (±${standardError})`,
    );
  });
}

test('the same seed gives the same tokens; different seeds differ', () => {
  const logits = randomLogits(500, 1, 1);
  const run = (seed: number): number[] => {
    const sampler = makeSampler({ seed, topP: 0.95, topK: 100 }, 500);
    const generated: number[] = [];
    for (let i = 0; i < 40; i++) generated.push(sampler.sample(logits, generated).token);
    return generated;
  };
  assert.deepEqual(run(7), run(7));
  assert.notDeepEqual(run(7), run(8));
  // Seeds beyond 32 bits are not truncated into each other.
  assert.notDeepEqual(run(7), run(7 + 2 ** 32));
});

test('unseeded requests draw different streams', () => {
  const logits = new Float32Array(1000);
  const draw = (): number[] => {
    const sampler = makeSampler({}, 1000);
    return Array.from({ length: 20 }, () => sampler.sample(logits, []).token);
  };
  assert.notDeepEqual(draw(), draw());
});

test('greedy picks the argmax, ties going to the lowest id', () => {
  const logits = Float32Array.from([0.5, 2, -1, 2, 1.5]);
  const sampler = makeSampler({ temperature: 0 }, 5);
  for (let i = 0; i < 10; i++) assert.equal(sampler.sample(logits, []).token, 1);
  const random = randomLogits(2000, 3);
  const argmax = random.indexOf(Math.max(...random));
  assert.equal(makeSampler({ temperature: 0 }, 2000).sample(random, []).token, argmax);
});

test('top_k = 1 samples exactly what greedy does', () => {
  for (let seed = 0; seed < 20; seed++) {
    const logits = randomLogits(300, 100 + seed, 0.5);
    const greedy = makeSampler({ temperature: 0 }, 300).sample(logits, []).token;
    const topOne = makeSampler({ topK: 1, temperature: 1.5, seed }, 300);
    for (let i = 0; i < 5; i++) assert.equal(topOne.sample(logits, []).token, greedy);
  }
  // Ties keep the lowest id, as greedy does.
  const tied = Float32Array.from([0, 3, 1, 3]);
  assert.equal(makeSampler({ topK: 1, seed: 1 }, 4).sample(tied, []).token, 1);
});

test('top_k keeps exactly the k most likely tokens, in proportion', () => {
  const logits = logitsFor([0.05, 0.3, 0.1, 0.25, 0.2, 0.1]);
  const counts = tokenCounts(makeSampler({ topK: 3, seed: 5 }, 6), logits, 20000);
  assert.deepEqual(sampledSet(counts), [1, 3, 4]);
  assertFrequenciesMatch(counts, [0, 0.3 / 0.75, 0, 0.25 / 0.75, 0.2 / 0.75, 0], 20000);
});

test('top_p keeps exactly the nucleus', () => {
  // Sorted: 0.4 (id 2), 0.3 (id 0), 0.2 (id 3), 0.1 (id 1).
  const logits = logitsFor([0.3, 0.1, 0.4, 0.2]);
  const nucleus = (topP: number, extra: Partial<SamplingParams> = {}): number[] =>
    sampledSet(tokenCounts(makeSampler({ topP, seed: 11, ...extra }, 4), logits, 3000));
  assert.deepEqual(nucleus(0.35), [2]);
  assert.deepEqual(nucleus(0.65), [0, 2]);
  assert.deepEqual(nucleus(0.85), [0, 2, 3]);
  assert.deepEqual(nucleus(0.95), [0, 1, 2, 3]);
  // The same through the top-k path (k below the vocabulary).
  assert.deepEqual(nucleus(0.65, { topK: 3 }), [0, 2]);
  assert.deepEqual(nucleus(0.95, { topK: 3 }), [0, 2, 3]);

  const counts = tokenCounts(makeSampler({ topP: 0.65, seed: 12 }, 4), logits, 20000);
  assertFrequenciesMatch(counts, [0.3 / 0.7, 0, 0.4 / 0.7, 0], 20000);
});

test('top_p over a large vocabulary matches a brute-force sorted nucleus', () => {
  for (const [seed, temperature, topP] of [
    [1, 1, 0.9],
    [2, 0.5, 0.5],
    [3, 2, 0.99],
    [4, 0.3, 0.999],
  ] as const) {
    const vocabSize = 2000;
    const logits = randomLogits(vocabSize, 40 + seed, 2);
    const probabilities = softmax(logits, temperature);
    const order = probabilities.map((p, id) => ({ p, id })).sort((a, b) => b.p - a.p || a.id - b.id);
    const expected = new Set<number>();
    let cumulative = 0;
    for (const { p, id } of order) {
      expected.add(id);
      cumulative += p;
      if (cumulative >= topP) break;
    }
    const sampler = makeSampler({ topP, temperature, seed }, vocabSize);
    const counts = tokenCounts(sampler, logits, 3000);
    for (const token of sampledSet(counts)) assert.ok(expected.has(token), `token ${token} outside the nucleus`);
    // Every nucleus member likely enough to show up in 3000 draws does.
    const nucleusMass = [...expected].reduce((acc, id) => acc + (probabilities[id] as number), 0);
    for (const id of expected) {
      if ((probabilities[id] as number) / nucleusMass > 0.005) assert.ok((counts[id] as number) > 0, `token ${id}`);
    }
  }
});

test('min_p drops tokens below min_p times the most likely probability', () => {
  const logits = logitsFor([0.08, 0.5, 0.12, 0.3]);
  const kept = (minP: number, extra: Partial<SamplingParams> = {}): number[] =>
    sampledSet(tokenCounts(makeSampler({ minP, seed: 21, ...extra }, 4), logits, 3000));
  assert.deepEqual(kept(0.2), [1, 2, 3]); // threshold 0.1
  assert.deepEqual(kept(0.5), [1, 3]); // threshold 0.25
  assert.deepEqual(kept(1), [1]);
  assert.deepEqual(kept(0.5, { topK: 3 }), [1, 3]);
  // After top-p: min-p still compares with the most likely token, so it only trims the nucleus.
  assert.deepEqual(kept(0.3, { topP: 0.95 }), [1, 3]);
  const counts = tokenCounts(makeSampler({ minP: 0.2, seed: 22 }, 4), logits, 20000);
  assertFrequenciesMatch(counts, [0, 0.5 / 0.92, 0.12 / 0.92, 0.3 / 0.92], 20000);
});

test('empirical frequencies over 20000 seeded draws match softmax(logits / T)', () => {
  for (const temperature of [1, 0.6, 1.7]) {
    const logits = randomLogits(12, 77, 1.5);
    const counts = tokenCounts(makeSampler({ temperature, seed: 99 }, 12), logits, 20000);
    assertFrequenciesMatch(counts, softmax(logits, temperature), 20000);
  }
});

test('with penalties the frequencies match softmax of the hand-penalised logits / T', () => {
  const params = { repetitionPenalty: 1.3, frequencyPenalty: 0.2, presencePenalty: 0.3, temperature: 0.9 };
  const promptIds = [2, 6];
  const generated = [0, 0, 5];
  const penalise = (logits: Float32Array): number[] => {
    const penalised = Array.from(logits);
    for (const id of new Set([...promptIds, ...generated])) {
      const x = penalised[id] as number;
      penalised[id] = x > 0 ? x / params.repetitionPenalty : x * params.repetitionPenalty;
    }
    for (const id of new Set(generated)) {
      const count = generated.filter((token) => token === id).length;
      penalised[id] = (penalised[id] as number) - params.frequencyPenalty * count - params.presencePenalty;
    }
    return penalised;
  };
  // The raw maximum (id 0) penalised, so the weights are rescaled; then left alone (id 3 on top).
  for (const raw of [
    [2.5, 1, 0.5, 2, -1, 1.5, -0.5, 0],
    [0.5, 1, 0.5, 2.5, -1, 1.5, -0.5, 0],
  ]) {
    const logits = Float32Array.from(raw);
    const sampler = makeSampler({ ...params, seed: 8 }, 8, { promptIds });
    const counts = tokenCounts(sampler, logits, 20000, generated);
    assertFrequenciesMatch(counts, softmax(penalise(logits), params.temperature), 20000);
  }
});

test('repetition penalty divides positive logits and multiplies negative ones, over prompt and output', () => {
  const positive = Float32Array.from([2, 1.9, 0]);
  const greedy = (params: Partial<SamplingParams>, promptIds: number[], generated: number[], logits: Float32Array) =>
    makeSampler({ temperature: 0, ...params }, logits.length, { promptIds }).sample(logits, generated).token;
  assert.equal(greedy({}, [0], [], positive), 0);
  assert.equal(greedy({ repetitionPenalty: 1.2 }, [0], [], positive), 1); // 2 / 1.2 < 1.9
  assert.equal(greedy({ repetitionPenalty: 1.2 }, [], [0], positive), 1); // generated counts too
  assert.equal(greedy({ repetitionPenalty: 1.02 }, [0], [], positive), 0); // 2 / 1.02 > 1.9
  // In both prompt and output the token is penalised once, not twice.
  assert.equal(greedy({ repetitionPenalty: 1.04 }, [0, 0], [0, 0], positive), 0);
  const negative = Float32Array.from([-1, -1.1, -5]);
  assert.equal(greedy({ repetitionPenalty: 1.2 }, [0], [], negative), 1); // -1 × 1.2 < -1.1
  // Below 1 it encourages repetition.
  assert.equal(greedy({ repetitionPenalty: 0.5 }, [1], [], positive), 1);
});

test('presence and frequency penalties subtract per generated token', () => {
  const logits = Float32Array.from([1, 0.9, 0]);
  const greedy = (params: Partial<SamplingParams>, generated: number[], promptIds: number[] = []) =>
    makeSampler({ temperature: 0, ...params }, 3, { promptIds }).sample(logits, generated).token;
  assert.equal(greedy({ presencePenalty: 0.2 }, [0]), 1);
  assert.equal(greedy({ presencePenalty: 0.05 }, [0, 0, 0]), 0); // presence counts once
  assert.equal(greedy({ presencePenalty: 0.2 }, [], [0]), 0); // the prompt does not count
  assert.equal(greedy({ frequencyPenalty: 0.05 }, [0]), 0); // 0.95 > 0.9
  assert.equal(greedy({ frequencyPenalty: 0.05 }, [0, 2, 0, 0]), 1); // 0.85 < 0.9
  assert.equal(greedy({ frequencyPenalty: -0.2 }, [1]), 1); // negative encourages
  // Repetition first, then presence (vLLM's order): 10 / 2 - 1 = 4 < 4.2, where (10 - 1) / 2 = 4.5 would win.
  const ordered = makeSampler({ temperature: 0, repetitionPenalty: 2, presencePenalty: 1 }, 2);
  assert.equal(ordered.sample(Float32Array.from([10, 4.2]), [0]).token, 1);
});

test('a reused sampler follows a growing output and recounts when the output is replaced', () => {
  const logits = Float32Array.from([1, 0.9, 0]);
  const sampler = makeSampler({ temperature: 0, frequencyPenalty: 0.04 }, 3);
  const generated: number[] = [];
  assert.equal(sampler.sample(logits, generated).token, 0);
  generated.push(0);
  assert.equal(sampler.sample(logits, generated).token, 0); // 0.96
  generated.push(0);
  assert.equal(sampler.sample(logits, generated).token, 0); // 0.92
  generated.push(0);
  assert.equal(sampler.sample(logits, generated).token, 1); // 0.88
  assert.equal(sampler.sample(logits, [1, 1]).token, 0); // a different history
  assert.equal(sampler.sample(logits, new Int32Array([0, 0, 0])).token, 1);
});

test('min_tokens masks EOS and stop token ids until enough tokens were generated', () => {
  // EOS (id 3) and the stop id (4) dominate.
  const logits = Float32Array.from([0, 0.5, 0.2, 10, 9]);
  for (const ignoreEos of [false, true]) {
    const sampler = makeSampler({ minTokens: 2, stopTokenIds: [4], seed: 3, ignoreEos }, 5, { eosTokenIds: [3] });
    for (const generated of [[], [1]]) {
      const counts = tokenCounts(sampler, logits, 500, generated);
      assert.equal(counts[3], 0);
      assert.equal(counts[4], 0);
    }
    assert.equal(sampler.sample(logits, [1, 2]).token, 3);
  }
  const greedy = makeSampler({ temperature: 0, minTokens: 1 }, 5, { eosTokenIds: [3, 4] });
  assert.equal(greedy.sample(logits, []).token, 1);
  assert.equal(greedy.sample(logits, [1]).token, 3);
});

test('logprob and topLogprobs are log_softmax(logits / T) in float64', () => {
  for (const temperature of [1, 0.7, 1.9]) {
    const logits = randomLogits(1000, 50, 4);
    logits[10] = logits[20] as number; // a tie, ordered by id
    const reference = referenceLogSoftmax(logits, temperature);
    const sampler = makeSampler({ temperature, logprobs: 6, seed: 1 }, 1000);
    const result = sampler.sample(logits, []);
    assert.ok(Math.abs(result.logprob - (reference[result.token] as number)) < 1e-12);
    const expectedTop = reference
      .map((logprob, token) => ({ token, logprob }))
      .sort((a, b) => b.logprob - a.logprob || a.token - b.token)
      .slice(0, 6);
    assert.equal(result.topLogprobs?.length, 6);
    result.topLogprobs?.forEach((entry, i) => {
      assert.equal(entry.token, expectedTop[i]?.token);
      assert.ok(Math.abs(entry.logprob - (expectedTop[i]?.logprob as number)) < 1e-12);
    });
  }
  // A tie among the top entries lists the lower id first.
  const tied = Float32Array.from([1, 3, 2, 3]);
  const top = makeSampler({ logprobs: 3 }, 4).sample(tied, []).topLogprobs;
  assert.deepEqual(
    top?.map((entry) => entry.token),
    [1, 3, 2],
  );
  // Greedy reports the untempered distribution; no logprobs requested, none returned.
  const logits = randomLogits(50, 8);
  const greedy = makeSampler({ temperature: 0 }, 50).sample(logits, []);
  assert.ok(Math.abs(greedy.logprob - (referenceLogSoftmax(logits, 1)[greedy.token] as number)) < 1e-12);
  assert.equal(greedy.topLogprobs, undefined);
  assert.deepEqual(makeSampler({ logprobs: 0 }, 50).sample(logits, []).topLogprobs, []);
});

test('penalties, masks and truncation do not change the returned logprobs', () => {
  const logits = randomLogits(400, 60, 2);
  const temperature = 0.8;
  const reference = referenceLogSoftmax(logits, temperature);
  const sampler = makeSampler(
    {
      temperature,
      logprobs: 5,
      repetitionPenalty: 1.3,
      presencePenalty: 0.5,
      frequencyPenalty: 0.3,
      minTokens: 10,
      stopTokenIds: [7],
      topK: 50,
      topP: 0.8,
      minP: 0.05,
      seed: 4,
    },
    400,
    { eosTokenIds: [3], promptIds: [1, 2, 3, 5, 8, 13] },
  );
  const generated = [21, 34, 21];
  const result = sampler.sample(logits, generated);
  assert.ok(Math.abs(result.logprob - (reference[result.token] as number)) < 1e-12);
  const plain = makeSampler({ temperature, logprobs: 5 }, 400).sample(logits, []).topLogprobs;
  assert.deepEqual(result.topLogprobs, plain);
});

test("the caller's logits are never modified, and a subarray view works", () => {
  const buffer = randomLogits(3 * 100, 70);
  const row = buffer.subarray(100, 200);
  const before = Float32Array.from(buffer);
  const sampler = makeSampler(
    { repetitionPenalty: 1.5, frequencyPenalty: 1, presencePenalty: 1, minTokens: 5, topP: 0.9, seed: 2, logprobs: 3 },
    100,
    { eosTokenIds: [0], promptIds: [1, 2, 3] },
  );
  const result = sampler.sample(row, [4, 5, 4]);
  assert.deepEqual(buffer, before);
  assert.ok(Math.abs(result.logprob - (referenceLogSoftmax(row, 1)[result.token] as number)) < 1e-12);
  makeSampler({ temperature: 0, repetitionPenalty: 2 }, 100, { promptIds: [9] }).sample(row, [9]);
  assert.deepEqual(buffer, before);
});

test('a penalised token can become far more likely than the raw maximum without overflow', () => {
  // Presence penalty -2 at a low temperature lifts token 1 by 2 / 0.01 = 200 nats past the raw top.
  const logits = Float32Array.from([5, 3, -4]);
  const sampler = makeSampler({ temperature: 0.01, presencePenalty: -2, frequencyPenalty: -2, seed: 1 }, 3);
  for (let i = 0; i < 20; i++) assert.equal(sampler.sample(logits, [1, 1]).token, 1);
  // And the raw top, masked, leaves a distribution over the rest however far below it they are.
  const masked = makeSampler({ temperature: 0.01, minTokens: 1, topP: 0.5, seed: 2 }, 3, { eosTokenIds: [0] });
  assert.equal(masked.sample(Float32Array.from([5000, 3, -4]), []).token, 1);
});

test('rejects logits of the wrong length, NaN logits and out-of-vocabulary ids', () => {
  const sampler = makeSampler({}, 4);
  assert.throws(() => sampler.sample(new Float32Array(5), []), /expected 4 logits, got 5/);
  assert.throws(() => sampler.sample(Float32Array.from([0, Number.NaN, 0, 0]), []), /NaN/);
  assert.throws(() => sampler.sample(Float32Array.from([-Infinity, -Infinity, -Infinity, -Infinity]), []), /-Infinity/);
  assert.throws(() => makeSampler({ stopTokenIds: [4] }, 4), /stop or EOS token id 4 is outside/);
  assert.throws(() => makeSampler({}, 4, { eosTokenIds: [9] }), /outside the vocabulary of 4/);
  assert.throws(() => makeSampler({ frequencyPenalty: 1 }, 4).sample(new Float32Array(4), [7]), /generated token id 7/);
  const onlyEos = makeSampler({ minTokens: 1 }, 2, { eosTokenIds: [0, 1] });
  assert.throws(() => onlyEos.sample(new Float32Array(2), []), /every token is masked/);
});
