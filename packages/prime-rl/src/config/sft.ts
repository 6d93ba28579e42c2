// SFT trainer config (`sft` entrypoint): spec config.md §3.7 (E2 schema, seed 004 flags).
//
// Decisions (one line each; model/optim/scheduler/weights decisions are in training.ts):
// - `data` is a union `sft` (default, a Hugging Face dataset) | `fake` (synthetic, for benchmarks),
//   with the common batching fields on both variants.
// - `loss_impl = "liger"` → unsupported "the Liger kernel loss" (default `torch` is our engine's fused loss).
// - `memory_profiler_path` / `trace_path` → unsupported, as in the RL trainer; T4 is still checked.
// - Bench (seed 004 `--bench`) sets max_steps := 4 (1 warm-up + 3 measured), disables checkpointing and
//   W&B extras; it does not force fake data (seed 004 benchmarks real data with --bench too).
// - E2's `tokenizer` and `heartbeat` sections are not added (not in the seeds; the tokenizer is the
//   model's own).
// - Renames: `ckpt.keep` → `ckpt.keep_last` (alias), `model.lora` → `model.experimental.lora`
//   (deprecated).
import { meta, section, union, variant, z } from '@prime-rl/config';
import type { Rename, Validator } from '@prime-rl/config';
import {
  applyBench,
  ckptRenames,
  logSection,
  memoryProfilerPathField,
  pathField,
  tracePathField,
  trainerCkptSection,
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

const dataCommon = {
  batch_size: z.int().min(1).default(128).describe('Number of samples per optimizer step.'),
  seq_len: z.int().min(1).default(128).describe('Sequence length of one packed training sample.'),
  pack_function: z
    .enum(['cat', 'stack'])
    .default('cat')
    .describe(
      'How samples are packed into seq_len rows: "cat" concatenates samples, "stack" stacks them (seq_len must then be a multiple of 256).',
    ),
  micro_batch_size: z
    .int()
    .min(1)
    .default(1)
    .describe('Number of samples per forward/backward pass (gradient accumulation splits the batch).'),
};

export const sftDataUnion = () =>
  union(
    [
      variant(
        'sft',
        {
          ...dataCommon,
          name: z
            .string()
            .min(1)
            .default('PrimeIntellect/Reverse-Text-SFT')
            .describe('Name or path of the Hugging Face dataset to train on.'),
          subsets: z
            .array(z.string().min(1))
            .min(1)
            .nullable()
            .default(null)
            .describe('Dataset subsets to load and mix. If None, loads the default subset.'),
          splits: z
            .array(z.string().min(1))
            .min(1)
            .nullable()
            .default(null)
            .describe('Dataset split to load for each subset. If None, loads the "train" split.'),
          probabilities: z
            .array(z.number().min(0))
            .min(1)
            .nullable()
            .default(null)
            .describe('Sampling probability of each subset/split when interleaving. If None, concatenates them.'),
          stopping_strategy: z
            .enum(['first_exhausted', 'all_exhausted'])
            .default('all_exhausted')
            .describe('Stopping strategy to use for interleaving datasets.'),
          shuffle: z.boolean().default(true).describe('Whether to shuffle the dataset.'),
          seed: z.int().default(0).describe('Random seed for shuffling and interleaving.'),
          loss_mask: section(
            {
              system: z.boolean().default(false).describe('Whether to train on system messages.'),
              user: z.boolean().default(false).describe('Whether to train on user messages.'),
              assistant: z.boolean().default(true).describe('Whether to train on assistant messages.'),
              tool: z.boolean().default(false).describe('Whether to train on tool messages.'),
            },
            'Which message roles contribute to the loss.',
          ),
        },
        'A Hugging Face SFT dataset (prompt/completion or messages).',
      ),
      variant(
        'fake',
        {
          ...dataCommon,
          length: z
            .enum(['fixed', 'variable'])
            .default('fixed')
            .describe('Whether fake samples all have seq_len tokens or variable lengths.'),
          input_ids: z
            .enum(['increasing', 'random'])
            .default('increasing')
            .describe('How fake token ids are generated.'),
        },
        'Synthetic data for benchmarking.',
      ),
    ],
    'sft',
    'Training data',
  );

export const sftShape = {
  max_steps: z
    .int()
    .min(0)
    .nullable()
    .default(null)
    .describe('Maximum number of steps to run training for. If None, runs until the data is exhausted.'),
  output_dir: pathField().default('outputs').describe('Directory to write outputs to (checkpoints, weights and logs).'),
  bench: z
    .boolean()
    .default(false)
    .describe('Whether to run in benchmark mode: sets max_steps to 4 and disables checkpointing.'),
  memory_profiler_path: memoryProfilerPathField(),
  trace_path: tracePathField(),
  dist_timeout_seconds: z
    .int()
    .min(1)
    .default(600)
    .describe('Timeout in seconds for collective operations between training workers.'),
  loss_impl: meta(z.enum(['liger', 'torch']).default('torch'), { unsupported: 'the Liger kernel loss' }).describe(
    'Implementation of the cross-entropy loss ("torch" is our fused loss).',
  ),

  model: trainModelSection(),
  data: sftDataUnion(),
  optim: optimUnion(),
  scheduler: schedulerUnion(),
  ckpt: trainerCkptSection(),
  weights: weightsSection(),
  log: logSection(),
  wandb: wandbSection(),
};

export const sftSchema = z.strictObject(sftShape);
export type SftConfig = z.output<typeof sftSchema>;

export const sftBench: Validator<SftConfig> = (cfg, ctx) => {
  if (cfg.bench) applyBench(cfg, ctx);
};

export const sftBatchRules: Validator<SftConfig> = (cfg, ctx) => {
  const { batch_size: batch, micro_batch_size: micro } = cfg.data;
  if (batch < micro) {
    ctx.error(['data'], 'Batch size must be greater than or equal to micro batch size');
  } else if (batch % micro !== 0) {
    ctx.error(['data'], 'Batch size must be divisible by micro batch size');
  }
};

export const sftDatasetMix: Validator<SftConfig> = (cfg, ctx) => {
  const d = cfg.data;
  if (d.type !== 'sft') return;
  if (d.subsets !== null && d.splits !== null && d.subsets.length !== d.splits.length) {
    ctx.error(
      ['data'],
      `Number of subsets must be equal to number of splits. Please specify which split to load for each subset (got ${d.subsets.length} subsets and ${d.splits.length} splits).`,
    );
  }
  const n = d.subsets?.length ?? d.splits?.length ?? 1;
  if (d.probabilities !== null && d.probabilities.length !== n) {
    ctx.error(
      ['data', 'probabilities'],
      `Number of probabilities must be equal to number of datasets (subsets/splits) to mix (got ${d.probabilities.length} probabilities for ${n} datasets).`,
    );
  }
};

export const sftPacking: Validator<SftConfig> = (cfg, ctx) => {
  const d = cfg.data;
  const cp = cfg.model.cp;
  if (cp > 1) {
    if (d.pack_function !== 'cat')
      ctx.error(['data', 'pack_function'], "Packing function must be 'cat' when CP is enabled");
    if (d.seq_len % cp !== 0) ctx.error(['data', 'seq_len'], 'Sequence length must be divisible by CP degree');
    if (d.micro_batch_size !== 1)
      ctx.error(['data', 'micro_batch_size'], 'Micro batch size must be 1 when CP is enabled');
  }
  if (d.pack_function === 'stack' && d.seq_len % 256 !== 0) {
    ctx.error(['data', 'seq_len'], "Sequence length must be divisible by 256 when pack_function is 'stack'");
  }
};

export const sftValidators: ReadonlyArray<Validator<SftConfig>> = [
  ...modelValidators,
  sftBench,
  sftBatchRules,
  sftDatasetMix,
  sftPacking,
  tracingNeedsFewSteps,
  adapterNeedsLora,
  schedulerFitsMaxSteps,
];

export function sftRenames(prefix = ''): Rename[] {
  return [...ckptRenames(prefix), ...loraRenames(prefix)];
}
