// The shipped tiny model (models/sft): it loads, greedy decoding is deterministic and the same batched
// or one prompt at a time, seeded sampling is reproducible, and its reverse-text reward sits in the band
// the RL example needs (0.3–0.7: signal, with room to improve).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { asyncBufferFromFile, parquetReadObjects } from 'hyparquet';
import * as T from '@prime-rl/tensor';
import { Tokenizer, generate, loadPretrained } from '@prime-rl/lm';
import { difflibRatio, parseXmlAnswer } from '@prime-rl/verifiers';

const here = dirname(fileURLToPath(import.meta.url));
const MODEL = join(here, 'models', 'sft');
const SYSTEM_PROMPT = 'Reverse the text character-by-character. Put your answer in <reversed_text> tags.';

const tokenizer = await Tokenizer.fromDir(MODEL);
const rows = await parquetReadObjects({
  file: await asyncBufferFromFile(join(here, 'data', 'rl', 'train.parquet')),
  columns: ['prompt'],
  rowEnd: 100,
});
const questions = rows.map((r) => String(r.prompt));
const prompt = (question) =>
  tokenizer.encodeChat(
    [
      { role: 'system', content: SYSTEM_PROMPT },
      { role: 'user', content: question },
    ],
    { addGenerationPrompt: true },
  );

test('greedy decoding of the shipped model: deterministic, and batched equals one at a time', async () => {
  T.useBackend('cpu');
  const { model } = await loadPretrained(MODEL);
  const requests = questions
    .slice(0, 12)
    .map((q) => ({ promptIds: prompt(q), params: { temperature: 0, maxTokens: 200 } }));
  const batched = generate(model, requests, { tokenizer });
  const again = generate(model, requests, { tokenizer, maxBatch: 5 });
  const alone = requests.map((r) => generate(model, [r], { tokenizer })[0]);
  for (let i = 0; i < requests.length; i++) {
    assert.deepEqual(again[i].tokenIds, batched[i].tokenIds, `request ${i}: batch of 5 vs 12`);
    assert.deepEqual(alone[i].tokenIds, batched[i].tokenIds, `request ${i}: alone vs batched`);
    assert.equal(batched[i].finishReason, 'stop', `request ${i} ends with <|im_end|>`);
  }
  model.dispose();
});

test('a seeded sample of the shipped model is reproducible', async () => {
  T.useBackend('cpu');
  const { model } = await loadPretrained(MODEL);
  const params = { temperature: 1, topP: 0.95, maxTokens: 200, seed: 1234 };
  const [a] = generate(model, [{ promptIds: prompt(questions[0]), params }], { tokenizer });
  const [, b] = generate(
    model,
    [
      { promptIds: prompt(questions[1]), params: { ...params, seed: 1 } },
      { promptIds: prompt(questions[0]), params },
    ],
    { tokenizer },
  );
  assert.deepEqual(b.tokenIds, a.tokenIds);
  assert.deepEqual(b.logprobs, a.logprobs);
  model.dispose();
});

test('the shipped model scores between 0.3 and 0.7 on reverse-text (greedy, 100 prompts)', async () => {
  T.useBackend('cpu');
  const { model } = await loadPretrained(MODEL);
  const results = generate(
    model,
    questions.map((q) => ({ promptIds: prompt(q), params: { temperature: 0, maxTokens: 256 } })),
    { tokenizer },
  );
  const reverse = (s) => [...s].reverse().join('');
  const rewards = results.map((r, i) =>
    difflibRatio(parseXmlAnswer(r.text, 'reversed_text') ?? '', reverse(questions[i])),
  );
  const mean = rewards.reduce((a, b) => a + b, 0) / rewards.length;
  assert.ok(mean > 0.3 && mean < 0.7, `mean reward ${mean}`);
  model.dispose();
});
