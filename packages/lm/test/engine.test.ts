// The step-driven engine: requests that join between steps get the same tokens as alone, an abort frees
// its slot at once and finishes with 'abort', the queue is FIFO under a slot limit, the prefill budget
// splits admissions, and weights can only be swapped with no sequence running.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import * as T from '@prime-rl/tensor';
import { Engine, generate, loadPretrained, type GenerationResult } from '../src/index.js';

const FIXTURES = fileURLToPath(new URL('../../test/fixtures/', import.meta.url));
const GREEDY = { temperature: 0, maxTokens: 8, ignoreEos: true };

async function tinyModel() {
  T.useBackend('cpu');
  return (await loadPretrained(join(FIXTURES, 'hf-qwen3-tiny'))).model;
}

test('a request that joins mid-run decodes exactly as it does alone', async () => {
  const model = await tinyModel();
  const engine = new Engine(model, { maxSeqs: 4 });
  const results: GenerationResult[] = [];
  engine.submit({ promptIds: [5, 9, 1], params: GREEDY }, { onFinish: (r) => (results[0] = r) });
  engine.step();
  engine.step();
  engine.submit({ promptIds: [3, 3, 7, 11], params: GREEDY }, { onFinish: (r) => (results[1] = r) });
  while (engine.hasWork) engine.step();
  engine.dispose();
  const alone = generate(model, [{ promptIds: [3, 3, 7, 11], params: GREEDY }])[0]!;
  assert.deepEqual(results[1]!.tokenIds, alone.tokenIds);
  // Same tokens; log-probabilities agree to float rounding (a prefill batched with another sequence's
  // decode token is a different matrix shape, so sums may round differently).
  results[1]!.logprobs.forEach((lp, i) => assert.ok(Math.abs(lp - alone.logprobs[i]!) < 1e-5));
  assert.equal(results[0]!.tokenIds.length, 8);
});

test('abort frees the slot for the next queued request and reports finish reason abort', async () => {
  const model = await tinyModel();
  const engine = new Engine(model, { maxSeqs: 1 });
  const done: GenerationResult[] = [];
  const tokens: number[] = [];
  const first = engine.submit(
    { promptIds: [5, 9], params: { ...GREEDY, maxTokens: 100 } },
    {
      onToken: (e) => tokens.push(e.tokenId),
      onFinish: (r) => done.push(r),
    },
  );
  const second = engine.submit({ promptIds: [7], params: GREEDY }, { onFinish: (r) => done.push(r) });
  engine.step();
  engine.step();
  assert.equal(engine.numRunning, 1);
  assert.equal(engine.numWaiting, 1, 'one slot: the second request waits (FIFO)');
  assert.equal(engine.abort(first), true);
  assert.equal(done[0]!.finishReason, 'abort');
  assert.deepEqual(done[0]!.tokenIds, tokens);
  assert.equal(engine.abort(first), false, 'an id is aborted once');
  while (engine.hasWork) engine.step();
  assert.equal(done[1]!.finishReason, 'length');
  assert.equal(engine.abort(second), false);
  engine.dispose();
});

test('an abort asked for from a token callback waits for the end of the step', async () => {
  const model = await tinyModel();
  const engine = new Engine(model, { maxSeqs: 2 });
  const done: GenerationResult[] = [];
  let id = -1;
  id = engine.submit(
    { promptIds: [5, 9], params: GREEDY },
    {
      onToken: () => engine.abort(id),
      onFinish: (r) => done.push(r),
    },
  );
  engine.submit({ promptIds: [4], params: GREEDY }, { onFinish: (r) => done.push(r) });
  engine.step();
  assert.equal(done.length, 1);
  assert.equal(done[0]!.finishReason, 'abort');
  assert.equal(done[0]!.tokenIds.length, 1);
  while (engine.hasWork) engine.step();
  assert.equal(done[1]!.tokenIds.length, 8);
  engine.dispose();
});

test('the prefill budget admits prompts over several steps; a long prompt is admitted alone', async () => {
  const model = await tinyModel();
  const engine = new Engine(model, { maxSeqs: 8, maxBatchedTokens: 10 });
  for (let i = 0; i < 4; i++) engine.submit({ promptIds: [1, 2, 3, 4, 5, 6], params: GREEDY }, { onFinish: () => {} });
  const first = engine.step();
  assert.equal(first.admitted, 1);
  assert.equal(first.prefillTokens, 6);
  const second = engine.step();
  assert.equal(second.admitted, 1, '6 tokens + 1 decode token fit in 10; a second prompt would not');
  engine.abortAll();
  engine.submit({ promptIds: Array.from({ length: 30 }, (_, i) => i + 1), params: GREEDY }, { onFinish: () => {} });
  assert.equal(engine.step().admitted, 1);
  engine.dispose();
});

test('bad requests are refused at submit with a clear message; nothing is queued', async () => {
  const model = await tinyModel();
  const engine = new Engine(model, { maxSeqs: 2, maxModelLength: 16 });
  const sink = { onFinish: () => {} };
  assert.throws(() => engine.submit({ promptIds: [] }, sink), /prompt is empty/);
  assert.throws(() => engine.submit({ promptIds: [1, 99999] }, sink), /outside the vocabulary/);
  assert.throws(() => engine.submit({ promptIds: new Array(16).fill(1) }, sink), /maximum model length 16/);
  assert.throws(() => engine.submit({ promptIds: [1], params: { topP: 2 } }, sink), /top_p/);
  assert.equal(engine.hasWork, false);
  engine.dispose();
});

test('weights swap only between sequences, and only to the same shapes', async () => {
  const model = await tinyModel();
  const other = await tinyModel();
  const engine = new Engine(model, { maxSeqs: 2 });
  engine.submit({ promptIds: [5], params: GREEDY }, { onFinish: () => {} });
  engine.step();
  assert.throws(() => engine.setModel(other), /1 sequences are running/);
  while (engine.hasWork) engine.step();
  engine.setModel(other);
  assert.equal(engine.model, other);
  const { model: llama } = await loadPretrained(join(FIXTURES, 'hf-llama-tiny'));
  assert.throws(() => engine.setModel(llama), /different architecture: architecture qwen3 → llama/);
  engine.dispose();
});
