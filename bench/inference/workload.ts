// What the inference suite measures: the workloads (batch, prompt length, tokens generated, repeats),
// their prompts, how a figure is computed from per-token timestamps, and the greedy-token agreement check.

export type Metric = 'decode_b1' | 'decode_b32' | 'ttft_b1';

export interface Workload {
  metric: Metric;
  batch: number;
  promptLength: number;
  /** Tokens generated per sequence (greedy, EOS ignored). */
  maxNew: number;
  /** Timed rounds after one warm-up round; in each, ours runs once and then the anchor. Best of each is reported. */
  rounds: number;
  /** Tokens generated per sequence in the warm-up round. */
  warmupNew: number;
  unit: 'tokens/s' | 'ms';
  /** Short label for names and messages. */
  label: string;
}

export const WORKLOADS: Record<Metric, Workload> = {
  decode_b1: {
    metric: 'decode_b1',
    batch: 1,
    promptLength: 32,
    maxNew: 128,
    rounds: 5,
    warmupNew: 16,
    unit: 'tokens/s',
    label: 'decode b1',
  },
  decode_b32: {
    metric: 'decode_b32',
    batch: 32,
    promptLength: 32,
    maxNew: 128,
    rounds: 2,
    warmupNew: 16,
    unit: 'tokens/s',
    label: 'decode b32',
  },
  ttft_b1: {
    metric: 'ttft_b1',
    batch: 1,
    promptLength: 64,
    maxNew: 1,
    rounds: 15,
    warmupNew: 1,
    unit: 'ms',
    label: 'ttft b1',
  },
};

/** Greedy tokens compared with ours: the first this many of every sequence. */
export const AGREEMENT_TOKENS = 8;

/** One implementation's figure for a workload, and the tokens its best run generated. */
export interface Measurement {
  /** tokens/s for decode, milliseconds for time to first token. */
  value: number;
  tokens: number[][];
}

/** Deterministic prompts: byte-range ids (present in every model's vocabulary here), different per sequence. */
export function workloadPrompts(w: Workload): number[][] {
  let state = 0x9e3779b9 ^ (w.batch * 7919 + w.promptLength);
  const next = (): number => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state >>> 24;
  };
  return Array.from({ length: w.batch }, () => Array.from({ length: w.promptLength }, next));
}

/** Timestamps (ms) of one run: when it started, and when each sequence received each token. */
export interface RunTimes {
  start: number;
  tokenTimes: number[][];
}

/**
 * The figure of one run. Time to first token: until every sequence has its first token. Decode
 * throughput: the tokens generated after each sequence's first, over the time from the last first token
 * to the last token (prefill excluded).
 */
export function figureOf(w: Workload, run: RunTimes, maxNew: number): number {
  let firstDone = -Infinity;
  let last = -Infinity;
  let tokens = 0;
  for (const times of run.tokenTimes) {
    if (times.length !== maxNew)
      throw new Error(`${w.label}: a sequence produced ${times.length} tokens, expected ${maxNew}`);
    firstDone = Math.max(firstDone, times[0]!);
    last = Math.max(last, times[times.length - 1]!);
    tokens += times.length - 1;
  }
  if (w.metric === 'ttft_b1') return firstDone - run.start;
  return tokens / ((last - firstDone) / 1000);
}

/** The best figure of several runs (highest throughput, lowest time). */
export function best(w: Workload, figures: number[]): number {
  return w.unit === 'ms' ? Math.min(...figures) : Math.max(...figures);
}

/** One implementation, able to run a workload's prompts and report the figure and the generated tokens. */
export interface Runner {
  run(prompts: number[][], maxNew: number): Promise<{ figure: number; tokens: number[][] }>;
  close?(): Promise<void>;
}

/**
 * One warm-up round, then `w.rounds` rounds in which ours runs and then each anchor configuration (so that
 * all see the same machine); the best figure of each. Measurements are in the order of `runners`.
 */
export async function compare(
  w: Workload,
  runners: Runner[],
  beforeRound: () => Promise<void> = async () => undefined,
): Promise<Measurement[]> {
  const prompts = workloadPrompts(w);
  const figures: number[][] = runners.map(() => []);
  const tokens: number[][][] = runners.map(() => []);
  try {
    for (const runner of runners) await runner.run(prompts, w.warmupNew);
    for (let round = 0; round < w.rounds; round++) {
      await beforeRound();
      for (const [i, runner] of runners.entries()) {
        const run = await runner.run(prompts, w.maxNew);
        figures[i]!.push(run.figure);
        tokens[i] = run.tokens;
      }
    }
  } finally {
    for (const runner of runners) await runner.close?.();
  }
  return runners.map((_, i) => ({ value: best(w, figures[i]!), tokens: tokens[i]! }));
}

/** A sequence whose greedy tokens differ from ours: the first differing position. */
export interface Divergence {
  sequence: number;
  index: number;
  ours: number;
  theirs: number;
}

/** Where the anchor's greedy tokens first differ from ours, within the first AGREEMENT_TOKENS of each sequence. */
export function divergences(ours: number[][], theirs: number[][]): Divergence[] {
  const out: Divergence[] = [];
  ours.forEach((mine, sequence) => {
    const other = theirs[sequence] ?? [];
    const n = Math.min(AGREEMENT_TOKENS, mine.length);
    for (let index = 0; index < n; index++)
      if (mine[index] !== other[index]) {
        out.push({ sequence, index, ours: mine[index]!, theirs: other[index] ?? -1 });
        break;
      }
  });
  return out;
}

/** Log-probability gaps below this (nats) are near ties that float rounding may decide either way. */
export const NEAR_TIE = 0.02;

/**
 * The note on greedy-token agreement, or null when the tokens agree. `margins[i]` is how much more likely
 * our token was than the anchor's at divergence i (null when unknown).
 */
export function agreementNote(
  found: Divergence[],
  margins: (number | null)[],
  sequences: number,
  anchor: string,
): string | null {
  if (found.length === 0) return null;
  const head = `greedy tokens differ from ours in ${found.length}/${sequences} sequences within the first ${AGREEMENT_TOKENS}`;
  const worst = Math.max(...margins.map((m) => m ?? Infinity));
  if (worst < NEAR_TIE)
    return `${head}, each at a near tie of ours (top two within ${worst.toPrecision(2)} in log-probability)`;
  const i = margins.findIndex((m) => m === null || m >= NEAR_TIE);
  const d = found[i]!;
  const margin = margins[i];
  return (
    `warning: ${head} (sequence ${d.sequence}, token ${d.index}: ours ${d.ours}, ${anchor} ${d.theirs}` +
    `${margin === null || margin === undefined || !Number.isFinite(margin) ? '' : `, ours more likely by ${margin.toPrecision(2)}`})`
  );
}
