// Orchestrator config (`orchestrator` entrypoint; `[orchestrator]` of `rl`): spec config.md §3.1.
//
// Era choices (one line each):
// - Seed-era [A] fields keep seed names, defaults and meaning (`async_level`, `rollouts_per_example`,
//   `env_mix`, `val`, `advantage`, the three buffer types, `ckpt.resume_step`).
// - Hosted-era [B] knobs are added next to them: `strict_async_level`, `max_off_policy_steps`,
//   `oversampling_factor` (≥1, O5), `trajectory_strategy`, `workers_per_env`, `lora_name`,
//   `ckpt.keep_last`/`keep_interval`, `eval.skip_eval_on_resume`, `[[eval.env]].skip_first`.
//   `teacher_model` is not added (its fields are not documented).
// - `async_level` is canonical; the E2 name `max_async_level` is a silent alias (same meaning: how many
//   steps inference may run ahead of training).
// - `buffer` keeps the seed union `simple | difficulty-pool | online-difficulty`. The [B] hosted
//   buffer fields live on `simple`, which is therefore the hosted unified buffer: a hosted `[buffer]`
//   table without `type` lands on it. `from_scratch` and `seed` are common to all variants (they are
//   seed-era common fields); `env_ratios` is only on `simple` because the seed variants mix envs with
//   `[env_mix]`, and giving both `env_ratios` and `env_mix.probabilities` is rejected.
// - The hosted `easy_fraction`/`hard_fraction` (default 0.0) only act on resume (they move that share
//   of the easy/hard pools back to normal); the difficulty-pool variant's fields of the same name
//   (default 0.1) are per-batch fractions. Same names, different variants, both documented.
// - Two oversampling factors exist: the top-level [B] one (in-flight groups = factor × batch groups)
//   and the seed online-difficulty buffer's one (re-sample ceil(factor × deficit) problems).
// - Bench mode (O3) also disables `ckpt`, like the trainer's bench, so `rl --bench --ckpt` stays
//   consistent between the two processes.
// - Renames: `max_async_level` → `async_level` (alias), `ckpt.keep` → `ckpt.keep_last` (alias),
//   `sampling.max_completion_tokens` → `sampling.max_tokens` and the same under `eval.sampling`
//   (alias). `group_size` (HEAD) is not aliased: HEAD configs differ in too many other places.
// - Extra checks beyond the seeds (what a user expects): env names must be unique, `env_mix.probabilities`
//   needs one entry per env, difficulty-pool fractions must sum to ≤ 1, online-difficulty
//   `min_reward ≤ max_reward`.
import { optionalSection, section, union, variant, z } from '@prime-rl/config';
import type { Rename, Validator } from '@prime-rl/config';
import {
  applyBench,
  asyncLevelRenames,
  BENCH_ASYNC_LEVEL,
  checkUniqueEnvNames,
  ckptRenames,
  envList,
  evalEnvList,
  evalSamplingSection,
  evalSaveSection,
  forceOpenAiServerType,
  logSection,
  modelNameField,
  orchestratorCkptSection,
  orchestratorClientSection,
  orchestratorWeightBroadcast,
  pathField,
  py,
  samplingRenames,
  trainSamplingSection,
  trustRemoteCodeField,
  wandbSection,
} from './shared.js';

// ---------------------------------------------------------------------------------------------
// [buffer]
// ---------------------------------------------------------------------------------------------

const bufferCommon = {
  from_scratch: z
    .boolean()
    .default(true)
    .describe(
      'Whether to initialize metadata and rollout buffer from scratch (else from the dataset\'s "metadata"/"rollouts" columns).',
    ),
  seed: z.int().nullable().default(null).describe('Random seed for the buffer.'),
};

const fraction = () => z.number().min(0).max(1);

export const simpleBufferVariant = variant(
  'simple',
  {
    ...bufferCommon,
    env_ratios: z
      .array(z.number().positive())
      .min(1)
      .nullable()
      .default(null)
      .describe(
        'Relative sampling weight of each [[env]] (one per env, all > 0, normalised). If None, environments are sampled in proportion to their number of examples.',
      ),
    easy_threshold: fraction()
      .nullable()
      .default(null)
      .describe('Examples whose group average reward is >= this move to the easy pool and are no longer sampled.'),
    hard_threshold: fraction()
      .nullable()
      .default(null)
      .describe('Examples whose group average reward is <= this move to the hard pool and are no longer sampled.'),
    easy_fraction: fraction()
      .default(0.0)
      .describe('On resume only: fraction of the easy pool moved back to the normal pool.'),
    hard_fraction: fraction()
      .default(0.0)
      .describe('On resume only: fraction of the hard pool moved back to the normal pool.'),
    online_difficulty_filtering: z
      .boolean()
      .default(false)
      .describe(
        'Whether to drop groups whose rewards are all 0 or all 1 (no learning signal) instead of training on them.',
      ),
    skip_verification: z.boolean().default(false).describe('Whether to skip scoring rollouts (all rewards are 0).'),
    hash_keys: z
      .array(z.string().min(1))
      .min(1)
      .default(() => ['task', 'prompt'])
      .describe('Example fields hashed to identify an example across resumes.'),
  },
  'Samples problems uniformly; also the hosted unified buffer (env ratios, easy/hard pools, online difficulty filtering).',
);

export const difficultyPoolBufferVariant = variant(
  'difficulty-pool',
  {
    ...bufferCommon,
    easy_border: fraction().default(0.8).describe('Problems with > this average reward move to easy pool.'),
    hard_border: fraction().default(0.2).describe('Problems with < this average reward move to hard pool.'),
    easy_fraction: fraction().default(0.1).describe('Fraction of batch from easy samples.'),
    hard_fraction: fraction().default(0.1).describe('Fraction of batch from hard samples.'),
  },
  'Keeps easy/normal/hard pools and draws fixed fractions of every batch from them.',
);

export const onlineDifficultyBufferVariant = variant(
  'online-difficulty',
  {
    ...bufferCommon,
    min_reward: fraction()
      .nullable()
      .default(0.01)
      .describe('Minimum reward to include sample in batch (None = no lower bound).'),
    max_reward: fraction()
      .nullable()
      .default(0.99)
      .describe('Maximum reward to include sample in batch (None = no upper bound).'),
    oversampling_factor: z
      .number()
      .positive()
      .default(1.0)
      .describe('Factor by which to oversample problems when re-sampling the deficit left by filtering.'),
  },
  'Keeps only groups whose mean reward lies within [min_reward, max_reward].',
);

export const bufferUnion = () =>
  union(
    [simpleBufferVariant, difficultyPoolBufferVariant, onlineDifficultyBufferVariant],
    'simple',
    'Data buffer: how problems are sampled and which rollouts are released to the trainer',
  );

// ---------------------------------------------------------------------------------------------
// Root shape
// ---------------------------------------------------------------------------------------------

export const orchestratorShape = {
  batch_size: z.int().min(1).default(128).describe('Number of samples to train on per step.'),
  rollouts_per_example: z
    .int()
    .min(1)
    .default(1)
    .describe('Number of output sequences to return per example during training.'),
  seq_len: z
    .int()
    .min(1)
    .default(2048)
    .describe(
      'Sequence length to use for training. Samples shorter than this are padded; longer samples are truncated.',
    ),
  max_steps: z
    .int()
    .min(0)
    .nullable()
    .default(null)
    .describe('Maximum number of training steps to run. If None, runs indefinitely.'),
  async_level: z
    .int()
    .min(0)
    .default(1)
    .describe('Maximum number of steps inference may run ahead of training. If 0, does synchronous RL.'),
  strict_async_level: z
    .boolean()
    .default(false)
    .describe(
      'Whether to always serve exactly the policy async_level steps behind, instead of the newest one available.',
    ),
  max_off_policy_steps: z
    .int()
    .min(0)
    .default(8)
    .describe('In-flight rollout requests that have seen more than this many policy updates are cancelled.'),
  oversampling_factor: z
    .number()
    .min(1)
    .default(1.0)
    .describe(
      'Number of in-flight rollout groups relative to the groups in one batch (batch_size / rollouts_per_example).',
    ),
  trajectory_strategy: z
    .enum(['interleaved', 'branching'])
    .default('interleaved')
    .describe(
      'How multi-turn rollouts become training samples: "interleaved" merges the turns into one sequence, "branching" makes one sample per turn.',
    ),
  workers_per_env: z.int().min(1).default(1).describe('Number of worker processes that run each environment.'),
  num_train_workers: z.int().min(1).default(1).describe('Number of training workers to use for training.'),
  max_concurrent: z
    .int()
    .min(1)
    .nullable()
    .default(null)
    .describe('Maximum number of concurrent rollouts to generate and score. If None, does not limit concurrency.'),
  mask_env_responses: z.boolean().default(true).describe('Whether to mask environment responses from the loss.'),
  mask_truncated_completions: z
    .boolean()
    .default(false)
    .describe('Whether to mask truncated completions from the loss.'),
  zero_truncated_completions: z
    .boolean()
    .default(false)
    .describe('Whether to override reward scores with 0 for truncated completions.'),
  lora_name: z
    .string()
    .min(1)
    .nullable()
    .default(null)
    .describe('Name of the LoRA adapter to request from the inference server. If None, requests the base model name.'),
  output_dir: pathField()
    .default('outputs')
    .describe(
      'Directory to write outputs to (checkpoints, weights, rollouts and logs). Must be distinct across experiments on a single node.',
    ),
  bench: z
    .boolean()
    .default(false)
    .describe(
      'Whether to run in benchmark mode: sets max_steps to 4 (1 warm-up + 3 measured), async_level to ~infinity, and disables eval, checkpointing and W&B extras.',
    ),
  seed: z.int().nullable().default(42).describe('Random seed for the orchestrator.'),

  client: orchestratorClientSection(),
  model: section(
    {
      name: modelNameField(),
      trust_remote_code: trustRemoteCodeField('tokenizer initialization'),
    },
    'Model served by the inference server (must match the trainer and inference model)',
  ),
  sampling: trainSamplingSection(),
  env: envList(),
  env_mix: section(
    {
      strategy: z
        .enum(['interleave', 'concatenate'])
        .default('interleave')
        .describe('Strategy to use for mixing environments.'),
      probabilities: z
        .array(z.number().min(0))
        .min(1)
        .nullable()
        .default(null)
        .describe('Probabilities to use for each environment (one per [[env]]).'),
      stopping_strategy: z
        .enum(['first_exhausted', 'all_exhausted'])
        .default('all_exhausted')
        .describe('Stopping strategy to use for interleaving environment datasets.'),
      seed: z.int().nullable().default(null).describe('Random seed to use for environment mixing.'),
    },
    'How several training environments are mixed into one dataset',
  ),
  buffer: bufferUnion(),
  advantage: optionalSection(
    {
      std_norm: z
        .enum(['local', 'global'])
        .nullable()
        .default(null)
        .describe('Standard normalization strategy for advantages.'),
      length_weighted_mean: z
        .boolean()
        .default(false)
        .describe('Whether to use length-weighted mean for advantage calculation.'),
      leave_one_out: z.boolean().default(false).describe('Whether to use leave-one-out estimation.'),
      neg_clipped: z.boolean().default(false).describe('Whether to clip negative advantages.'),
    },
    { enabled: true, description: 'Advantage computation options (enabled by default)' },
  ),
  weight_broadcast: orchestratorWeightBroadcast(),
  ckpt: orchestratorCkptSection(),
  val: optionalSection(
    {
      num_examples: z.int().min(1).default(16).describe('Number of examples to use for validation.'),
      rollouts_per_example: z
        .int()
        .min(1)
        .default(1)
        .describe('Number of samples to generate per example for validation.'),
      interval: z.int().min(1).default(10).describe('Interval at which to validate the model.'),
    },
    { description: "Validation on the training environments' eval datasets. Disabled (None) by default" },
  ),
  eval: optionalSection(
    {
      num_examples: z.int().min(-1).default(-1).describe('Number of examples to evaluate per environment (-1 = all).'),
      rollouts_per_example: z
        .int()
        .min(1)
        .default(1)
        .describe('Number of samples to generate per example for each environment.'),
      interval: z.int().min(1).default(100).describe('Interval at which to evaluate the model.'),
      eval_base_model: z.boolean().default(true).describe('Whether to evaluate the base model we are training on.'),
      skip_eval_on_resume: z
        .boolean()
        .default(true)
        .describe('Whether to skip the evaluation that would run at the step a resumed run starts from.'),
      env: evalEnvList(),
      sampling: evalSamplingSection(),
      save: evalSaveSection(),
    },
    { description: 'Online evaluation. Disabled (None) by default' },
  ),
  log: logSection(),
  wandb: wandbSection(),
};

export const orchestratorSchema = z.strictObject(orchestratorShape);
export type OrchestratorConfig = z.output<typeof orchestratorSchema>;

// ---------------------------------------------------------------------------------------------
// Validators
// ---------------------------------------------------------------------------------------------

/** The OpenAI API is never a vLLM-style server. */
export const clientServerType: Validator<OrchestratorConfig> = (cfg) => {
  forceOpenAiServerType(cfg.client);
};

/** O1. */
export const batchSizeDivisible: Validator<OrchestratorConfig> = (cfg, ctx) => {
  if (cfg.batch_size % cfg.rollouts_per_example !== 0) {
    ctx.error([], 'Batch size must be divisible by the number of samples per problem');
  }
};

/** O2. */
export const ncclAsyncLevel: Validator<OrchestratorConfig> = (cfg, ctx) => {
  if (cfg.weight_broadcast.type === 'nccl' && cfg.async_level !== 1) {
    ctx.error([], 'Async level must be 1 for NCCL broadcast');
  }
};

/** O3 (+ ckpt off, see header). Idempotent: a dumped bench config re-loads identically. */
export const benchMode: Validator<OrchestratorConfig> = (cfg, ctx) => {
  if (!cfg.bench) return;
  applyBench(cfg, ctx);
  cfg.async_level = BENCH_ASYNC_LEVEL;
  cfg.eval = null;
};

/** O4 (hosted buffer rules). */
export const hostedBufferRules: Validator<OrchestratorConfig> = (cfg, ctx) => {
  const b = cfg.buffer;
  if (b.type !== 'simple') return;
  if (b.env_ratios !== null && b.env_ratios.length !== cfg.env.length) {
    ctx.error(
      ['buffer', 'env_ratios'],
      `buffer.env_ratios has ${b.env_ratios.length} entries but there are ${cfg.env.length} environments; give one ratio per [[env]]`,
    );
  }
  if (b.env_ratios !== null && cfg.env_mix.probabilities !== null) {
    ctx.error(
      ['buffer', 'env_ratios'],
      'Set either buffer.env_ratios or env_mix.probabilities, not both: both choose how often each environment is sampled',
    );
  }
  if (b.easy_threshold !== null && b.hard_threshold !== null && !(b.easy_threshold > b.hard_threshold)) {
    ctx.error(
      ['buffer'],
      `easy_threshold (${py(b.easy_threshold)}) must be greater than hard_threshold (${py(b.hard_threshold)})`,
    );
  }
  if (b.skip_verification) {
    const conflicts: Array<[string, boolean]> = [
      ['online_difficulty_filtering', b.online_difficulty_filtering],
      ['easy_threshold', b.easy_threshold !== null],
      ['hard_threshold', b.hard_threshold !== null],
    ];
    for (const [field, on] of conflicts) {
      if (on) {
        ctx.error(
          ['buffer', field],
          `skip_verification cannot be True when ${field} is set. Without verification every reward is 0, so ${field} has nothing to act on.`,
        );
      }
    }
  }
};

/** Seed buffer variants: fractions and reward bounds must make sense. */
export const seedBufferRules: Validator<OrchestratorConfig> = (cfg, ctx) => {
  const b = cfg.buffer;
  if (b.type === 'difficulty-pool' && b.easy_fraction + b.hard_fraction > 1) {
    ctx.error(
      ['buffer'],
      `buffer.easy_fraction (${py(b.easy_fraction)}) + buffer.hard_fraction (${py(b.hard_fraction)}) must be at most 1`,
    );
  }
  if (b.type === 'online-difficulty' && b.min_reward !== null && b.max_reward !== null && b.min_reward > b.max_reward) {
    ctx.error(
      ['buffer'],
      `buffer.min_reward (${py(b.min_reward)}) must be less than or equal to buffer.max_reward (${py(b.max_reward)})`,
    );
  }
};

/** `env_mix.probabilities` needs one entry per env. */
export const envMixRules: Validator<OrchestratorConfig> = (cfg, ctx) => {
  const p = cfg.env_mix.probabilities;
  if (p !== null && p.length !== cfg.env.length) {
    ctx.error(
      ['env_mix', 'probabilities'],
      `env_mix.probabilities has ${p.length} entries but there are ${cfg.env.length} environments; give one probability per [[env]]`,
    );
  }
};

export const uniqueEnvNames: Validator<OrchestratorConfig> = (cfg, ctx) => {
  checkUniqueEnvNames(cfg.env, ctx, ['env']);
  if (cfg.eval) checkUniqueEnvNames(cfg.eval.env, ctx, ['eval', 'env']);
};

export const orchestratorValidators: ReadonlyArray<Validator<OrchestratorConfig>> = [
  clientServerType,
  batchSizeDivisible,
  ncclAsyncLevel,
  benchMode,
  hostedBufferRules,
  seedBufferRules,
  envMixRules,
  uniqueEnvNames,
];

export function orchestratorRenames(prefix = ''): Rename[] {
  return [
    ...asyncLevelRenames(prefix),
    ...ckptRenames(prefix),
    ...samplingRenames(prefix),
    ...samplingRenames(`${prefix}eval.`),
  ];
}
