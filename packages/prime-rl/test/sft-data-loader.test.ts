// The step-wise SFT data loader: steps and micro-batches, loss mask by role, truncation and drops,
// deterministic shuffling per epoch, resume equivalence, interleaving, and fake data.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SftDataLoader, createSftDataLoader, epochOrder } from '../src/sft/data/index.js';
import type { SftDataLoaderOptions, SftStep } from '../src/sft/data/index.js';
import {
  END,
  ROLE_TOKEN,
  charTokenizer,
  dataConfig,
  decodeChars,
  promptCompletionRow,
  shiftedMask,
  tempDir,
  unpackBatch,
  writeJsonl,
  writeParquet,
} from './sft-data-helpers.js';

/** A JSONL dataset of `n` prompt/completion rows whose prompts read p0, p1, …. */
function dataset(n: number, completionLength = 0): string {
  const dir = tempDir();
  writeJsonl(
    dir,
    'train.jsonl',
    Array.from({ length: n }, (_, i) => promptCompletionRow(i, completionLength)),
  );
  return dir;
}

async function loader(data: Record<string, unknown>, options: SftDataLoaderOptions = {}): Promise<SftDataLoader> {
  return createSftDataLoader(dataConfig({ type: 'sft', ...data }), { tokenizer: charTokenizer, ...options });
}

/** The prompt ids of the samples of a step, in packing order ("p3" → 3). */
function promptIds(step: SftStep): number[] {
  return step.microBatches.flatMap((batch) =>
    unpackBatch(batch).flatMap((row) =>
      row.documents.map((doc) => Number(/^p(\d+)/.exec(decodeChars(doc.inputIds))![1])),
    ),
  );
}

function steps(l: SftDataLoader, count: number): SftStep[] {
  return Array.from({ length: count }, () => l.next());
}

test('a step is batch_size rows in micro-batches of micro_batch_size rows', async () => {
  const l = await loader({ name: dataset(20), batch_size: 6, micro_batch_size: 2, seq_len: 16, shuffle: false });
  const step = l.next();
  assert.equal(step.step, 1);
  assert.equal(step.epoch, 0);
  assert.equal(step.microBatches.length, 3);
  for (const batch of step.microBatches) {
    assert.equal(batch.rows, 2);
    assert.equal(batch.seqLen, 16);
    assert.equal(batch.inputIds.length, 32);
    unpackBatch(batch);
  }
  // Each sample "<bos><user>p0<end><assistant>c0<end>" has 9 tokens: one per 16-token row.
  assert.deepEqual(promptIds(step), [0, 1, 2, 3, 4, 5]);
  assert.equal(step.stats.samples, 6);
  assert.equal(step.stats.tokens, 54);
  assert.equal(step.stats.paddingTokens, 6 * 16 - 54);
  assert.equal(step.stats.lossTokens, 6 * 3); // "c0" and the end token, predicted from the token before each
  assert.deepEqual(step.stats.sources, { train: { samples: 6, tokens: 54 } });
  assert.equal(l.next().step, 2);

  await assert.rejects(
    loader({ name: dataset(2), batch_size: 6, micro_batch_size: 4 }),
    /data.batch_size \(6\) must be divisible by data.micro_batch_size \(4\)/,
  );
});

test('cat packs several conversations per row; the loss mask covers exactly the assistant tokens', async () => {
  const dir = tempDir();
  const rows = [
    {
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'yo' },
        { role: 'user', content: 'again' },
        { role: 'assistant', content: 'ok' },
      ],
    },
    promptCompletionRow('x', 3),
    {
      prompt: 'tool time',
      completion: [
        { role: 'tool', content: 'out' },
        { role: 'assistant', content: 'done' },
      ],
    },
  ];
  writeJsonl(dir, 'train.jsonl', rows);
  for (const [lossMask, trainedRoles] of [
    [{}, ['assistant']],
    [{ user: true, tool: true }, ['user', 'assistant', 'tool']],
  ] as const) {
    const l = await loader({ name: dir, batch_size: 1, seq_len: 96, shuffle: false, loss_mask: lossMask });
    const [row] = unpackBatch(l.next().microBatches[0]!);
    assert.ok(row!.documents.length >= 3, 'the three conversations (and more of the next epoch) share one row');
    row!.documents.forEach((doc) => {
      // Which role each token belongs to, from the role tokens of the character template.
      let role = '';
      const roles = doc.inputIds.map((id) => {
        const roleToken = Object.entries(ROLE_TOKEN).find(([, token]) => token === id);
        if (roleToken) {
          role = roleToken[0];
          return ''; // role tokens are not trained
        }
        return role;
      });
      const trainedTargets = doc.inputIds.map((_, t) =>
        t + 1 < roles.length && (trainedRoles as readonly string[]).includes(roles[t + 1]!) ? 1 : 0,
      );
      assert.deepEqual(doc.lossMask, trainedTargets);
      assert.equal(doc.inputIds.at(-1), END);
    });
  }
});

test('long samples are truncated, untrainable ones dropped and counted', async () => {
  const dir = tempDir();
  writeJsonl(dir, 'train.jsonl', [
    promptCompletionRow(0, 40), // 49 tokens > seq_len 24: truncated
    { prompt: 'p1', completion: [] }, // nothing to train: dropped
    { prompt: 'p2 has a very long prompt that fills the whole window', completion: 'c' }, // trained part cut off: dropped
    promptCompletionRow(3),
  ]);
  const l = await loader({ name: dir, batch_size: 2, seq_len: 24, shuffle: false });
  const step = l.next();
  assert.deepEqual(promptIds(step), [0, 3]);
  assert.equal(step.stats.truncatedSamples, 1);
  assert.equal(step.stats.droppedSamples, 2);
  const [first] = unpackBatch(step.microBatches[0]!);
  assert.equal(first!.documents[0]!.inputIds.length, 24);
  assert.equal(first!.padding, 0);

  const none = await loader({ name: dataset(3), batch_size: 1, loss_mask: { assistant: false } });
  assert.throws(() => none.next(), /no sample of epoch 0 has a trained token \(check data.loss_mask/);
  await assert.rejects(
    createSftDataLoader(dataConfig({ type: 'sft', name: dataset(1) })),
    /sft data needs a tokenizer/,
  );
  const failing = await loader(
    { name: dataset(3), batch_size: 1, seq_len: 32, shuffle: false },
    {
      tokenizer: (messages, mask) => {
        if (messages[0]!.content === 'p1') throw new Error('boom');
        return charTokenizer(messages, mask);
      },
    },
  );
  assert.throws(() => failing.next(), /^Error: train\.jsonl line 2: cannot tokenize the conversation: boom$/);
});

test('shuffling: every epoch visits every row once, in a seeded order that changes per epoch', async () => {
  const name = dataset(10);
  const config = { name, batch_size: 5, micro_batch_size: 5, seq_len: 16, pack_function: 'stack', seed: 3 };
  const l = await loader(config);
  const all = steps(l, 6);
  assert.deepEqual(
    all.map((s) => s.epoch),
    [0, 0, 1, 1, 2, 2],
  );
  const epochs = [0, 1, 2].map((e) => [...promptIds(all[2 * e]!), ...promptIds(all[2 * e + 1]!)]);
  for (const order of epochs)
    assert.deepEqual(
      [...order].sort((a, b) => a - b),
      [...Array(10).keys()],
    );
  assert.notDeepEqual(epochs[0], epochs[1]);
  assert.notDeepEqual(epochs[0], [...Array(10).keys()]);

  const again = steps(await loader(config), 6);
  assert.deepEqual(again, all, 'the same seed gives the same steps');
  const otherSeed = steps(await loader({ ...config, seed: 4 }), 2);
  assert.notDeepEqual(otherSeed.flatMap(promptIds), epochs[0]);
  const unshuffled = steps(await loader({ ...config, shuffle: false }), 4);
  assert.deepEqual(unshuffled.flatMap(promptIds), [...Array(10).keys(), ...Array(10).keys()]);
});

test('a step continues across the epoch boundary and reports the epoch it started in', async () => {
  // 7 rows of 9 tokens, 3 per 32-token row: the third row of step 1 holds rows 6 (epoch 0) and 0, 1 of epoch 1.
  const l = await loader({ name: dataset(7), batch_size: 3, seq_len: 32, shuffle: false });
  const first = l.next();
  assert.equal(first.epoch, 0);
  assert.deepEqual(promptIds(first), [0, 1, 2, 3, 4, 5, 6, 0, 1]);
  const second = l.next();
  assert.equal(second.epoch, 1);
  assert.deepEqual(promptIds(second), [2, 3, 4, 5, 6, 0, 1, 2, 3]);
});

test('maxEpochs: the last step packs what is left, then the data has ended', async () => {
  const config = { name: dataset(7), batch_size: 2, micro_batch_size: 2, seq_len: 32, shuffle: false };
  const l = await loader(config, { maxEpochs: 1 });
  const first = l.next();
  assert.deepEqual(promptIds(first), [0, 1, 2, 3, 4, 5]);
  const last = l.next();
  assert.equal(last.step, 2);
  assert.deepEqual(promptIds(last), [6]);
  assert.equal(last.microBatches.length, 1);
  assert.equal(last.microBatches[0]!.rows, 1, 'one row left, padded');
  assert.equal(last.stats.paddingTokens, 32 - 9);
  const ended = l.next();
  assert.deepEqual(ended.microBatches, []);
  assert.equal(ended.step, 2);
  assert.equal(ended.stats.samples, 0);
  const resumed = await loader(config, { maxEpochs: 1, state: l.state() });
  assert.deepEqual(resumed.next().microBatches, []);
  // 14 samples, 3 per row across the epoch boundary: 5 rows in steps of 2.
  assert.deepEqual(
    steps(await loader(config, { maxEpochs: 2 }), 4).map((s) => s.microBatches[0]?.rows ?? 0),
    [2, 2, 1, 0],
  );
  await assert.rejects(loader(config, { maxEpochs: 0 }), /maxEpochs must be at least 1, got 0/);
});

test('resume: a loader built from state() delivers exactly the steps that would have come', async () => {
  const dir = tempDir();
  // Uneven lengths so rows close on samples that do not fit (the pending sample must be redrawn on resume).
  writeJsonl(
    dir,
    'train.jsonl',
    Array.from({ length: 13 }, (_, i) =>
      i % 5 === 4 ? { prompt: `p${i}`, completion: [] } : promptCompletionRow(i, (i * 7) % 11),
    ),
  );
  for (const packFunction of ['cat', 'stack']) {
    const config = {
      name: dir,
      batch_size: 4,
      micro_batch_size: 2,
      seq_len: 40,
      pack_function: packFunction,
      seed: 11,
    };
    const reference = steps(await loader(config), 12);
    for (const stopAfter of [1, 3, 5, 8]) {
      const first = await loader(config);
      steps(first, stopAfter);
      const saved = JSON.parse(JSON.stringify(first.state()));
      assert.deepEqual(Object.keys(saved).sort(), ['epoch', 'kind', 'position', 'sourceSizes', 'step', 'version']);
      const resumed = await loader(config, { state: saved });
      assert.deepEqual(
        steps(resumed, 12 - stopAfter),
        reference.slice(stopAfter),
        `${packFunction} after ${stopAfter}`,
      );
    }
  }

  const l = await loader({ name: dir });
  const state = l.state();
  await assert.rejects(
    loader({ name: dataset(5) }, { state }),
    /the dataset changed since the data loader state was saved \(rows per source: \[13\] then, \[5\] now\)/,
  );
  await assert.rejects(
    createSftDataLoader(dataConfig({ type: 'fake' }), { vocabSize: 10, state }),
    /state is for sft data, but the config has fake data/,
  );
});

test('interleaving: concatenation without probabilities, interleave_datasets semantics with them', () => {
  const concat = epochOrder(
    [3, 2],
    { shuffle: false, seed: 0, probabilities: null, stoppingStrategy: 'all_exhausted' },
    0,
  );
  assert.deepEqual([...concat.source], [0, 0, 0, 1, 1]);
  assert.deepEqual([...concat.index], [0, 1, 2, 0, 1]);

  const sizes = [1000, 3000];
  const count = (source: Int32Array, s: number) => source.filter((x) => x === s).length;
  const first = epochOrder(
    sizes,
    { shuffle: true, seed: 1, probabilities: [0.75, 0.25], stoppingStrategy: 'first_exhausted' },
    0,
  );
  const fromFirst = count(first.source, 0);
  assert.equal(fromFirst, 1000, 'the 75% source runs out first, and that ends the epoch');
  assert.equal(first.source[first.source.length - 1], 0, 'the last draw exhausted it');
  assert.ok(Math.abs(fromFirst / first.source.length - 0.75) < 0.04, `share ${fromFirst / first.source.length}`);
  assert.equal(new Set(first.index.filter((_, i) => first.source[i] === 0)).size, 1000, 'no repeats before exhaustion');

  const all = epochOrder(
    sizes,
    { shuffle: true, seed: 1, probabilities: [0.75, 0.25], stoppingStrategy: 'all_exhausted' },
    0,
  );
  assert.equal(count(all.source, 1), 3000, 'ends when the last source gives its last row');
  assert.ok(count(all.source, 0) > 1000, 'the first source starts over until then');
  assert.equal(new Set(all.index.filter((_, i) => all.source[i] === 1)).size, 3000);

  // A source that is never drawn does not hold up "all_exhausted".
  const zero = epochOrder(
    [5, 5],
    { shuffle: false, seed: 0, probabilities: [1, 0], stoppingStrategy: 'all_exhausted' },
    0,
  );
  assert.deepEqual([...zero.source], [0, 0, 0, 0, 0]);
});

test('interleaving through the loader: subsets, probabilities and per-source stats', async () => {
  const dir = tempDir();
  writeJsonl(
    dir,
    'small/train.jsonl',
    Array.from({ length: 4 }, (_, i) => promptCompletionRow(i)),
  );
  writeParquet(dir, 'large/data/train-00000-of-00001.parquet', {
    prompt: Array.from({ length: 40 }, (_, i) => `p${100 + i}`),
    completion: Array.from({ length: 40 }, () => 'c'),
  });
  const config = {
    name: dir,
    subsets: ['small', 'large'],
    probabilities: [0.5, 0.5],
    stopping_strategy: 'first_exhausted',
    batch_size: 4,
    micro_batch_size: 4,
    seq_len: 16,
    pack_function: 'stack',
  };
  const l = await loader(config);
  assert.deepEqual(
    l.sources.map((s) => [s.label, s.rows]),
    [
      ['small/train', 4],
      ['large/train', 40],
    ],
  );
  const epochSteps: SftStep[] = [];
  while (epochSteps.length === 0 || epochSteps.at(-1)!.epoch === 0) epochSteps.push(l.next());
  const epoch0 = epochSteps.slice(0, -1).flatMap(promptIds);
  const small = epoch0.filter((id) => id < 100);
  assert.ok(small.length >= 4, 'epoch 0 holds every small row (the epoch ends when small runs out)');
  assert.deepEqual([...new Set(small)].sort(), [0, 1, 2, 3]);
  const stats = epochSteps[0]!.stats.sources;
  assert.equal((stats['small/train']?.samples ?? 0) + (stats['large/train']?.samples ?? 0), 4);

  await assert.rejects(loader({ ...config, probabilities: [1] }), /got 1 probabilities for 2 datasets to mix/);
});

test('fake data: fixed/variable lengths, increasing/random ids, all trained, resumable', async () => {
  const fake = (data: Record<string, unknown>, options: SftDataLoaderOptions = {}) =>
    createSftDataLoader(dataConfig({ type: 'fake', batch_size: 4, micro_batch_size: 2, seq_len: 12, ...data }), {
      vocabSize: 10,
      ...options,
    });

  const fixed = (await fake({})).next();
  assert.equal(fixed.epoch, 0);
  for (const batch of fixed.microBatches) {
    for (const row of unpackBatch(batch)) {
      assert.equal(row.documents.length, 1);
      assert.deepEqual(row.documents[0]!.inputIds, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1]);
      assert.deepEqual(row.documents[0]!.lossMask, shiftedMask(Array(12).fill(1)));
    }
  }
  assert.equal(fixed.stats.lossTokens, 4 * 11);
  assert.deepEqual(fixed.stats.sources, { fake: { samples: 4, tokens: 48 } });

  const random = await fake({ length: 'variable', input_ids: 'random' });
  const randomSteps = steps(random, 3);
  const documents = randomSteps.flatMap((s) =>
    s.microBatches.flatMap((b) => unpackBatch(b).flatMap((r) => r.documents)),
  );
  const lengths = new Set(documents.map((d) => d.inputIds.length));
  assert.ok(lengths.size > 3, 'variable lengths');
  assert.ok([...lengths].every((n) => n >= 2 && n <= 12));
  assert.ok(documents.every((d) => d.inputIds.every((id) => id >= 0 && id < 10)));
  assert.ok(documents.length > 12, 'short samples share rows');
  assert.deepEqual(steps(await fake({ length: 'variable', input_ids: 'random' }), 3), randomSteps, 'seeded');

  const resumed = await fake(
    { length: 'variable', input_ids: 'random' },
    { state: JSON.parse(JSON.stringify(random.state())) },
  );
  const continued = random.next();
  assert.deepEqual(resumed.next(), continued);

  await assert.rejects(createSftDataLoader(dataConfig({ type: 'fake' })), /fake data needs the vocabulary size/);
});
