// Config sections reused by several entrypoints (orchestrator, trainer, inference, sft, eval,
// synthesize, rl). Field names, defaults and constraints follow the seed-era reference (seed 003,
// spec config.md §3) plus the hosted-era [B] additions; descriptions are the seed docs' sentences.
//
// Decisions taken here (one line each):
// - `log.level` / `log.vf_level` stay free strings as in the seeds (the logger maps them; unknown
//   names are reported by the logger, not by the config).
// - `wandb` gains `entity` ([B] hosted field, needed by the hosted-config mapping); `group`/`tags`
//   (E3/HEAD) are not added.
// - `wandb.log_extras` is enabled by default (seed: `--no-trainer.wandb.log-extras.distributions`
//   works on a plain `--wandb`, and bench mode disables it).
// - `ckpt.keep_last` is canonical (seed 004); seed 003's `ckpt.keep` is accepted as an alias through
//   the rename tables of each entrypoint (see `ckptRenames`).
// - `sampling.max_tokens` is canonical (seed era); newer prime-rl's `max_completion_tokens` is an
//   alias (see `samplingRenames`).
// - NCCL weight broadcast is kept in every `weight_broadcast` union with its documented fields, and
//   the whole union is marked unsupported (only the default `filesystem` variant is accepted). The
//   cross-field NCCL rules are still implemented so the messages stay the seeds' ones.
// - Eval results: `save.env_hub` (Environments Hub push) and `save.hf` (Hugging Face Hub push) are
//   unsupported; `save.disk` is supported. `save.stream` is the E2 field that `eval.resume_path` needs.
// - Env entries and lists of them reject an empty list (`[[env]]` must name at least one env).
import { dict, meta, optionalSection, section, stringDict, union, variant, z } from '@prime-rl/config';
import type { ConfigPath, Rename, ValidationContext } from '@prime-rl/config';

// ---------------------------------------------------------------------------------------------
// Paths and small helpers
// ---------------------------------------------------------------------------------------------

/** A filesystem path field (kept as written; relative paths resolve against the process CWD). */
export const pathField = () => z.string().min(1);

/** Default model of the seed era. */
export const DEFAULT_MODEL = 'Qwen/Qwen3-0.6B';

/** Default training/eval environment of the seed era. */
export const DEFAULT_ENV_ID = 'reverse-text';

/** Values bench mode forces (1 warm-up step + 3 measured; the seed doc's "5" is a doc slip). */
export const BENCH_MAX_STEPS = 4;
/** Bench: the orchestrator never waits for new weights. */
export const BENCH_ASYNC_LEVEL = 1_000_000_000;

/**
 * What bench mode does to every training-side config: a fixed number of steps (warning when that
 * overrides an explicit value), no checkpoints, no W&B extras. Idempotent.
 */
export function applyBench(
  cfg: { max_steps: number | null; ckpt: unknown; wandb: { log_extras: unknown } | null },
  ctx: ValidationContext,
): void {
  if (cfg.max_steps !== BENCH_MAX_STEPS && ctx.isSet(['max_steps'])) {
    ctx.warn(`Benchmark mode overrides max_steps (${py(cfg.max_steps)}) with ${BENCH_MAX_STEPS}.`);
  }
  cfg.max_steps = BENCH_MAX_STEPS;
  cfg.ckpt = null;
  if (cfg.wandb) cfg.wandb.log_extras = null;
}

/** Python-style rendering used in the seeds' messages (`None`, `True`, `False`). */
export function py(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'string' || typeof value === 'number') return String(value);
  return JSON.stringify(value);
}

/** Python's `str(float)`: integral floats keep a `.0` (used for derived names like `r16-a16.0`). */
export function pyFloat(value: number): string {
  return Number.isInteger(value) ? value.toFixed(1) : String(value);
}

// ---------------------------------------------------------------------------------------------
// [log]
// ---------------------------------------------------------------------------------------------

export const logShape = {
  level: z.string().min(1).default('info').describe('Logging level for the process.'),
  vf_level: z.string().min(1).default('warn').describe('Logging level for the verifiers package.'),
  file: z.boolean().default(true).describe('Whether to log to a file in the output directory.'),
  log_data: z.boolean().default(false).describe('Whether to log the first data sample to the logger.'),
};

export const logSection = () => section(logShape, 'Logging configuration');

// ---------------------------------------------------------------------------------------------
// [wandb] (+ [wandb.log_extras])
// ---------------------------------------------------------------------------------------------

export const logExtrasShape = {
  samples: z.boolean().default(true).describe('Whether to log prompt/response samples to W&B tables.'),
  distributions: z
    .boolean()
    .default(true)
    .describe('Whether to log distributions (rewards, advantages, etc.) to W&B tables.'),
  interval: z.int().min(1).default(10).describe('Step interval at which to log extras to W&B table.'),
};

export const wandbShape = {
  project: z.string().min(1).default('prime-rl').describe('The W&B project to log to.'),
  entity: z
    .string()
    .nullable()
    .default(null)
    .describe('The W&B entity (team or user) to log to. If None, uses the default entity of the API key.'),
  name: z.string().nullable().default(null).describe('The W&B run name.'),
  id: z
    .string()
    .nullable()
    .default(null)
    .describe('The W&B run ID. If None, a random ID is generated. Set to resume a run.'),
  offline: z.boolean().default(false).describe('Whether to run W&B in offline mode.'),
  log_extras: optionalSection(logExtrasShape, {
    enabled: true,
    description: 'Extra W&B logging (sample tables and distributions); None disables it',
  }),
};

export const wandbSection = () =>
  optionalSection(wandbShape, { description: 'Weights & Biases logging. Disabled (None) by default' });

// ---------------------------------------------------------------------------------------------
// [client] (OpenAI-compatible inference client)
// ---------------------------------------------------------------------------------------------

export const OPENAI_BASE_URL = 'https://api.openai.com/v1';

export interface ClientDefaults {
  timeout: number;
  baseUrl: string;
}

export function clientShape(d: ClientDefaults) {
  return {
    timeout: z.int().min(1).default(d.timeout).describe('Timeout in seconds for API requests.'),
    base_url: z
      .array(z.string().min(1))
      .min(1)
      .default(() => [d.baseUrl])
      .describe(
        'Base URLs to use for the OpenAI API. If multiple URLs are specified, the client will round-robin completion requests across all servers.',
      ),
    api_key_var: z
      .string()
      .min(1)
      .default('OPENAI_API_KEY')
      .describe(
        'Name of environment variable containing the API key. Can be set to an arbitrary string if the inference server is not protected by an API key.',
      ),
    server_type: z
      .enum(['vllm', 'openai'])
      .default('vllm')
      .describe(
        'Type of inference server that the client is connected to: "vllm" is a prime-rl inference server (ours or vLLM) with token ids and weight-update endpoints, "openai" a plain OpenAI-compatible API. Forced to "openai" when a base URL is https://api.openai.com/v1.',
      ),
    headers: stringDict('Extra HTTP headers sent with every request.'),
  };
}

/** The seed-era orchestrator client (local inference server). */
export const orchestratorClientSection = () =>
  section(
    clientShape({ timeout: 1200, baseUrl: 'http://localhost:8000/v1' }),
    'OpenAI-compatible client configuration',
  );

/** The eval/synthesize client (defaults to the OpenAI API, E2 eval defaults). */
export const apiClientSection = () =>
  section(clientShape({ timeout: 36000, baseUrl: OPENAI_BASE_URL }), 'OpenAI-compatible client configuration');

/** Normalisation shared by every config with a `client`: the OpenAI API is never a vLLM server. */
export function forceOpenAiServerType(client: { base_url: string[]; server_type: 'vllm' | 'openai' }): void {
  if (client.base_url.some((u) => u.replace(/\/+$/, '') === OPENAI_BASE_URL)) client.server_type = 'openai';
}

// ---------------------------------------------------------------------------------------------
// [model] (name only / orchestrator flavour)
// ---------------------------------------------------------------------------------------------

export const modelNameField = (def: string = DEFAULT_MODEL) =>
  z.string().min(1).default(def).describe('Name or path of the HuggingFace model to use.');

export const trustRemoteCodeField = (what: string) =>
  z
    .boolean()
    .default(false)
    .describe(
      `Whether to trust remote code for ${what}. We never execute code from a model repository: only architectures and tokenizers built into the engine load, so this only grants a permission.`,
    );

// ---------------------------------------------------------------------------------------------
// [ckpt] variants
// ---------------------------------------------------------------------------------------------

const ckptIntervalField = (what: string) =>
  z.int().min(1).nullable().default(null).describe(`Interval at which to save the ${what}.`);
const resumeStepField = (what: string) =>
  z
    .int()
    .min(-1)
    .nullable()
    .default(null)
    .describe(
      `Step to resume ${what} from. If None, starts from scratch. If -1, restarts from the latest checkpoint available.`,
    );
const keepLastField = () =>
  z
    .int()
    .min(1)
    .nullable()
    .default(null)
    .describe('Keep at most this many recent step checkpoints on disk. If None, never cleans old checkpoints.');
const keepIntervalField = () =>
  z
    .int()
    .min(1)
    .nullable()
    .default(null)
    .describe('Keep checkpoints of every step divisible by this interval permanently (in addition to keep_last).');

/** Fields the `rl` launcher shares with both sub-configs' `ckpt`. */
export const sharedCkptShape = {
  interval: ckptIntervalField('checkpoint on both trainer and orchestrator'),
  resume_step: resumeStepField('trainer and orchestrator'),
  keep_last: keepLastField(),
  keep_interval: keepIntervalField(),
};

export const orchestratorCkptShape = {
  interval: ckptIntervalField('checkpoint'),
  resume_step: resumeStepField('orchestrator'),
  keep_last: keepLastField(),
  keep_interval: keepIntervalField(),
  skip_progress: z.boolean().default(false).describe('Whether to skip loading the progress from checkpoint.'),
  skip_buffer: z.boolean().default(false).describe('Whether to skip loading the buffer from checkpoint.'),
};

export const trainerCkptShape = {
  interval: z
    .int()
    .min(1)
    .nullable()
    .default(null)
    .describe('Interval at which to save the training checkpoint. If None, only checkpoints at the end of training.'),
  save_async: z.boolean().default(false).describe('Whether to save checkpoints without blocking training.'),
  resume_step: resumeStepField('training'),
  keep_last: keepLastField(),
  keep_interval: keepIntervalField(),
  skip_progress: z.boolean().default(false).describe('Whether to skip loading the progress from checkpoint.'),
  skip_scheduler: z.boolean().default(false).describe('Whether to skip loading the scheduler from checkpoint.'),
  skip_dataloader: z.boolean().default(false).describe('Whether to skip loading the dataloader from checkpoint.'),
};

const ckptDescription = 'Checkpointing. Disabled (None) by default; a bare --ckpt or [ckpt] enables it';
export const orchestratorCkptSection = () => optionalSection(orchestratorCkptShape, { description: ckptDescription });
export const trainerCkptSection = () => optionalSection(trainerCkptShape, { description: ckptDescription });

/** Default (all-defaults) values of the sub-config ckpt sections, used when `rl --ckpt` creates them. */
export const defaultOrchestratorCkpt = () => z.strictObject(orchestratorCkptShape).parse({});
export const defaultTrainerCkpt = () => z.strictObject(trainerCkptShape).parse({});

/**
 * Renames for `ckpt`: seed 003 wrote `ckpt.keep`, seed 004 (and every later prime-rl)
 * `ckpt.keep_last`. Both are in the seeds, so the old name is a silent alias.
 */
export function ckptRenames(prefix = ''): Rename[] {
  return [{ from: `${prefix}ckpt.keep`, to: `${prefix}ckpt.keep_last`, kind: 'alias' }];
}

/** `max_async_level` is the E2/[B] name of the seed's `async_level`: accepted silently. */
export function asyncLevelRenames(prefix = ''): Rename[] {
  return [{ from: `${prefix}max_async_level`, to: `${prefix}async_level`, kind: 'alias' }];
}

// ---------------------------------------------------------------------------------------------
// [weight_broadcast] unions
// ---------------------------------------------------------------------------------------------

export const NCCL_UNSUPPORTED = 'NCCL weight broadcast';

const ncclFields = {
  host: z.string().min(1).default('localhost').describe('Host for NCCL broadcast.'),
  port: z.int().min(1).max(65535).default(29501).describe('Port for NCCL broadcast.'),
  timeout: z.int().min(1).default(1200).describe('Timeout in seconds for NCCL broadcast.'),
};

const filesystemVariant = () =>
  variant(
    'filesystem',
    {},
    'Weights are written to <output_dir>/weights/step_N (Hugging Face layout) and loaded by the inference server.',
  );

const broadcastDescription =
  'How new weights reach the inference server: "filesystem" (default) or "nccl" (not supported yet)';

/** Orchestrator flavour: `nccl` carries host/port/timeout. */
export const orchestratorWeightBroadcast = () =>
  meta(union([filesystemVariant(), variant('nccl', ncclFields, 'In-memory NCCL broadcast.')], 'filesystem'), {
    unsupported: NCCL_UNSUPPORTED,
  }).describe(broadcastDescription);

/** Trainer flavour: `nccl` also carries the inference world size. */
export const trainerWeightBroadcast = () =>
  meta(
    union(
      [
        filesystemVariant(),
        variant(
          'nccl',
          {
            ...ncclFields,
            inference_world_size: z.int().min(1).default(1).describe('World size for NCCL broadcast.'),
          },
          'In-memory NCCL broadcast.',
        ),
      ],
      'filesystem',
    ),
    { unsupported: NCCL_UNSUPPORTED },
  ).describe(broadcastDescription);

/** Inference flavour: only the type. */
export const inferenceWeightBroadcast = () =>
  meta(union([filesystemVariant(), variant('nccl', {}, 'In-memory NCCL broadcast.')], 'filesystem'), {
    unsupported: NCCL_UNSUPPORTED,
  }).describe(broadcastDescription);

export type WeightBroadcastType = 'filesystem' | 'nccl';

// ---------------------------------------------------------------------------------------------
// Environments
// ---------------------------------------------------------------------------------------------

export const envEntryShape = {
  id: z.string().min(1).default(DEFAULT_ENV_ID).describe('ID of the environment to use.'),
  args: dict('Arguments to pass to the environment.'),
  name: z
    .string()
    .min(1)
    .nullable()
    .default(null)
    .describe('Name of the environment (distinguishes repeated ids). If None, the id is used.'),
};

export const defaultEnvEntry = () => ({ id: DEFAULT_ENV_ID, args: {}, name: null });

/** `[[env]]`: training environments. */
export const envList = () =>
  z
    .array(z.strictObject(envEntryShape))
    .min(1)
    .default(() => [defaultEnvEntry()])
    .describe('Environments to train on (installed verifiers environments); several are mixed.');

export const evalEnvEntryShape = {
  ...envEntryShape,
  num_examples: z
    .int()
    .min(-1)
    .nullable()
    .default(null)
    .describe('Number of examples to evaluate (-1 = all). If not set, uses the parent num_examples.'),
  rollouts_per_example: z
    .int()
    .min(1)
    .nullable()
    .default(null)
    .describe('Number of samples per example. If not set, uses the parent rollouts_per_example.'),
  skip_first: z.int().min(0).default(0).describe('Number of examples to skip from the start of the eval dataset.'),
};

export const defaultEvalEnvEntry = () => ({
  ...defaultEnvEntry(),
  num_examples: null,
  rollouts_per_example: null,
  skip_first: 0,
});

/** `[[eval.env]]` / `[[env]]` of eval-like entrypoints. */
export const evalEnvList = (description = 'Environments to evaluate.') =>
  z
    .array(z.strictObject(evalEnvEntryShape))
    .min(1)
    .default(() => [defaultEvalEnvEntry()])
    .describe(description);

/** Repeated env ids need distinct names (metrics and results are keyed by name). */
export function checkUniqueEnvNames(
  envs: ReadonlyArray<{ id: string; name: string | null }>,
  ctx: ValidationContext,
  path: ConfigPath,
): void {
  const seen = new Map<string, number>();
  envs.forEach((e, i) => {
    const key = e.name ?? e.id;
    const first = seen.get(key);
    if (first === undefined) {
      seen.set(key, i);
    } else {
      ctx.error(
        [...path, i, 'name'],
        `Duplicate environment name '${key}' (entries ${first} and ${i}); set a distinct name for each entry`,
      );
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Sampling
// ---------------------------------------------------------------------------------------------

/** Training sampling (orchestrator `[sampling]`). */
export const trainSamplingShape = {
  temperature: z
    .number()
    .min(0)
    .default(1.0)
    .describe(
      'Scales the output probability distribution. Lower values are more deterministic, higher values more random. If 0, samples greedily.',
    ),
  repetition_penalty: z
    .number()
    .min(0)
    .default(1.0)
    .describe('Penalty for repeating tokens: > 1.0 discourages repetition, < 1.0 encourages it, 1.0 means no penalty.'),
  max_tokens: z
    .int()
    .min(1)
    .nullable()
    .default(null)
    .describe(
      'Maximum number of output tokens to generate per turn. If None, generates until maximum context length or EOS token.',
    ),
  min_tokens: z.int().min(0).default(0).describe('Minimum number of output tokens to generate per sequence.'),
  seed: z.int().nullable().default(null).describe('Random seed to use for sampling. If None, no seeding is used.'),
};

export const trainSamplingSection = () => section(trainSamplingShape, 'Sampling parameters for training rollouts');

/** Eval sampling: every knob is optional, None falls back to the server default. */
export const evalSamplingShape = {
  temperature: z
    .number()
    .min(0)
    .nullable()
    .default(null)
    .describe('Temperature for evaluation. If None, falls back to inference server default.'),
  repetition_penalty: z
    .number()
    .min(0)
    .nullable()
    .default(null)
    .describe('Repetition penalty for evaluation. If None, falls back to server default.'),
  top_p: z
    .number()
    .gt(0)
    .max(1)
    .nullable()
    .default(null)
    .describe('Cumulative probability of top tokens to consider. If None, falls back to server default.'),
  top_k: z
    .int()
    .min(-1)
    .nullable()
    .default(null)
    .describe('Number of top tokens to consider. If -1, all tokens considered. If None, falls back to server default.'),
  min_p: z
    .number()
    .min(0)
    .max(1)
    .nullable()
    .default(null)
    .describe('Minimum probability for a token to be considered. If None, falls back to server default.'),
  max_tokens: z.int().min(1).nullable().default(null).describe('Maximum output tokens for evaluation.'),
  min_tokens: z.int().min(0).nullable().default(null).describe('Minimum output tokens for evaluation.'),
  reasoning_effort: z
    .enum(['minimal', 'low', 'medium', 'high'])
    .nullable()
    .default(null)
    .describe('Constrains reasoning effort for reasoning models.'),
  seed: z.int().nullable().default(null).describe('Random seed for evaluation sampling.'),
};

export const evalSamplingSection = () =>
  section(evalSamplingShape, 'Sampling parameters for evaluation (None = server default)');

/**
 * Newer prime-rl spells `sampling.max_tokens` as `max_completion_tokens`; accept it silently so
 * configs written for those versions keep working (the meaning is identical: tokens per turn).
 */
export function samplingRenames(prefix = ''): Rename[] {
  return [{ from: `${prefix}sampling.max_completion_tokens`, to: `${prefix}sampling.max_tokens`, kind: 'alias' }];
}

// ---------------------------------------------------------------------------------------------
// Eval results (save)
// ---------------------------------------------------------------------------------------------

export const evalSaveShape = {
  disk: optionalSection(
    {
      path: pathField()
        .nullable()
        .default(null)
        .describe('Path to save eval results. If None, defaults to <output_dir>/evals/<step_path>/<env_id>.'),
    },
    { description: 'Save eval results to disk. Disabled (None) by default' },
  ),
  hf: meta(
    optionalSection(
      {
        dataset_name: z
          .string()
          .nullable()
          .default(null)
          .describe('Name of HF dataset to save eval results. If None, auto-generates a name.'),
        dataset_subset: z
          .string()
          .nullable()
          .default(null)
          .describe('Subset name of HF dataset. If None, defaults to environment ID.'),
        dataset_split: z
          .string()
          .nullable()
          .default(null)
          .describe("Split name of HF dataset. If None, defaults to 'evals'."),
        private: z.boolean().default(false).describe('Whether to save to a private HF dataset.'),
      },
      {},
    ),
    { unsupported: 'pushing eval results to the Hugging Face Hub' },
  ).describe('Push eval results to a Hugging Face dataset (not supported yet)'),
  env_hub: meta(z.boolean().default(false), {
    unsupported: 'pushing eval results to the Environments Hub',
  }).describe('Whether to push eval results to Prime Environment Hub (not supported yet).'),
  stream: z
    .boolean()
    .default(false)
    .describe('Whether to write each result to disk as soon as it completes (required by resume_path).'),
};

export const evalSaveSection = () => section(evalSaveShape, 'Where to save evaluation results');

// ---------------------------------------------------------------------------------------------
// Profiling / tracing fields shared by trainer and sft
// ---------------------------------------------------------------------------------------------

export const memoryProfilerPathField = () =>
  meta(pathField().nullable().default(null), { unsupported: 'memory profiling' }).describe(
    'Path to write memory profile to.',
  );

export const tracePathField = () =>
  meta(pathField().nullable().default(null), { unsupported: 'profiler tracing' }).describe(
    'Path to write a profiler trace to.',
  );
