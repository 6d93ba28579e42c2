// Packing token samples into rows of exactly seq_len tokens (spec rl.md §7.7, `CatDataset`).
//
// - `cat`: samples are placed into the current row in order while they fit; one that does not fit starts
//   the next row (samples are never split; longer ones were truncated to seq_len before).
// - `stack`: one sample per row.
// Every sample is its own document: positions restart at 0 and it gets the next segment id of the row.
// The unused tail is padding: pad token, a segment of its own, positions 0..pad-1, no loss.
// Targets are the next token of the same document; a document's last token has target 0 and no loss.
// The loss mask of position t is the mask of its target token t+1.
import type { MicroBatch, TokenSample } from './types.js';

export type PackFunction = 'cat' | 'stack';

/** One packed row; arrays have seqLen entries. */
export interface PackedRow {
  inputIds: Int32Array;
  targets: Int32Array;
  lossMask: Float32Array;
  positions: Int32Array;
  segments: Int32Array;
  /** Non-padding tokens. */
  tokens: number;
  lossTokens: number;
  documents: number;
}

/** Collects the samples of the row being filled. */
export class RowPacker {
  private documents: TokenSample[] = [];
  private used = 0;

  constructor(
    readonly seqLen: number,
    readonly packFunction: PackFunction,
    readonly padTokenId = 0,
  ) {
    if (!Number.isInteger(seqLen) || seqLen < 1)
      throw new RangeError(`seq_len must be a positive integer, got ${seqLen}`);
  }

  get isEmpty(): boolean {
    return this.documents.length === 0;
  }

  /** No further sample can join this row. */
  get isFull(): boolean {
    return this.packFunction === 'stack' ? this.documents.length > 0 : this.used >= this.seqLen;
  }

  /** Whether `sample` can join the current row (an empty row takes any sample). */
  fits(sample: TokenSample): boolean {
    return this.isEmpty || (this.packFunction === 'cat' && this.used + sample.inputIds.length <= this.seqLen);
  }

  add(sample: TokenSample): void {
    const length = sample.inputIds.length;
    if (length === 0) throw new RangeError('cannot pack an empty sample');
    if (length > this.seqLen) throw new RangeError(`sample of ${length} tokens exceeds seq_len ${this.seqLen}`);
    if (!this.fits(sample)) throw new RangeError('sample does not fit the current row: finish the row first');
    this.documents.push(sample);
    this.used += length;
  }

  /** Materialises the current row and starts an empty one. */
  finish(): PackedRow {
    const row = packRow(this.documents, this.seqLen, this.padTokenId);
    this.documents = [];
    this.used = 0;
    return row;
  }
}

/** Packs documents (total length ≤ seqLen) into one row. */
export function packRow(documents: readonly TokenSample[], seqLen: number, padTokenId = 0): PackedRow {
  const inputIds = new Int32Array(seqLen);
  const targets = new Int32Array(seqLen);
  const lossMask = new Float32Array(seqLen);
  const positions = new Int32Array(seqLen);
  const segments = new Int32Array(seqLen);
  let at = 0;
  let lossTokens = 0;
  documents.forEach((doc, segment) => {
    const length = doc.inputIds.length;
    if (at + length > seqLen) throw new RangeError(`documents of ${at + length} tokens exceed seq_len ${seqLen}`);
    for (let i = 0; i < length; i++, at++) {
      inputIds[at] = doc.inputIds[i]!;
      positions[at] = i;
      segments[at] = segment;
      if (i + 1 < length) {
        targets[at] = doc.inputIds[i + 1]!;
        lossMask[at] = doc.lossMask[i + 1]!;
        lossTokens += doc.lossMask[i + 1]!;
      }
    }
  });
  const tokens = at;
  for (let p = 0; at < seqLen; at++, p++) {
    inputIds[at] = padTokenId;
    positions[at] = p;
    segments[at] = documents.length;
  }
  return { inputIds, targets, lossMask, positions, segments, tokens, lossTokens, documents: documents.length };
}

/** Packs samples in order into as many rows as they need (the last one padded). */
export function packSamples(
  samples: Iterable<TokenSample>,
  seqLen: number,
  packFunction: PackFunction,
  padTokenId = 0,
): PackedRow[] {
  const packer = new RowPacker(seqLen, packFunction, padTokenId);
  const rows: PackedRow[] = [];
  for (const sample of samples) {
    if (!packer.fits(sample)) rows.push(packer.finish());
    packer.add(sample);
    if (packer.isFull) rows.push(packer.finish());
  }
  if (!packer.isEmpty) rows.push(packer.finish());
  return rows;
}

/** Stacks rows of the same seqLen into one micro-batch ([rows, seqLen] arrays). */
export function collateRows(rows: readonly PackedRow[]): MicroBatch {
  const first = rows[0];
  if (first === undefined) throw new RangeError('a micro-batch needs at least one row');
  const seqLen = first.inputIds.length;
  const n = rows.length;
  const batch: MicroBatch = {
    inputIds: new Int32Array(n * seqLen),
    targets: new Int32Array(n * seqLen),
    lossMask: new Float32Array(n * seqLen),
    positions: new Int32Array(n * seqLen),
    segments: new Int32Array(n * seqLen),
    rows: n,
    seqLen,
    tokens: 0,
    lossTokens: 0,
  };
  rows.forEach((row, r) => {
    if (row.inputIds.length !== seqLen)
      throw new RangeError(`row ${r} has ${row.inputIds.length} tokens, expected ${seqLen}`);
    const offset = r * seqLen;
    batch.inputIds.set(row.inputIds, offset);
    batch.targets.set(row.targets, offset);
    batch.lossMask.set(row.lossMask, offset);
    batch.positions.set(row.positions, offset);
    batch.segments.set(row.segments, offset);
    batch.tokens += row.tokens;
    batch.lossTokens += row.lossTokens;
  });
  return batch;
}
