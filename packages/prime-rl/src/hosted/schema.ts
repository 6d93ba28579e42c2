// The flat hosted-training config (`rl.toml` for `prime rl run`), config.md §4.2 / hosted CLI spec C.2.
// Every table is strict: an unknown key at any level is an error, as in the rest of prime-rl.
import { z } from 'zod';

/** The two ways the orchestrator turns multi-turn rollouts into training samples. */
export const TRAJECTORY_STRATEGIES = ['interleaved', 'branching'] as const;
export type TrajectoryStrategy = (typeof TRAJECTORY_STRATEGIES)[number];

/**
 * An integer field. zod reports a non-number given to `z.int()` as "expected number"; the message
 * here says "integer" the way users of prime-rl know it.
 */
const int = () =>
  z.int({
    error: (iss) => {
      if (iss.input === undefined) return undefined; // missing: "Field required"
      if (typeof iss.input === 'number' && Number.isFinite(iss.input)) {
        return 'Input should be a valid integer, got a number with a fractional part';
      }
      return 'Input should be a valid integer';
    },
  });

/** `-1` (all examples) or a positive count. */
const numExamples = int().refine((n) => n === -1 || n >= 1, {
  message: 'Input should be -1 (all examples) or greater than or equal to 1',
});

/** Free-form keyword arguments for an environment's `load_environment()`. */
const envArgs = z.record(z.string(), z.unknown());

/** A list of paths; a single string is accepted as a one-element list. */
const pathList = z.preprocess((v) => (typeof v === 'string' ? [v] : v), z.array(z.string()));

export const hostedEnvSchema = z
  .strictObject({
    id: z.string().describe('Environments Hub id, `owner/name` (optionally `owner/name@version`)'),
    name: z.string().optional().describe('display name; distinguishes repeated ids with different args'),
    args: envArgs.optional().describe('keyword arguments for load_environment(); never put secrets here'),
  })
  .describe('a training environment');

export const hostedEvalEnvSchema = z
  .strictObject({
    id: z.string().describe('Environments Hub id, `owner/name`'),
    name: z.string().optional(),
    args: envArgs.optional(),
    num_examples: numExamples.optional().describe('overrides [eval] num_examples'),
    rollouts_per_example: int().min(1).optional().describe('overrides [eval] rollouts_per_example'),
  })
  .describe('an evaluation environment');

export const hostedSamplingSchema = z.strictObject({
  max_tokens: int().min(1).optional().describe('tokens sampled per turn; must be below the cluster seq_len'),
  temperature: z.number().min(0).optional().describe('sampling temperature (0 = greedy)'),
});

export const hostedEvalSchema = z.strictObject({
  interval: int().min(1).optional().describe('evaluate every N steps'),
  num_examples: numExamples.optional().describe('default for all eval environments; -1 = all'),
  rollouts_per_example: int().min(1).optional().describe('default for all eval environments'),
  eval_base_model: z.boolean().optional().describe('also evaluate the untrained model'),
  env: z.array(hostedEvalEnvSchema).default([]),
});

export const hostedValSchema = z.strictObject({
  num_examples: int().min(1).optional(),
  rollouts_per_example: int().min(1).optional(),
  interval: int().min(1).optional().describe('validate every N steps'),
});

const unit = z.number().min(0).max(1);

export const hostedBufferSchema = z.strictObject({
  online_difficulty_filtering: z.boolean().optional(),
  easy_threshold: unit.optional(),
  hard_threshold: unit.optional(),
  easy_fraction: unit.optional(),
  hard_fraction: unit.optional(),
  env_ratios: z.array(z.number().gt(0)).optional().describe('one sampling weight per [[env]]'),
  skip_verification: z.boolean().optional(),
  seed: int().optional(),
});

export const hostedWandbSchema = z.strictObject({
  project: z.string().optional(),
  entity: z.string().optional(),
  name: z.string().optional(),
});

export const hostedConfigSchema = z.strictObject({
  name: z.string().optional().describe('display name of the run'),
  model: z.string().min(1).describe('Hugging Face model id (see `prime rl models`)'),
  max_steps: int().min(1).default(100),
  batch_size: int().min(1).default(128).describe('total rollouts per step'),
  rollouts_per_example: int().min(1).default(8).describe('group size'),
  trajectory_strategy: z.enum(TRAJECTORY_STRATEGIES).optional(),
  learning_rate: z.number().gt(0).optional(),
  lora_alpha: int().min(0).optional(),
  oversampling_factor: z.number().min(1).optional(),
  max_async_level: int().min(0).optional(),
  /** Deprecated alias of `env_files` (its files load first, so `env_files` wins on a shared key). */
  env_file: pathList.optional(),
  env_files: pathList.optional().describe('.env files with secrets, relative to the config file'),
  sampling: hostedSamplingSchema.optional(),
  env: z.array(hostedEnvSchema).default([]),
  eval: hostedEvalSchema.optional(),
  val: hostedValSchema.optional(),
  buffer: hostedBufferSchema.optional(),
  wandb: hostedWandbSchema.optional(),
});

export type HostedConfig = z.output<typeof hostedConfigSchema>;
export type HostedEnv = z.output<typeof hostedEnvSchema>;
export type HostedEvalEnv = z.output<typeof hostedEvalEnvSchema>;
