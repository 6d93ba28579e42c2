// The body of "create a run" (`POST /api/v1/rft/runs`), built from a validated hosted config
// (hosted CLI spec C.4 step 5). Optional keys are present only when the config sets them.
import type { HostedConfig, TrajectoryStrategy } from 'prime-rl/hosted';

export interface RunRequestEnv {
  id: string;
  name?: string;
  /** Only when non-empty. */
  args?: Record<string, unknown>;
}

export interface RunRequestEvalEnv extends RunRequestEnv {
  num_examples?: number;
  rollouts_per_example?: number;
}

export interface RunSecret {
  key: string;
  value: string;
}

export interface RunRequest {
  model: { name: string };
  environments: RunRequestEnv[];
  rollouts_per_example: number;
  max_steps: number;
  batch_size: number;
  /** Always present, possibly empty. */
  secrets: RunSecret[];
  trajectory_strategy?: TrajectoryStrategy;
  name?: string;
  monitoring?: { wandb: { entity?: string; project?: string; name?: string } };
  team_id?: string;
  max_tokens?: number;
  temperature?: number;
  /** Only when there is at least one eval environment. */
  eval?: {
    environments: RunRequestEvalEnv[];
    interval?: number;
    num_examples?: number;
    rollouts_per_example?: number;
    eval_base_model?: boolean;
  };
  /** Present when the config has a `[val]` table (an empty table enables validation with defaults). */
  val?: { num_examples?: number; rollouts_per_example?: number; interval?: number };
  /** Present when the config has a `[buffer]` table. */
  buffer?: Record<string, unknown>;
  learning_rate?: number;
  lora_alpha?: number;
  oversampling_factor?: number;
  max_async_level?: number;
}

/** The request as it may be shown or logged: secret names only. */
export type RedactedRunRequest = Omit<RunRequest, 'secrets'> & { secrets: Array<{ key: string }> };

function defined<T extends object>(obj: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) if (v !== undefined) out[k] = v;
  return out as T;
}

function nonEmpty(args: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  return args !== undefined && Object.keys(args).length > 0 ? args : undefined;
}

export interface RunRequestOptions {
  /** `PRIME_TEAM_ID` (or the saved config's team). */
  teamId?: string;
}

export function buildRunRequest(
  config: HostedConfig,
  secrets: ReadonlyMap<string, string>,
  opts: RunRequestOptions = {},
): RunRequest {
  const req: RunRequest = {
    model: { name: config.model },
    environments: config.env.map((e) => defined({ id: e.id, name: e.name, args: nonEmpty(e.args) })),
    rollouts_per_example: config.rollouts_per_example,
    max_steps: config.max_steps,
    batch_size: config.batch_size,
    secrets: [...secrets].map(([key, value]) => ({ key, value })),
  };
  if (config.trajectory_strategy !== undefined) req.trajectory_strategy = config.trajectory_strategy;
  if (config.name !== undefined) req.name = config.name;
  const w = config.wandb;
  if (w && (w.entity !== undefined || w.project !== undefined || w.name !== undefined)) {
    req.monitoring = { wandb: defined({ entity: w.entity, project: w.project, name: w.name }) };
  }
  if (opts.teamId) req.team_id = opts.teamId;
  if (config.sampling?.max_tokens) req.max_tokens = config.sampling.max_tokens;
  if (config.sampling?.temperature !== undefined) req.temperature = config.sampling.temperature;
  const ev = config.eval;
  if (ev && ev.env.length > 0) {
    req.eval = defined({
      environments: ev.env.map((e) =>
        defined({
          id: e.id,
          name: e.name,
          args: nonEmpty(e.args),
          num_examples: e.num_examples,
          rollouts_per_example: e.rollouts_per_example,
        }),
      ),
      interval: ev.interval,
      num_examples: ev.num_examples,
      rollouts_per_example: ev.rollouts_per_example,
      eval_base_model: ev.eval_base_model,
    });
  }
  if (config.val) req.val = defined({ ...config.val });
  if (config.buffer) req.buffer = defined({ ...config.buffer });
  if (config.learning_rate !== undefined) req.learning_rate = config.learning_rate;
  if (config.lora_alpha !== undefined) req.lora_alpha = config.lora_alpha;
  if (config.oversampling_factor !== undefined) req.oversampling_factor = config.oversampling_factor;
  if (config.max_async_level !== undefined) req.max_async_level = config.max_async_level;
  return req;
}

/** Replace every secret by its name. */
export function redactRunRequest(req: RunRequest): RedactedRunRequest {
  return { ...req, secrets: req.secrets.map((s) => ({ key: s.key })) };
}
