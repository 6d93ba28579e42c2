// Translating a hosted config into the combined prime-rl `rl` config (config.md §4.4).
// The result is a raw table with the snake_case keys an `rl.toml` would have; the `rl` schema fills
// every default. Keys are only written when the hosted config sets them, so nothing here is null.
import type { HostedConfig, HostedEnv, HostedEvalEnv } from './schema.js';

export type RawTable = Record<string, unknown>;

export interface RlMappingOptions {
  /** The cluster's sequence length, when the caller knows it (shared `seq_len`). */
  seqLen?: number;
}

/** Copy the keys whose value is defined; `undefined` means "not set by the user". */
function defined(obj: Record<string, unknown>): RawTable {
  const out: RawTable = {};
  for (const [k, v] of Object.entries(obj)) if (v !== undefined) out[k] = v;
  return out;
}

function mapEnv(env: HostedEnv): RawTable {
  return defined({ id: env.id, name: env.name, args: env.args });
}

function mapEvalEnv(env: HostedEvalEnv): RawTable {
  return defined({
    id: env.id,
    name: env.name,
    args: env.args,
    num_examples: env.num_examples,
    rollouts_per_example: env.rollouts_per_example,
  });
}

/**
 * The `rl` config of a hosted run.
 *
 * - shared `model.name`, `max_steps`, `async_level` (from `max_async_level`), `wandb`, and `seq_len`
 *   when the cluster's sequence length is given;
 * - `orchestrator`: batch size, group size, sampling, envs, eval (only with `[[eval.env]]` entries),
 *   val, buffer (`simple` variant), oversampling factor, trajectory strategy;
 * - `trainer`: learning rate, and LoRA always on (hosted runs train LoRA adapters) with `lora_alpha`;
 * - `inference`: enabled with defaults (the model name comes from the shared field).
 */
export function hostedToRl(config: HostedConfig, opts: RlMappingOptions = {}): RawTable {
  const orchestrator: RawTable = {
    batch_size: config.batch_size,
    rollouts_per_example: config.rollouts_per_example,
  };
  if (config.oversampling_factor !== undefined) orchestrator.oversampling_factor = config.oversampling_factor;
  if (config.trajectory_strategy !== undefined) orchestrator.trajectory_strategy = config.trajectory_strategy;

  const sampling = defined({ max_tokens: config.sampling?.max_tokens, temperature: config.sampling?.temperature });
  if (Object.keys(sampling).length > 0) orchestrator.sampling = sampling;

  orchestrator.env = config.env.map(mapEnv);

  if (config.eval && config.eval.env.length > 0) {
    orchestrator.eval = defined({
      interval: config.eval.interval,
      num_examples: config.eval.num_examples,
      rollouts_per_example: config.eval.rollouts_per_example,
      eval_base_model: config.eval.eval_base_model,
      env: config.eval.env.map(mapEvalEnv),
    });
  }
  if (config.val) orchestrator.val = defined({ ...config.val });
  if (config.buffer) orchestrator.buffer = { type: 'simple', ...defined({ ...config.buffer }) };

  const trainer: RawTable = {
    model: { experimental: { lora: defined({ alpha: config.lora_alpha }) } },
  };
  if (config.learning_rate !== undefined) trainer.optim = { type: 'adamw', lr: config.learning_rate };

  const rl: RawTable = {
    model: { name: config.model },
    max_steps: config.max_steps,
  };
  if (opts.seqLen !== undefined) rl.seq_len = opts.seqLen;
  if (config.max_async_level !== undefined) rl.async_level = config.max_async_level;
  const wandb = config.wandb;
  if (wandb && (wandb.project !== undefined || wandb.entity !== undefined)) {
    rl.wandb = defined({ project: wandb.project, entity: wandb.entity, name: wandb.name });
  }
  rl.trainer = trainer;
  rl.orchestrator = orchestrator;
  rl.inference = {};
  return rl;
}
