// The step-wise SFT data loader. A step is `batch_size` packed rows of `seq_len` tokens, handed out as
// `batch_size / micro_batch_size` micro-batches (gradient accumulation). Samples are drawn in epoch order
// (shuffled per epoch with seed + epoch), tokenized when reached, and packed; epochs repeat until the
// caller stops, or `maxEpochs` are done. Every step starts with an empty row, so the position of the next sample is all the state
// needed to resume: a loader built from `state()` delivers exactly the steps the old one would have.
import type { SftConfig } from '../../config/sft.js';
import { SftDataset } from './dataset.js';
import { fakeSample } from './fake.js';
import { RowPacker, collateRows } from './packing.js';
import type { PackedRow } from './packing.js';
import { tokenizeSample } from './tokenize.js';
import type { ConversationTokenizer, MicroBatch, TokenSample } from './types.js';

export type SftDataConfig = SftConfig['data'];

export interface SftDataLoaderOptions {
  /** Renders and tokenizes a conversation; required for `sft` data. */
  tokenizer?: ConversationTokenizer;
  /** Vocabulary size; required for `fake` data. */
  vocabSize?: number;
  /** Token id of padding (default 0, as prime-rl). */
  padTokenId?: number;
  /** Downloads a Hugging Face hub dataset id and returns its local directory. */
  resolveDatasetDir?: (name: string) => Promise<string>;
  /** Base of a relative `data.name` (default: the working directory). */
  cwd?: string;
  /** Resume from a state returned by `state()`. */
  state?: SftDataLoaderState | null;
  /**
   * End the data after this many epochs (default: never). The step that runs out packs what is left
   * (its last micro-batch may have fewer rows); every step after it has no micro-batches.
   * `maxEpochs: 1` trains "until the data is exhausted". Fake data has a single endless epoch.
   */
  maxEpochs?: number;
}

/** JSON-serialisable resume point. */
export interface SftDataLoaderState {
  version: 1;
  kind: 'sft' | 'fake';
  /** Steps delivered so far. */
  step: number;
  /** Epoch and entry of the epoch order the next step starts at. */
  epoch: number;
  position: number;
  /** Rows per source: resuming against a changed dataset is refused. */
  sourceSizes: number[];
}

export interface SftStepStats {
  /** Samples packed in this step. */
  samples: number;
  /** Non-padding tokens. */
  tokens: number;
  lossTokens: number;
  paddingTokens: number;
  /** Packed samples that were longer than seq_len and cut. */
  truncatedSamples: number;
  /** Samples skipped because no token of theirs is trained. */
  droppedSamples: number;
  /** Packed samples and tokens per source label (`subset/split` or split; "fake" for fake data). */
  sources: Record<string, { samples: number; tokens: number }>;
}

export interface SftStep {
  /** 1-based count of steps this loader (and the ones it resumed from) delivered. */
  step: number;
  /** Epoch of the step's first sample. */
  epoch: number;
  /** Empty once the data has ended (`maxEpochs`). */
  microBatches: MicroBatch[];
  stats: SftStepStats;
}

export interface SftDataSourceInfo {
  label: string;
  files: string[];
  rows: number;
}

/** A sample at a position of the stream; `sample` is null when it is dropped. */
interface DrawnSample {
  sample: TokenSample | null;
  truncated: boolean;
  source: string;
}

/** Where samples come from: a dataset in epoch order, or the endless fake stream. */
interface SampleStream {
  readonly kind: 'sft' | 'fake';
  readonly sourceSizes: number[];
  /** Samples in `epoch` (Infinity: a single endless epoch). */
  epochLength(epoch: number): number;
  draw(epoch: number, position: number): DrawnSample;
}

export async function createSftDataLoader(
  config: SftDataConfig,
  options: SftDataLoaderOptions = {},
): Promise<SftDataLoader> {
  return SftDataLoader.create(config, options);
}

export class SftDataLoader {
  private readonly packer: RowPacker;
  private steps: number;
  private epoch: number;
  private position: number;
  /** The sample at the cursor, drawn but not packed yet (it did not fit the last row of a step). */
  private pending: DrawnSample | null = null;
  /** Drops since the last kept sample, to notice an epoch with nothing to train on. */
  private dropsInARow = 0;
  private readonly maxEpochs: number;

  private constructor(
    readonly config: SftDataConfig,
    private readonly stream: SampleStream,
    readonly sources: readonly SftDataSourceInfo[],
    options: SftDataLoaderOptions,
  ) {
    const { batch_size: batchSize, micro_batch_size: microBatchSize } = config;
    if (batchSize % microBatchSize !== 0) {
      throw new Error(`data.batch_size (${batchSize}) must be divisible by data.micro_batch_size (${microBatchSize})`);
    }
    this.packer = new RowPacker(config.seq_len, config.pack_function, options.padTokenId ?? 0);
    this.maxEpochs = options.maxEpochs ?? Infinity;
    if (!(this.maxEpochs >= 1)) throw new RangeError(`maxEpochs must be at least 1, got ${options.maxEpochs}`);
    const state = options.state ?? null;
    if (state !== null) checkState(state, stream);
    this.steps = state?.step ?? 0;
    this.epoch = state?.epoch ?? 0;
    this.position = state?.position ?? 0;
  }

  static async create(config: SftDataConfig, options: SftDataLoaderOptions = {}): Promise<SftDataLoader> {
    if (config.type === 'fake') {
      const { vocabSize } = options;
      if (vocabSize === undefined) throw new Error('fake data needs the vocabulary size (vocabSize)');
      const fakeOptions = { seqLen: config.seq_len, length: config.length, inputIds: config.input_ids, vocabSize };
      fakeSample(0, fakeOptions); // validates the options now rather than at the first step
      const stream: SampleStream = {
        kind: 'fake',
        sourceSizes: [],
        epochLength: () => Infinity,
        draw: (_epoch, position) => ({ sample: fakeSample(position, fakeOptions), truncated: false, source: 'fake' }),
      };
      return new SftDataLoader(config, stream, [], options);
    }
    const tokenizer = options.tokenizer;
    if (tokenizer === undefined) throw new Error('sft data needs a tokenizer');
    const dataset = await SftDataset.load(
      { name: config.name, subsets: config.subsets, splits: config.splits },
      {
        shuffle: config.shuffle,
        seed: config.seed,
        probabilities: config.probabilities,
        stoppingStrategy: config.stopping_strategy,
      },
      { resolveDatasetDir: options.resolveDatasetDir, cwd: options.cwd },
    );
    const stream: SampleStream = {
      kind: 'sft',
      sourceSizes: dataset.sizes,
      epochLength: (epoch) => dataset.order(epoch).source.length,
      draw: (epoch, position) => {
        const order = dataset.order(epoch);
        const source = dataset.sources[order.source[position]!]!;
        const row = order.index[position]!;
        const prepared = tokenizeSample(
          source.conversations[row]!,
          tokenizer,
          config.loss_mask,
          config.seq_len,
          source.locate(row),
        );
        return { ...prepared, source: source.label };
      },
    };
    const sources = dataset.sources.map(({ label, files, conversations }) => ({
      label,
      files,
      rows: conversations.length,
    }));
    return new SftDataLoader(config, stream, sources, options);
  }

  /** The next step: `batch_size` rows in micro-batches of `micro_batch_size` rows (fewer at the end of the data). */
  next(): SftStep {
    const { batch_size: batchSize, micro_batch_size: microBatchSize, seq_len: seqLen } = this.config;
    const stats: SftStepStats = {
      samples: 0,
      tokens: 0,
      lossTokens: 0,
      paddingTokens: 0,
      truncatedSamples: 0,
      droppedSamples: 0,
      sources: {},
    };
    const rows: PackedRow[] = [];
    let firstEpoch: number | null = null;
    while (rows.length < batchSize) {
      const drawn = this.peek(stats);
      if (drawn === null) {
        if (!this.packer.isEmpty) rows.push(this.packer.finish());
        break;
      }
      const sample = drawn.sample!;
      if (!this.packer.fits(sample)) {
        rows.push(this.packer.finish());
        continue;
      }
      firstEpoch ??= this.epoch;
      this.packer.add(sample);
      this.advance();
      stats.samples++;
      if (drawn.truncated) stats.truncatedSamples++;
      const perSource = (stats.sources[drawn.source] ??= { samples: 0, tokens: 0 });
      perSource.samples++;
      perSource.tokens += sample.inputIds.length;
      if (this.packer.isFull) rows.push(this.packer.finish());
    }
    const microBatches: MicroBatch[] = [];
    for (let start = 0; start < rows.length; start += microBatchSize) {
      microBatches.push(collateRows(rows.slice(start, start + microBatchSize)));
    }
    for (const batch of microBatches) {
      stats.tokens += batch.tokens;
      stats.lossTokens += batch.lossTokens;
    }
    stats.paddingTokens = rows.length * seqLen - stats.tokens;
    if (rows.length > 0) this.steps++;
    return { step: this.steps, epoch: firstEpoch ?? this.epoch, microBatches, stats };
  }

  /** Where the next step starts; pass it as `options.state` to resume there. */
  state(): SftDataLoaderState {
    return {
      version: 1,
      kind: this.stream.kind,
      step: this.steps,
      epoch: this.epoch,
      position: this.position,
      sourceSizes: [...this.stream.sourceSizes],
    };
  }

  /** The sample at the cursor, moving past (and counting) dropped ones; null when the data has ended. */
  private peek(stats: SftStepStats): DrawnSample | null {
    while (this.pending === null) {
      if (this.epoch >= this.maxEpochs) return null;
      const drawn = this.stream.draw(this.epoch, this.position);
      if (drawn.sample !== null) {
        this.pending = drawn;
        this.dropsInARow = 0;
        break;
      }
      stats.droppedSamples++;
      this.dropsInARow++;
      const epochLength = this.stream.epochLength(this.epoch);
      this.advance();
      if (this.dropsInARow >= epochLength && this.position === 0) {
        throw new Error(
          `no sample of epoch ${this.epoch - 1} has a trained token (check data.loss_mask and the dataset's roles)`,
        );
      }
    }
    return this.pending;
  }

  private advance(): void {
    this.pending = null;
    this.position++;
    if (this.position >= this.stream.epochLength(this.epoch)) {
      this.epoch++;
      this.position = 0;
    }
  }
}

function checkState(state: SftDataLoaderState, stream: SampleStream): void {
  if (state.version !== 1) throw new Error(`unsupported SFT data loader state version ${String(state.version)}`);
  if (state.kind !== stream.kind) {
    throw new Error(`the data loader state is for ${state.kind} data, but the config has ${stream.kind} data`);
  }
  const sizes = stream.sourceSizes;
  if (state.sourceSizes.length !== sizes.length || state.sourceSizes.some((n, i) => n !== sizes[i])) {
    throw new Error(
      `the dataset changed since the data loader state was saved (rows per source: ${JSON.stringify(state.sourceSizes)} then, ${JSON.stringify(sizes)} now)`,
    );
  }
  const valid = (n: number): boolean => Number.isInteger(n) && n >= 0;
  if (!valid(state.step) || !valid(state.epoch) || !valid(state.position)) {
    throw new Error(`invalid data loader state ${JSON.stringify(state)}`);
  }
  if (state.position >= stream.epochLength(state.epoch)) {
    throw new Error(`data loader state position ${state.position} is past the end of epoch ${state.epoch}`);
  }
}
