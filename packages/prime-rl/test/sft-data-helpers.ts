// Test support for the SFT data tests: temp dataset files and a tiny deterministic chat tokenizer.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parquetWriteFile } from 'hyparquet-writer';
import { sftSchema } from '../src/config/sft.js';
import type { SftDataConfig } from '../src/sft/data/index.js';
import type { ChatMessage, ConversationTokenizer, MicroBatch, RoleMask } from '../src/sft/data/index.js';

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'sft-data-'));
}

/** Writes `rows` as JSON Lines to dir/rel (creating folders). */
export function writeJsonl(dir: string, rel: string, rows: readonly unknown[]): string {
  const file = join(dir, rel);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return file;
}

/** Writes columns (name → values, one per row) as a Parquet file to dir/rel. */
export function writeParquet(dir: string, rel: string, columns: Record<string, unknown[]>): string {
  const file = join(dir, rel);
  mkdirSync(dirname(file), { recursive: true });
  parquetWriteFile({
    filename: file,
    columnData: Object.entries(columns).map(([name, data]) => ({ name, data })),
  });
  return file;
}

/** A prompt/completion row whose texts identify it (`p<id>` / `c<id>`). */
export function promptCompletionRow(id: number | string, completionLength = 0): Record<string, unknown> {
  return {
    prompt: [{ role: 'user', content: `p${id}` }],
    completion: [{ role: 'assistant', content: `c${id}` + 'x'.repeat(completionLength) }],
  };
}

/** The full `data` config section as the schema fills it in. */
export function dataConfig(data: Record<string, unknown>): SftDataConfig {
  return sftSchema.parse({ data }).data;
}

// Character-level chat "template": BOS, then per message a role token, one token per character of the
// content and an end token. The role token is never trained; content and end token follow the role mask.
export const BOS = 1;
export const END = 2;
export const ROLE_TOKEN: Record<ChatMessage['role'], number> = { system: 3, user: 4, assistant: 5, tool: 6 };
const FIRST_CHAR_ID = 10;

export const charTokenizer: ConversationTokenizer = (messages: ChatMessage[], roleMask: RoleMask) => {
  const inputIds = [BOS];
  const lossMask = [false];
  for (const message of messages) {
    inputIds.push(ROLE_TOKEN[message.role]);
    lossMask.push(false);
    for (const ch of message.content ?? '') {
      inputIds.push(FIRST_CHAR_ID + ch.codePointAt(0)!);
      lossMask.push(roleMask[message.role]);
    }
    inputIds.push(END);
    lossMask.push(roleMask[message.role]);
  }
  return { inputIds, lossMask };
};

/** Text of the content tokens in `ids` (structure tokens are skipped). */
export function decodeChars(ids: ArrayLike<number>): string {
  let text = '';
  for (let i = 0; i < ids.length; i++)
    if (ids[i]! >= FIRST_CHAR_ID) text += String.fromCodePoint(ids[i]! - FIRST_CHAR_ID);
  return text;
}

/** Splits row r of a micro-batch array. */
export function rowOf<T extends Int32Array | Float32Array>(array: T, r: number, seqLen: number): T {
  return array.subarray(r * seqLen, (r + 1) * seqLen) as T;
}

export interface UnpackedRow {
  /** Each document's tokens and, per token, the loss mask of its target. */
  documents: Array<{ inputIds: number[]; lossMask: number[] }>;
  padding: number;
}

/**
 * Splits every row of a micro-batch back into its documents, asserting the packing invariants on the way:
 * segments count up from 0, positions restart per document, targets are the next token of the same
 * document, a document's last token and padding have target 0 and no loss, and `tokens`/`lossTokens` add up.
 */
export function unpackBatch(batch: MicroBatch, padTokenId = 0): UnpackedRow[] {
  const { rows, seqLen } = batch;
  for (const array of [batch.inputIds, batch.targets, batch.lossMask, batch.positions, batch.segments]) {
    assert.equal(array.length, rows * seqLen);
  }
  const unpacked: UnpackedRow[] = [];
  let tokens = 0;
  let lossTokens = 0;
  for (let r = 0; r < rows; r++) {
    const ids = rowOf(batch.inputIds, r, seqLen);
    const targets = rowOf(batch.targets, r, seqLen);
    const mask = rowOf(batch.lossMask, r, seqLen);
    const positions = rowOf(batch.positions, r, seqLen);
    const segments = rowOf(batch.segments, r, seqLen);
    const runs: Array<[number, number]> = [];
    for (let t = 0; t < seqLen; t++) {
      if (t === 0 || segments[t] !== segments[t - 1]) {
        assert.equal(segments[t], runs.length, `row ${r} token ${t}: segment ids count up from 0`);
        runs.push([t, t + 1]);
      } else runs[runs.length - 1]![1] = t + 1;
      const [start] = runs[runs.length - 1]!;
      assert.equal(positions[t], t - start, `row ${r} token ${t}: positions restart per segment`);
      assert.ok(mask[t] === 0 || mask[t] === 1, 'the loss mask is 0/1');
      lossTokens += mask[t]!;
    }
    const row: UnpackedRow = { documents: [], padding: 0 };
    // The last run (not the only one) is padding when it is pad tokens with nothing to learn; the tests'
    // documents that could look like that (all pad ids, nothing trained) do not occur.
    runs.forEach(([start, end], i) => {
      const isPadding =
        i === runs.length - 1 &&
        i > 0 &&
        ids.subarray(start, end).every((id) => id === padTokenId) &&
        mask.subarray(start, end).every((m) => m === 0) &&
        targets.subarray(start, end).every((id) => id === 0);
      for (let t = start; t < end; t++) {
        const last = t === end - 1 || isPadding;
        assert.equal(targets[t], last ? 0 : ids[t + 1], `row ${r} token ${t}: target`);
        if (last) assert.equal(mask[t], 0, `row ${r} token ${t}: no loss without a target`);
      }
      if (isPadding) row.padding = end - start;
      else {
        row.documents.push({ inputIds: [...ids.subarray(start, end)], lossMask: [...mask.subarray(start, end)] });
        tokens += end - start;
      }
    });
    unpacked.push(row);
  }
  assert.equal(batch.tokens, tokens, 'tokens counts the non-padding tokens');
  assert.equal(batch.lossTokens, lossTokens, 'lossTokens counts the trained positions');
  return unpacked;
}

/** The loss mask a packed document must carry: the sample's mask shifted onto the token before. */
export function shiftedMask(lossMask: ArrayLike<number | boolean>): number[] {
  const shifted: number[] = [];
  for (let i = 0; i < lossMask.length; i++) shifted.push(i + 1 < lossMask.length && lossMask[i + 1] ? 1 : 0);
  return shifted;
}
