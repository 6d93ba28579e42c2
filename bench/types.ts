// What a benchmark is: our figure and a named anchor's figure, measured in the same run.
export interface BenchContext {
  /** Threads for both us and the anchor. */
  threads: number;
  /** Prints a progress line (stderr), so long runs show what they are doing. */
  progress(message: string): void;
}

export interface BenchResult {
  ours: number;
  /** Name of the anchor (e.g. "OpenBLAS cblas_sgemm", "PyTorch 1.13 CPU"). */
  anchor: string;
  /** The anchor's figure, or null when the anchor is not installed here (say why in note). */
  anchorValue: number | null;
  note?: string;
  /** Default true (throughput). For times, false: the ratio is then anchor / ours. */
  higherIsBetter?: boolean;
}

export interface Benchmark {
  name: string;
  unit: string;
  run(ctx: BenchContext): Promise<BenchResult>;
}
