// Messages between the HTTP front end and its engine workers (child processes, one per data-parallel
// rank), sent over the fork IPC channel with structured-clone serialization. Request ids are the front
// end's; each worker keeps its own engine ids.
import type { GenerationResult, SamplingParams, TokenLogprob } from '@prime-rl/lm';

export interface WorkerInit {
  rank: number;
  modelDir: string;
  maxModelLength: number;
  maxSeqs: number;
  maxBatchedTokens: number;
  threads: number;
  /** Seeds the worker's default generator (requests without their own seed draw from it). */
  seed: number | null;
}

export type AdminOp = 'update_weights' | 'reload_weights' | 'pause' | 'resume';
export type PauseMode = 'keep' | 'wait' | 'abort';

export type ToWorker =
  | { t: 'init'; init: WorkerInit }
  | { t: 'submit'; id: number; promptIds: number[]; params: Partial<SamplingParams> }
  | { t: 'abort'; id: number }
  | { t: 'admin'; rid: number; op: AdminOp; weightDir?: string | null; mode?: PauseMode }
  | { t: 'shutdown' };

/** [token id, logprob, top logprobs or null, text that became final]. */
export type TokenTuple = [number, number, TokenLogprob[] | null, string];

export type WorkerEvent =
  { id: number; tokens: TokenTuple[] } | { id: number; finish: GenerationResult } | { id: number; error: string };

export interface WorkerStats {
  running: number;
  waiting: number;
  cacheUsage: number;
  /** Tokens prefilled and generated since the worker started. */
  promptTokens: number;
  generationTokens: number;
  steps: number;
  /** The worker's resident memory in bytes. */
  residentBytes: number;
  /** Tensors alive in the worker (model weights and KV cache included): constant when idle. */
  liveTensors: number;
  /** Bytes of free buffers kept for reuse. */
  pooledBytes: number;
}

export interface WorkerInfo {
  maxSeqs: number;
  cacheBytes: number;
  threads: number;
  weightBytes: number;
}

export type FromWorker =
  | { t: 'ready'; info: WorkerInfo }
  | { t: 'events'; events: WorkerEvent[]; stats: WorkerStats }
  | { t: 'admin_done'; rid: number; ok: true; detail?: string }
  | { t: 'admin_done'; rid: number; ok: false; status: number; error: string }
  | { t: 'fatal'; error: string };
