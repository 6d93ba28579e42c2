// RL trainer config (`trainer` entrypoint; `[trainer]` of `rl`): spec config.md §3.3.
//
// Era choices and decisions (one line each; model/optim/scheduler/weights decisions are in training.ts):
// - Seed-era [A] fields with seed meaning: `async_level` (only drives weight-dir cleanup in the
//   trainer), `bench`, `data.fake`, the seed `[loss]` knobs (+ `kl_tau`/`kl_mask_type`, in the [A] code).
// - `enable_token_export` (seed 000) is added: per-sequence token JSONL under output_dir/token_exports.
// - `ckpt` gets the [B] `keep_last`/`keep_interval` and seed 004's `save_async`; `ckpt.keep` is an alias.
// - `memory_profiler_path` / `trace_path` → unsupported ("memory profiling", "profiler tracing"); T4
//   is still checked so the seeds' messages stay.
// - `weight_broadcast.nccl` → unsupported "NCCL weight broadcast"; T6/T8 still checked.
// - T7 (Muon vs FSDP CPU offload) does not apply: there is no `fsdp_cpu_offload` field.
// - T9 ([B] loss bounds) is applied to the seed loss as `mask_ratio_low < mask_ratio_high`.
// - The trainer never logs sample tables: `wandb.log_extras.samples` is forced to false (seed), with a
//   warning when it was explicitly set to true.
// - Renames: `max_async_level` → `async_level` (alias), `ckpt.keep` → `ckpt.keep_last` (alias),
//   `model.lora` → `model.experimental.lora` (deprecated, warns).
import { optionalSection, section, z } from '@prime-rl/config';
import type { Rename, Validator } from '@prime-rl/config';
import {
  applyBench,
  asyncLevelRenames,
  ckptRenames,
  logSection,
  memoryProfilerPathField,
  pathField,
  py,
  tracePathField,
  trainerCkptSection,
  trainerWeightBroadcast,
  wandbSection,
} from './shared.js';
import {
  adapterNeedsLora,
  loraRenames,
  modelValidators,
  optimUnion,
  schedulerFitsMaxSteps,
  schedulerUnion,
  tracingNeedsFewSteps,
  trainModelSection,
  weightsSection,
} from './training.js';

export const fakeDataShape = {
  batch_size: z.int().min(1).default(2).describe('Batch size for fake data loader.'),
  seq_len: z.int().min(1).default(128).describe('Sequence length for fake data loader.'),
};

export const trainerShape = {
  max_steps: z
    .int()
    .min(0)
    .nullable()
    .default(null)
    .describe('Maximum number of steps to run training for. If None, runs indefinitely.'),
  async_level: z
    .int()
    .min(0)
    .default(1)
    .describe(
      'Maximum number of steps that inference can be ahead of training (must match the orchestrator). If 0, fully synchronous.',
    ),
  output_dir: pathField()
    .default('outputs')
    .describe("Directory to write outputs to. Must match the orchestrator's output_dir."),
  bench: z
    .boolean()
    .default(false)
    .describe('Whether to run in benchmark mode: sets max_steps to 4, uses fake data and disables checkpointing.'),
  memory_profiler_path: memoryProfilerPathField(),
  trace_path: tracePathField(),
  dist_timeout_seconds: z
    .int()
    .min(1)
    .default(600)
    .describe('Timeout in seconds for collective operations between training workers.'),
  enable_token_export: z
    .boolean()
    .default(false)
    .describe(
      'Whether to export every trained sequence as one JSONL record (token ids, loss mask, advantages, logprobs, ratios) under <output_dir>/token_exports/step_<step>/rank_<rank>.jsonl.',
    ),

  model: trainModelSection(),
  data: section(
    {
      fake: optionalSection(fakeDataShape, {
        description: 'Whether to use a fake data loader for debugging and benchmarking. Disabled (None) by default',
      }),
    },
    'Data loader configuration',
  ),
  loss: section(
    {
      ratio_type: z.enum(['token', 'sequence']).default('token').describe('Type of importance ratio to use.'),
      ratio_length_norm: z
        .boolean()
        .default(false)
        .describe('Whether to normalize the importance ratio by sequence length.'),
      mask_ratio_high: z.number().min(0).default(8.0).describe('High threshold for masking importance ratios.'),
      mask_ratio_low: z.number().min(0).default(0.125).describe('Low threshold for masking importance ratios.'),
      sequence_mask_ratio_low: z
        .number()
        .min(0)
        .default(0.0)
        .describe('Masks entire sequences when any generated token has an importance ratio below this value.'),
      kl_tau: z
        .number()
        .min(0)
        .default(0.0)
        .describe('Weight of the log-ratio (KL) term added to the loss. 0 disables it.'),
      kl_mask_type: z
        .enum(['masked', 'unmasked', 'all'])
        .default('all')
        .describe('Which loss-mask tokens the KL term covers: masked by the ratio bounds, unmasked, or all.'),
    },
    'Loss configuration',
  ),
  optim: optimUnion(),
  scheduler: schedulerUnion(),
  ckpt: trainerCkptSection(),
  weights: weightsSection(),
  weight_broadcast: trainerWeightBroadcast(),
  log: logSection(),
  wandb: wandbSection(),
};

export const trainerSchema = z.strictObject(trainerShape);
export type TrainerConfig = z.output<typeof trainerSchema>;

/** Bench: 4 steps on fake data, no checkpoints, no W&B extras. Idempotent. */
export const trainerBench: Validator<TrainerConfig> = (cfg, ctx) => {
  if (!cfg.bench) return;
  applyBench(cfg, ctx);
  if (cfg.data.fake === null) cfg.data.fake = z.strictObject(fakeDataShape).parse({});
};

/** The trainer has no samples to log: `wandb.log_extras.samples := false`. */
export const trainerNoSampleTables: Validator<TrainerConfig> = (cfg, ctx) => {
  const extras = cfg.wandb?.log_extras;
  if (!extras || !extras.samples) return;
  if (ctx.isSet(['wandb', 'log_extras', 'samples'])) {
    ctx.warn('The trainer does not log sample tables; ignoring wandb.log_extras.samples = true.');
  }
  extras.samples = false;
};

/** T6. */
export const trainerNcclAsyncLevel: Validator<TrainerConfig> = (cfg, ctx) => {
  if (cfg.weight_broadcast.type === 'nccl' && cfg.async_level !== 1) {
    ctx.error([], 'NCCL weight broadcast only works with async level 1');
  }
};

/** T8. */
export const ncclNoLora: Validator<TrainerConfig> = (cfg, ctx) => {
  if (cfg.weight_broadcast.type === 'nccl' && cfg.model.experimental.lora !== null) {
    ctx.error([], 'NCCL weight broadcast does not support LoRA yet.');
  }
};

/** T9 analogue for the seed loss. */
export const lossMaskBounds: Validator<TrainerConfig> = (cfg, ctx) => {
  const { mask_ratio_low: low, mask_ratio_high: high } = cfg.loss;
  if (!(low < high)) {
    ctx.error(['loss'], `loss.mask_ratio_low (${py(low)}) must be less than loss.mask_ratio_high (${py(high)})`);
  }
};

export const trainerValidators: ReadonlyArray<Validator<TrainerConfig>> = [
  ...modelValidators,
  trainerBench,
  trainerNoSampleTables,
  tracingNeedsFewSteps,
  adapterNeedsLora,
  trainerNcclAsyncLevel,
  ncclNoLora,
  lossMaskBounds,
  schedulerFitsMaxSteps,
];

export function trainerRenames(prefix = ''): Rename[] {
  return [...asyncLevelRenames(prefix), ...ckptRenames(prefix), ...loraRenames(prefix)];
}
