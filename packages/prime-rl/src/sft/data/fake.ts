// Synthetic samples for benchmarks (`data.type = "fake"`). Sample i depends only on i, so the stream
// resumes from a position without replaying it.
import { seededGenerator } from './random.js';
import type { TokenSample } from './types.js';

export interface FakeDataOptions {
  seqLen: number;
  /** `fixed`: every sample has seqLen tokens; `variable`: seeded random lengths in [2, seqLen]. */
  length: 'fixed' | 'variable';
  /** `increasing`: 0, 1, 2, … modulo vocabSize; `random`: seeded uniform ids below vocabSize. */
  inputIds: 'increasing' | 'random';
  vocabSize: number;
  seed?: number;
}

/** Fake sample number `index`; every token is trained. */
export function fakeSample(index: number, options: FakeDataOptions): TokenSample {
  const { seqLen, vocabSize } = options;
  if (!Number.isInteger(vocabSize) || vocabSize < 1) {
    throw new RangeError(`fake data needs a positive vocabulary size, got ${vocabSize}`);
  }
  const generator = seededGenerator(options.seed ?? 0, index);
  // At least 2 tokens, so that every sample has a target to train on.
  const length = options.length === 'fixed' || seqLen < 2 ? seqLen : 2 + generator.int(seqLen - 1);
  const inputIds = new Int32Array(length);
  for (let t = 0; t < length; t++) {
    inputIds[t] = options.inputIds === 'increasing' ? t % vocabSize : generator.int(vocabSize);
  }
  return { inputIds, lossMask: new Uint8Array(length).fill(1) };
}
