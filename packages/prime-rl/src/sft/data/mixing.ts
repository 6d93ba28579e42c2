// The order in which one epoch visits the rows of several sources (subsets/splits).
// Without probabilities the sources are concatenated (then shuffled as a whole); with probabilities they
// are interleaved like `datasets.interleave_datasets`: each draw picks a source with the given
// probability and takes its next row; "first_exhausted" stops once any source has given all its rows,
// "all_exhausted" once every source has (sources that ran out start over until then).
import type { Generator } from '@prime-rl/tensor';
import { permutation, seededGenerator } from './random.js';

export type StoppingStrategy = 'first_exhausted' | 'all_exhausted';

export interface MixOptions {
  shuffle: boolean;
  seed: number;
  probabilities: readonly number[] | null;
  stoppingStrategy: StoppingStrategy;
}

/** Entry i of the epoch is row `index[i]` of source `source[i]`. */
export interface EpochOrder {
  source: Int32Array;
  index: Int32Array;
}

// Distinct generator streams per purpose, so that e.g. changing `shuffle` leaves the interleaving draws alone.
const SOURCE_SHUFFLE = 1;
const INTERLEAVE = 2;
const CONCAT_SHUFFLE = 3;

/** The order of epoch `epoch`: a pure function of the sizes, the options and the epoch. */
export function epochOrder(sizes: readonly number[], options: MixOptions, epoch: number): EpochOrder {
  if (sizes.length === 0) throw new Error('no dataset sources to mix');
  if (options.probabilities === null) return concatenate(sizes, options, epoch);
  const rowOrders = sizes.map((size, i) =>
    options.shuffle ? permutation(size, seededGenerator(options.seed, epoch, SOURCE_SHUFFLE, i)) : identity(size),
  );
  const draws = interleaveDraws(
    sizes,
    options.probabilities,
    options.stoppingStrategy,
    seededGenerator(options.seed, epoch, INTERLEAVE),
  );
  const index = new Int32Array(draws.source.length);
  for (let i = 0; i < index.length; i++) index[i] = rowOrders[draws.source[i]!]![draws.index[i]!]!;
  return { source: draws.source, index };
}

function concatenate(sizes: readonly number[], options: MixOptions, epoch: number): EpochOrder {
  const total = sizes.reduce((a, b) => a + b, 0);
  const source = new Int32Array(total);
  const index = new Int32Array(total);
  let at = 0;
  sizes.forEach((size, s) => {
    for (let i = 0; i < size; i++, at++) {
      source[at] = s;
      index[at] = i;
    }
  });
  if (!options.shuffle) return { source, index };
  const order = permutation(total, seededGenerator(options.seed, epoch, CONCAT_SHUFFLE));
  return { source: order.map((i) => source[i]!), index: order.map((i) => index[i]!) };
}

/** Which source each draw takes from and the position of the draw within that source. */
function interleaveDraws(
  sizes: readonly number[],
  probabilities: readonly number[],
  stoppingStrategy: StoppingStrategy,
  generator: Generator,
): EpochOrder {
  if (probabilities.length !== sizes.length) {
    throw new Error(`got ${probabilities.length} probabilities for ${sizes.length} datasets to mix`);
  }
  const total = probabilities.reduce((a, b) => a + b, 0);
  if (!(total > 0)) throw new Error('data.probabilities must not all be 0');
  // Cumulative probabilities, normalised so they need not sum to exactly 1.
  const cumulative: number[] = [];
  probabilities.reduce((sum, p, i) => (cumulative[i] = sum + p / total), 0);
  // A source that is never drawn cannot be exhausted: it does not count for "all_exhausted".
  const mustExhaust = probabilities.map((p) => p > 0);
  const exhausted = sizes.map(() => false);
  const next = sizes.map(() => 0);
  const source: number[] = [];
  const index: number[] = [];
  const done = (): boolean =>
    stoppingStrategy === 'first_exhausted' ? exhausted.some((e) => e) : exhausted.every((e, i) => e || !mustExhaust[i]);
  while (!done()) {
    const u = generator.uniform();
    let s = cumulative.findIndex((c) => u < c);
    if (s < 0) s = cumulative.length - 1; // rounding: u just below 1 but the last sum slightly under it
    while (probabilities[s] === 0) s--; // only reached through that rounding fallback
    source.push(s);
    index.push(next[s]!);
    next[s] = next[s]! + 1;
    if (next[s]! >= sizes[s]!) {
      exhausted[s] = true;
      next[s] = 0;
    }
  }
  return { source: Int32Array.from(source), index: Int32Array.from(index) };
}

function identity(n: number): Int32Array {
  const order = new Int32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  return order;
}
