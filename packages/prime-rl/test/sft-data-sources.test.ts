// SFT data sources and rows: JSONL/Parquet files in both row shapes, Hugging Face directory layouts,
// and errors that name the file, line/row and field.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { SftDataset, locateSources, rowToConversation } from '../src/sft/data/index.js';
import type { MixOptions } from '../src/sft/data/index.js';
import { promptCompletionRow, tempDir, writeJsonl, writeParquet } from './sft-data-helpers.js';

const noMix: MixOptions = { shuffle: false, seed: 0, probabilities: null, stoppingStrategy: 'all_exhausted' };

async function load(name: string, subsets: string[] | null = null, splits: string[] | null = null) {
  return SftDataset.load({ name, subsets, splits }, noMix);
}

async function loadError(name: string, subsets: string[] | null = null, splits: string[] | null = null) {
  try {
    await load(name, subsets, splits);
  } catch (error) {
    return (error as Error).message;
  }
  assert.fail(`loading ${name} should fail`);
}

/** The first message content of every row of the loaded dataset, per source. */
function firstContents(dataset: SftDataset): Record<string, string[]> {
  return Object.fromEntries(
    dataset.sources.map((s) => [s.label, s.conversations.map((c) => c.messages[0]!.content ?? '')]),
  );
}

test('jsonl: prompt/completion lists, plain strings and messages rows; extra columns ignored', async () => {
  const dir = tempDir();
  const file = writeJsonl(dir, 'rows.jsonl', [
    { ...promptCompletionRow(0), id: 7, score: 0.5 },
    { prompt: 'plain prompt', completion: 'plain answer' },
    {
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'u' },
        { role: 'assistant', content: null, tool_calls: [{ function: { name: 'f', arguments: '{}' } }] },
        { role: 'tool', content: 'result', tool_call_id: 'call_1' },
        { role: 'assistant', content: 'a', reasoning_content: 'think' },
      ],
      prompt: 'ignored: messages wins',
      completion: 'ignored',
    },
  ]);
  const dataset = await load(file);
  assert.equal(dataset.sources.length, 1);
  const [source] = dataset.sources;
  assert.equal(source!.label, 'train');
  const [first, second, third] = source!.conversations;
  assert.deepEqual(first, {
    messages: [
      { role: 'user', content: 'p0' },
      { role: 'assistant', content: 'c0' },
    ],
  });
  assert.deepEqual(second!.messages, [
    { role: 'user', content: 'plain prompt' },
    { role: 'assistant', content: 'plain answer' },
  ]);
  assert.deepEqual(
    third!.messages.map((m) => m.role),
    ['system', 'user', 'assistant', 'tool', 'assistant'],
  );
  assert.deepEqual(third!.messages[2]!.tool_calls, [{ type: 'function', function: { name: 'f', arguments: '{}' } }]);
  assert.equal(third!.messages[3]!.tool_call_id, 'call_1');
  assert.equal(third!.messages[4]!.reasoning_content, 'think');
  assert.equal(source!.locate(2), 'rows.jsonl line 3');
});

test('parquet: nested message lists, JSON-string columns, and tools', async () => {
  const dir = tempDir();
  const nested = writeParquet(dir, 'nested.parquet', {
    prompt: [[{ role: 'user', content: 'p0' }], [{ role: 'system', content: 's1' }]],
    completion: [[{ role: 'assistant', content: 'c0' }], [{ role: 'assistant', content: 'c1' }]],
    extra: ['a', 'b'],
  });
  const loaded = await load(nested);
  assert.deepEqual(firstContents(loaded), { train: ['p0', 's1'] });
  assert.deepEqual(loaded.sources[0]!.conversations[1]!.messages[1], { role: 'assistant', content: 'c1' });

  const jsonStrings = writeParquet(dir, 'json.parquet', {
    messages: [
      JSON.stringify([
        { role: 'user', content: 'q' },
        { role: 'assistant', content: 'a' },
      ]),
    ],
    tools: [JSON.stringify([{ name: 'lookup', description: 'd', parameters: '{"type":"object"}' }])],
  });
  const [conversation] = (await load(jsonStrings)).sources[0]!.conversations;
  assert.deepEqual(conversation, {
    messages: [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: 'a' },
    ],
    tools: [{ type: 'function', function: { name: 'lookup', description: 'd', parameters: { type: 'object' } } }],
  });
});

test('a plain-text prompt that looks like JSON stays text', () => {
  const conversation = rowToConversation({ prompt: '[1, 2, 3]', completion: '["x"]' }, 'here');
  assert.deepEqual(conversation.messages, [
    { role: 'user', content: '[1, 2, 3]' },
    { role: 'assistant', content: '["x"]' },
  ]);
});

test('hf layout: splits as files, sharded parquet under data/, split folders, subsets', async () => {
  const dir = tempDir();
  writeJsonl(dir, 'train.jsonl', [promptCompletionRow('t0'), promptCompletionRow('t1')]);
  writeJsonl(dir, 'test.jsonl', [promptCompletionRow('e0')]);
  writeJsonl(dir, 'notes.jsonl', [promptCompletionRow('never')]);
  writeParquet(dir, 'data/validation-00001-of-00002.parquet', { prompt: ['v1'], completion: ['x'] });
  writeParquet(dir, 'data/validation-00000-of-00002.parquet', { prompt: ['v0'], completion: ['x'] });
  writeParquet(dir, 'extra/0000.parquet', { prompt: ['x0'], completion: ['x'] });
  const root = await load(dir, null, ['train', 'test', 'validation', 'extra']);
  assert.deepEqual(firstContents(root), {
    train: ['pt0', 'pt1'],
    test: ['pe0'],
    validation: ['v0', 'v1'],
    extra: ['x0'],
  });
  assert.deepEqual(await load(dir).then(firstContents), { train: ['pt0', 'pt1'] });

  const subsets = tempDir();
  writeJsonl(subsets, 'math/train.jsonl', [promptCompletionRow('m0')]);
  writeParquet(subsets, 'code/train-00000-of-00001.parquet', { prompt: ['k0'], completion: ['x'] });
  writeParquet(subsets, 'code/data/test-00000-of-00001.parquet', { prompt: ['k-test'], completion: ['x'] });
  assert.deepEqual(await load(subsets, ['math', 'code']).then(firstContents), {
    'math/train': ['pm0'],
    'code/train': ['k0'],
  });
  assert.deepEqual(await load(subsets, ['code', 'math'], ['test', 'train']).then(firstContents), {
    'code/test': ['k-test'],
    'math/train': ['pm0'],
  });
  const located = await locateSources(subsets, ['code'], null);
  assert.deepEqual(located, [
    { label: 'code/train', files: [join(subsets, 'code/train-00000-of-00001.parquet')], root: subsets },
  ]);
});

test('a relative name resolves against cwd; a hub id goes through resolveDatasetDir', async () => {
  const dir = tempDir();
  writeJsonl(dir, 'my-data/train.jsonl', [promptCompletionRow(1)]);
  const relative = await SftDataset.load({ name: 'my-data', subsets: null, splits: null }, noMix, { cwd: dir });
  assert.equal(relative.sizes[0], 1);

  const requested: string[] = [];
  const hub = await SftDataset.load({ name: 'org/hub-dataset', subsets: null, splits: null }, noMix, {
    cwd: dir,
    resolveDatasetDir: async (name) => {
      requested.push(name);
      return join(dir, 'my-data');
    },
  });
  assert.deepEqual(requested, ['org/hub-dataset']);
  assert.deepEqual(hub.sizes, [1]);
});

test('errors: unknown names, missing paths, splits and subsets', async () => {
  assert.equal(
    await loadError('PrimeIntellect/Does-Not-Exist-Locally'),
    "dataset 'PrimeIntellect/Does-Not-Exist-Locally' is not a local file or directory, and hub download is not available",
  );
  assert.match(await loadError('/nonexistent/data.jsonl'), /dataset path '\/nonexistent\/data.jsonl' does not exist/);

  const dir = tempDir();
  writeJsonl(dir, 'math/train.jsonl', [promptCompletionRow(0)]);
  assert.match(await loadError(dir), /no files for split 'train' in .*; the dataset has subset directories math/);
  assert.match(await loadError(dir, ['math'], ['test']), /no files for split 'test' in '.*math'/);
  assert.match(await loadError(dir, ['physics']), /subset 'physics' not found: .* \(subsets there: math\)/);

  const csv = join(dir, 'rows.csv');
  writeFileSync(csv, 'a,b\n');
  assert.match(await loadError(csv), /unsupported type '\.csv'/);
  const file = join(dir, 'math/train.jsonl');
  assert.match(await loadError(file, ['math']), /single file: data.subsets only applies to a dataset directory/);
  assert.match(await loadError(file, null, ['test']), /single file, which only has the "train" split/);
});

test('errors name the file, the line or row and the field', async () => {
  const dir = tempDir();
  const rows = [promptCompletionRow(0), promptCompletionRow(1)];
  writeFileSync(
    join(dir, 'train.jsonl'),
    [JSON.stringify(rows[0]), '', JSON.stringify({ ...rows[1], completion: [{ role: 'bot', content: 'x' }] })].join(
      '\n',
    ),
  );
  assert.equal(
    await loadError(dir),
    'train.jsonl line 3: completion[0].role must be one of system, user, assistant, tool, got "bot"',
  );

  writeFileSync(join(dir, 'train.jsonl'), `${JSON.stringify(rows[0])}\n{"prompt": "x", \n`);
  assert.match(await loadError(dir), /^train\.jsonl line 2: invalid JSON \(/);

  writeJsonl(dir, 'train.jsonl', [rows[0], { prompt: 'only a prompt', id: 3 }]);
  assert.equal(
    await loadError(dir),
    "train.jsonl line 2: a row needs 'messages', or 'prompt' and 'completion' (found: prompt, id)",
  );

  writeJsonl(dir, 'train.jsonl', [{ messages: [{ role: 'user', content: 5 }] }]);
  assert.equal(await loadError(dir), 'train.jsonl line 1: messages[0].content must be a string or null, got 5');

  writeJsonl(dir, 'train.jsonl', [{ messages: 'not json' }]);
  assert.match(await loadError(dir), /^train\.jsonl line 1: messages must be a list of chat messages/);

  writeJsonl(dir, 'train.jsonl', [{ prompt: 3, completion: 'x' }]);
  assert.equal(await loadError(dir), 'train.jsonl line 1: prompt must be a string or a list of chat messages, got 3');

  writeJsonl(dir, 'train.jsonl', [{ messages: [] }]);
  assert.equal(await loadError(dir), 'train.jsonl line 1: messages must not be empty');

  const parquetDir = tempDir();
  writeParquet(parquetDir, 'data/train-00000-of-00001.parquet', {
    messages: [JSON.stringify([{ role: 'user', content: 'ok' }]), JSON.stringify([{ role: 'robot', content: 'x' }])],
  });
  assert.equal(
    await loadError(parquetDir),
    'data/train-00000-of-00001.parquet row 1: messages[0].role must be one of system, user, assistant, tool, got "robot"',
  );

  writeParquet(parquetDir, 'data/train-00000-of-00001.parquet', { text: ['a'], label: [1] });
  assert.equal(
    await loadError(parquetDir),
    "data/train-00000-of-00001.parquet: needs a 'messages' column or 'prompt' and 'completion' columns (columns: text, label)",
  );

  writeFileSync(join(parquetDir, 'data/train-00000-of-00001.parquet'), 'not parquet at all');
  assert.match(await loadError(parquetDir), /^data\/train-00000-of-00001\.parquet: cannot read Parquet file: /);
});
