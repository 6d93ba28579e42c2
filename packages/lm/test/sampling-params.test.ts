// Sampling parameters: vLLM's defaults, filling in a partial request, and range checks whose messages
// name the field the way the user wrote it (snake_case).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  defaultSamplingParams,
  isGreedy,
  resolveSamplingParams,
  validateSamplingParams,
  type SamplingParams,
} from '../src/generate/sampling-params.js';

test('defaults follow vLLM', () => {
  assert.deepEqual(resolveSamplingParams({}), {
    temperature: 1,
    topP: 1,
    topK: 0,
    minP: 0,
    repetitionPenalty: 1,
    presencePenalty: 0,
    frequencyPenalty: 0,
    seed: null,
    maxTokens: null,
    minTokens: 0,
    stop: [],
    stopTokenIds: [],
    ignoreEos: false,
    includeStopStrInOutput: false,
    logprobs: null,
    skipSpecialTokens: true,
  });
  assert.ok(Object.isFrozen(defaultSamplingParams));
});

test('resolve keeps given fields, ignores undefined ones and copies the arrays', () => {
  const stop = ['</answer>'];
  const resolved = resolveSamplingParams({ temperature: 0.7, topP: undefined, stop, maxTokens: 16 });
  assert.equal(resolved.temperature, 0.7);
  assert.equal(resolved.topP, 1);
  assert.equal(resolved.maxTokens, 16);
  stop.push('later');
  assert.deepEqual(resolved.stop, ['</answer>']);
  // The defaults' arrays are never shared either.
  resolveSamplingParams({}).stopTokenIds.push(5);
  assert.deepEqual(resolveSamplingParams({}).stopTokenIds, []);
});

test('temperature 0 and anything below 1e-5 is greedy', () => {
  assert.ok(isGreedy({ temperature: 0 }));
  assert.ok(isGreedy({ temperature: 1e-6 }));
  assert.ok(!isGreedy({ temperature: 1e-5 }));
});

const invalid: [Partial<SamplingParams>, string][] = [
  [{ topP: 1.5 }, 'top_p must be in (0, 1], got 1.5'],
  [{ topP: 0 }, 'top_p must be in (0, 1], got 0'],
  [{ temperature: -0.5 }, 'temperature must be non-negative, got -0.5'],
  [{ temperature: Number.NaN }, 'temperature must be a finite number, got NaN'],
  [{ topK: -2 }, 'top_k must be 0 or -1 (disabled), or at least 1, got -2'],
  [{ topK: 2.5 }, 'top_k must be an integer, got 2.5'],
  [{ minP: 1.1 }, 'min_p must be in [0, 1], got 1.1'],
  [{ repetitionPenalty: 0 }, 'repetition_penalty must be greater than zero, got 0'],
  [{ presencePenalty: 2.5 }, 'presence_penalty must be in [-2, 2], got 2.5'],
  [{ frequencyPenalty: -3 }, 'frequency_penalty must be in [-2, 2], got -3'],
  [{ seed: 1.5 }, 'seed must be an integer, got 1.5'],
  [{ maxTokens: 0 }, 'max_tokens must be at least 1, got 0'],
  [{ maxTokens: 3.5 }, 'max_tokens must be an integer, got 3.5'],
  [{ minTokens: -1 }, 'min_tokens must be greater than or equal to 0, got -1'],
  [{ minTokens: 5, maxTokens: 4 }, 'min_tokens must be less than or equal to max_tokens=4, got 5'],
  [{ stop: ['ok', ''] }, 'stop cannot contain an empty string'],
  [{ stopTokenIds: [3, -1] }, 'stop_token_ids must be non-negative, got -1'],
  [{ stopTokenIds: [0.5] }, 'stop_token_ids must be an integer, got 0.5'],
  [{ logprobs: -1 }, 'logprobs must be non-negative, got -1'],
  [{ logprobs: 1.5 }, 'logprobs must be an integer, got 1.5'],
];

for (const [partial, message] of invalid) {
  test(`rejects ${JSON.stringify(partial)}: ${message}`, () => {
    assert.throws(() => resolveSamplingParams(partial), { name: 'RangeError', message });
    assert.throws(() => validateSamplingParams({ ...defaultSamplingParams, ...partial }), { message });
  });
}

test('accepts the edges of every range', () => {
  for (const partial of [
    { temperature: 0 },
    { topP: 1 },
    { topP: 1e-9 },
    { topK: -1 },
    { topK: 1 },
    { minP: 0 },
    { minP: 1 },
    { repetitionPenalty: 0.01 },
    { presencePenalty: -2, frequencyPenalty: 2 },
    { seed: -7 },
    { seed: 2 ** 40 },
    { maxTokens: 1, minTokens: 1 },
    { logprobs: 0 },
    { stopTokenIds: [0] },
  ] satisfies Partial<SamplingParams>[]) {
    assert.doesNotThrow(() => resolveSamplingParams(partial), JSON.stringify(partial));
  }
});
