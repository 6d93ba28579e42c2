// An SFT dataset in memory: the validated conversations of each subset/split, and each epoch's order.
// Rows are read and validated up front (so a bad row fails the run at start, naming its file and line);
// they are tokenized only when the loader reaches them.
import path from 'node:path';
import { epochOrder } from './mixing.js';
import type { EpochOrder, MixOptions } from './mixing.js';
import { rowToConversation } from './rows.js';
import { locateSources, readRecords } from './sources.js';
import type { LocateOptions } from './sources.js';
import type { Conversation } from './types.js';

export interface LoadedSource {
  label: string;
  files: string[];
  conversations: Conversation[];
  /** Names row i of this source in messages ("train.jsonl line 17"). */
  locate(index: number): string;
}

export interface DatasetSelection {
  name: string;
  subsets: readonly string[] | null;
  splits: readonly string[] | null;
}

export class SftDataset {
  private cachedEpoch = -1;
  private cachedOrder: EpochOrder | null = null;

  private constructor(
    readonly sources: readonly LoadedSource[],
    readonly mix: MixOptions,
  ) {}

  /** Locates, reads and validates every row of the selected subsets/splits. */
  static async load(selection: DatasetSelection, mix: MixOptions, options: LocateOptions = {}): Promise<SftDataset> {
    const located = await locateSources(selection.name, selection.subsets, selection.splits, options);
    if (mix.probabilities !== null && mix.probabilities.length !== located.length) {
      throw new Error(
        `got ${mix.probabilities.length} probabilities for ${located.length} datasets to mix (${located.map((s) => s.label).join(', ')})`,
      );
    }
    const sources: LoadedSource[] = [];
    for (const { label, files, root } of located) {
      const conversations: Conversation[] = [];
      const fileStarts: number[] = [];
      const locators: Array<(index: number) => string> = [];
      for (const file of files) {
        const displayName = path.relative(root, file) || path.basename(file);
        const { records, locate } = await readRecords(file, displayName);
        fileStarts.push(conversations.length);
        locators.push(locate);
        records.forEach((record, i) => conversations.push(rowToConversation(record, locate(i))));
      }
      if (conversations.length === 0) throw new Error(`dataset ${label} has no rows (files: ${files.join(', ')})`);
      const locate = (index: number): string => {
        let f = fileStarts.length - 1;
        while (f > 0 && fileStarts[f]! > index) f--;
        return locators[f]!(index - fileStarts[f]!);
      };
      sources.push({ label, files, conversations, locate });
    }
    return new SftDataset(sources, mix);
  }

  get sizes(): number[] {
    return this.sources.map((s) => s.conversations.length);
  }

  /** The visiting order of `epoch` (the current epoch's order is kept). */
  order(epoch: number): EpochOrder {
    if (this.cachedOrder === null || this.cachedEpoch !== epoch) {
      this.cachedOrder = epochOrder(this.sizes, this.mix, epoch);
      this.cachedEpoch = epoch;
    }
    return this.cachedOrder;
  }
}
