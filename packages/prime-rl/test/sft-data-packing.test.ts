// Packing token samples into seq_len rows: cat and stack, targets, positions, segments, loss mask,
// truncation and dropping of samples without trained tokens, and the micro-batch layout.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Generator } from '@prime-rl/tensor';
import { RowPacker, collateRows, packRow, packSamples, prepareSample } from '../src/sft/data/index.js';
import type { TokenSample } from '../src/sft/data/index.js';
import { shiftedMask, unpackBatch } from './sft-data-helpers.js';

function sample(ids: number[], mask: number[] = ids.map(() => 1)): TokenSample {
  return { inputIds: Int32Array.from(ids), lossMask: Uint8Array.from(mask) };
}

test('packRow: targets shift within a document, loss mask of the target, padding its own segment', () => {
  const row = packRow([sample([11, 12, 13], [0, 1, 1]), sample([21, 22], [0, 1])], 8, 99);
  assert.deepEqual([...row.inputIds], [11, 12, 13, 21, 22, 99, 99, 99]);
  assert.deepEqual([...row.targets], [12, 13, 0, 22, 0, 0, 0, 0]);
  assert.deepEqual([...row.lossMask], [1, 1, 0, 1, 0, 0, 0, 0]);
  assert.deepEqual([...row.positions], [0, 1, 2, 0, 1, 0, 1, 2]);
  assert.deepEqual([...row.segments], [0, 0, 0, 1, 1, 2, 2, 2]);
  assert.equal(row.tokens, 5);
  assert.equal(row.lossTokens, 3);
  assert.equal(row.documents, 2);
});

test('cat: samples fill rows in order; one that does not fit starts the next row', () => {
  const samples = [sample([1, 2, 3]), sample([4, 5, 6, 7]), sample([8, 9]), sample([10, 11, 12, 13, 14, 15])];
  const rows = packSamples(samples, 8, 'cat');
  assert.equal(rows.length, 2);
  const unpacked = unpackBatch(collateRows(rows));
  assert.deepEqual(
    unpacked.map((r) => r.documents.map((d) => d.inputIds)),
    [
      [
        [1, 2, 3],
        [4, 5, 6, 7],
      ],
      [
        [8, 9],
        [10, 11, 12, 13, 14, 15],
      ],
    ],
  );
  assert.deepEqual(
    unpacked.map((r) => r.padding),
    [1, 0],
  );
});

test('stack: one sample per row, padded to seq_len', () => {
  const rows = packSamples([sample([1, 2]), sample([3, 4, 5]), sample([6, 7, 8, 9])], 4, 'stack');
  const unpacked = unpackBatch(collateRows(rows));
  assert.deepEqual(
    unpacked.map((r) => [r.documents.map((d) => d.inputIds), r.padding]),
    [
      [[[1, 2]], 2],
      [[[3, 4, 5]], 1],
      [[[6, 7, 8, 9]], 0],
    ],
  );
});

test('packing invariants hold for random samples (cat and stack)', () => {
  const generator = new Generator(7);
  for (const packFunction of ['cat', 'stack'] as const) {
    for (let trial = 0; trial < 20; trial++) {
      const seqLen = 1 + generator.int(40);
      const samples = Array.from({ length: 1 + generator.int(30) }, () => {
        const length = 1 + generator.int(seqLen);
        const ids = Array.from({ length }, () => 1 + generator.int(1000));
        return sample(
          ids,
          ids.map(() => generator.int(2)),
        );
      });
      const rows = packSamples(samples, seqLen, packFunction);
      const unpacked = unpackBatch(collateRows(rows));
      const documents = unpacked.flatMap((r) => r.documents);
      assert.deepEqual(
        documents.map((d) => d.inputIds),
        samples.map((s) => [...s.inputIds]),
        'every sample appears once, in order, unsplit',
      );
      assert.deepEqual(
        documents.map((d) => d.lossMask),
        samples.map((s) => shiftedMask(s.lossMask)),
        'position t is trained when token t+1 is',
      );
      if (packFunction === 'stack') assert.equal(rows.length, samples.length);
      // cat never leaves room for the next sample at the end of a row
      if (packFunction === 'cat') {
        unpacked.slice(0, -1).forEach((row, r) => {
          const next = unpacked[r + 1]!.documents[0]!;
          assert.ok(row.padding < next.inputIds.length, 'a row is closed only when the next sample does not fit');
        });
      }
    }
  }
});

test('RowPacker refuses what does not fit', () => {
  const packer = new RowPacker(4, 'cat');
  assert.throws(() => packer.add(sample([1, 2, 3, 4, 5])), /exceeds seq_len 4/);
  packer.add(sample([1, 2, 3]));
  assert.equal(packer.fits(sample([4, 5])), false);
  assert.throws(() => packer.add(sample([4, 5])), /does not fit/);
  assert.equal(packer.fits(sample([4])), true);
  packer.add(sample([4]));
  assert.equal(packer.isFull, true);
});

test('prepareSample truncates to seq_len and drops samples without a trained target', () => {
  const long = prepareSample({ inputIds: [1, 2, 3, 4, 5, 6], lossMask: [false, true, true, true, true, true] }, 4, 'x');
  assert.equal(long.truncated, true);
  assert.deepEqual([...long.sample!.inputIds], [1, 2, 3, 4]);
  assert.deepEqual([...long.sample!.lossMask], [0, 1, 1, 1]);

  const short = prepareSample({ inputIds: [1, 2], lossMask: [false, true] }, 4, 'x');
  assert.equal(short.truncated, false);
  assert.deepEqual([...short.sample!.inputIds], [1, 2]);

  // Only the first token (never a target) or nothing trained: dropped.
  assert.equal(prepareSample({ inputIds: [1, 2, 3], lossMask: [true, false, false] }, 4, 'x').sample, null);
  assert.equal(prepareSample({ inputIds: [1, 2, 3], lossMask: [false, false, false] }, 4, 'x').sample, null);
  // Trained tokens only beyond the window: dropped, and counted as truncated.
  const cut = prepareSample({ inputIds: [1, 2, 3, 4, 5], lossMask: [false, false, false, true, true] }, 3, 'x');
  assert.deepEqual(cut, { sample: null, truncated: true });

  assert.throws(
    () => prepareSample({ inputIds: [1, 2], lossMask: [true] }, 4, 'train.jsonl line 3'),
    /^Error: train\.jsonl line 3: the tokenizer gave 2 token ids but 1 loss-mask entries$/,
  );
});

test('collateRows lays rows out [rows, seqLen] row-major', () => {
  const rows = [packRow([sample([1, 2])], 3), packRow([sample([3, 4, 5])], 3)];
  const batch = collateRows(rows);
  assert.equal(batch.rows, 2);
  assert.equal(batch.seqLen, 3);
  assert.deepEqual([...batch.inputIds], [1, 2, 0, 3, 4, 5]);
  assert.deepEqual([...batch.targets], [2, 0, 0, 4, 5, 0]);
  assert.deepEqual([...batch.lossMask], [1, 0, 0, 1, 1, 0]);
  assert.deepEqual([...batch.positions], [0, 1, 0, 0, 1, 2]);
  assert.deepEqual([...batch.segments], [0, 0, 1, 0, 0, 0]);
  assert.equal(batch.tokens, 5);
  assert.equal(batch.lossTokens, 3);
});
