// Combined `rl` config: spec config.md §3.6 (seed era) and §2.13 (shared fields).
//
// Decisions (one line each):
// - Seed-era semantics: a shared value OVERWRITES the sub-config values, then the sub-configs are
//   checked for consistency with the seeds' messages. A warning is printed when a sub-config value
//   that was explicitly set (file/env/CLI) is overwritten by a different value.
// - A shared field is propagated when it was set by the user (a file, env or CLI layer) and is not
//   None. Defaults of shared fields are never pushed down, and an explicit `0`/`false` is pushed too
//   (the seed code's "only when truthy" is a [Q] quirk we do not copy).
// - Exception: `output_dir` is always propagated (E1 rule, seed-era tests): trainer, orchestrator and
//   inference all use the run's output_dir (inference writes its logs there).
// - `ckpt` / `wandb`: enabling the shared section (even bare `--ckpt` / `[wandb]`) creates both
//   sub-config sections with defaults, then pushes the fields that were set. `wandb.name` becomes
//   `<name>-trainer` / `<name>-orchestrator` (seed 004).
// - `log.level` / `log.file` go to trainer and orchestrator (inference has no log section).
// - `weight_broadcast.type` switches trainer, orchestrator and inference to that variant (keeping a
//   variant's own fields when it is already selected); with NCCL the trainer's
//   `inference_world_size` is derived from inference dp × tp.
// - `seq_len` (E2) goes to `orchestrator.seq_len`; `max_model_len` goes to
//   `inference.model.max_model_len` (the seed code declared it but never used it, a [Q] no-op).
// - `bench` sets both sub-configs' bench and gives the trainer fake data shaped like the
//   orchestrator's batches; the async-level equality check is skipped in bench mode (the orchestrator
//   then never waits for weights).
// - GPU ids: inference dp := len(inference_gpu_ids) / tp when it differs; with more than one trainer
//   GPU, orchestrator.num_train_workers := len(trainer_gpu_ids) / (cp × tp). Whether the ids exist is
//   checked by the launcher (it probes the devices), not at config time.
// - E2 LoRA rule: with trainer LoRA, orchestrator.lora_name := "r<rank>-a<alpha>" unless set. The
//   inference `enable_lora`/`max_lora_rank` part does not apply (our server loads adapters on demand).
// - The `Jackmin108/` model-name escape hatch of the seed code is not copied.
// - Renames: the sub-configs' tables under `trainer.` / `orchestrator.`, plus shared
//   `max_async_level` → `async_level` and `ckpt.keep` → `ckpt.keep_last` (aliases).
import { meta, optionalSection, requiredSection, section, z } from '@prime-rl/config';
import type { ConfigPath, Rename, ValidationContext, Validator } from '@prime-rl/config';
import { inferenceShape, inferenceValidators } from './inference.js';
import { orchestratorRenames, orchestratorShape, orchestratorValidators } from './orchestrator.js';
import {
  asyncLevelRenames,
  ckptRenames,
  defaultOrchestratorCkpt,
  defaultTrainerCkpt,
  logShape,
  modelNameField,
  NCCL_UNSUPPORTED,
  pathField,
  py,
  pyFloat,
  sharedCkptShape,
  wandbShape,
} from './shared.js';
import { fakeDataShape, trainerRenames, trainerShape, trainerValidators } from './trainer.js';

export const rlShape = {
  trainer: requiredSection(trainerShape, 'RL trainer configuration (usually --trainer @ train.toml)'),
  orchestrator: requiredSection(orchestratorShape, 'Orchestrator configuration (usually --orchestrator @ orch.toml)'),
  inference: optionalSection(inferenceShape, {
    description: 'Inference server configuration. If None, no inference server is started (use a running one)',
  }),
  inference_gpu_ids: z
    .array(z.int().min(0))
    .min(1)
    .default(() => [0])
    .describe('GPU ids for the inference server; its data-parallel size becomes len / tp.'),
  trainer_gpu_ids: z
    .array(z.int().min(0))
    .min(1)
    .default(() => [1])
    .describe('GPU ids for the trainer; with more than one, orchestrator.num_train_workers follows.'),
  output_dir: pathField()
    .default('outputs')
    .describe('Directory to write outputs to; used by trainer, orchestrator and inference.'),
  clean: z
    .boolean()
    .default(true)
    .describe('Whether to delete logs and rollouts (and checkpoints and weights unless resuming) at start.'),
  bench: z.boolean().default(false).describe('Whether to run trainer and orchestrator in benchmark mode.'),
  max_steps: z
    .int()
    .min(0)
    .nullable()
    .default(null)
    .describe('Shared max_steps for trainer and orchestrator. If None, each keeps its own.'),
  async_level: z
    .int()
    .min(0)
    .nullable()
    .default(null)
    .describe('Shared async_level for trainer and orchestrator. If None, each keeps its own.'),
  seq_len: z
    .int()
    .min(1)
    .nullable()
    .default(null)
    .describe('Shared training sequence length (orchestrator.seq_len). If None, the orchestrator keeps its own.'),
  max_model_len: z
    .int()
    .min(1)
    .nullable()
    .default(null)
    .describe('Shared inference.model.max_model_len. If None, inference keeps its own.'),
  model: optionalSection(
    { name: modelNameField() },
    { description: 'Shared model: its name is used by trainer, orchestrator and inference' },
  ),
  ckpt: optionalSection(sharedCkptShape, {
    description: 'Shared checkpointing: enables checkpointing on trainer and orchestrator (disabled by default)',
  }),
  wandb: optionalSection(
    {
      project: wandbShape.project,
      entity: wandbShape.entity,
      name: z
        .string()
        .nullable()
        .default(null)
        .describe('The W&B run name; the trainer logs as <name>-trainer, the orchestrator as <name>-orchestrator.'),
      offline: wandbShape.offline,
    },
    { description: 'Shared W&B logging: enables W&B on trainer and orchestrator (disabled by default)' },
  ),
  log: section({ level: logShape.level, file: logShape.file }, 'Shared logging options for trainer and orchestrator'),
  weight_broadcast: optionalSection(
    {
      type: meta(z.enum(['filesystem', 'nccl']).default('filesystem'), { unsupported: NCCL_UNSUPPORTED }).describe(
        'The type of weight broadcast to use on trainer, orchestrator and inference.',
      ),
    },
    { description: 'Shared weight broadcast type' },
  ),
};

export const rlSchema = z.strictObject(rlShape);
export type RlConfig = z.output<typeof rlSchema>;

// ---------------------------------------------------------------------------------------------
// Propagation
// ---------------------------------------------------------------------------------------------

/** Overwrite `obj[key]`, warning when an explicitly set different value is replaced. */
function put<T extends object, K extends keyof T & string>(
  ctx: ValidationContext,
  target: ConfigPath,
  obj: T,
  key: K,
  value: T[K],
  source: string,
): void {
  const old = obj[key];
  if (!Object.is(old, value) && ctx.isSet(target)) {
    ctx.warn(`Overwriting ${target.join('.')} = ${py(old)} with ${py(value)} from ${source}.`);
  }
  obj[key] = value;
}

/** True when a shared value must be pushed down: set by some layer and not None. */
function given(ctx: ValidationContext, p: ConfigPath, value: unknown): boolean {
  return value !== null && value !== undefined && ctx.isSet(p);
}

export const propagateShared: Validator<RlConfig> = (cfg, ctx) => {
  const t = cfg.trainer;
  const o = cfg.orchestrator;
  const inf = cfg.inference;

  // output_dir: always (E1).
  put(ctx, ['trainer', 'output_dir'], t, 'output_dir', cfg.output_dir, 'the shared output_dir');
  put(ctx, ['orchestrator', 'output_dir'], o, 'output_dir', cfg.output_dir, 'the shared output_dir');
  if (inf) put(ctx, ['inference', 'output_dir'], inf, 'output_dir', cfg.output_dir, 'the shared output_dir');

  // model.name
  if (cfg.model && given(ctx, ['model', 'name'], cfg.model.name)) {
    const src = 'the shared model.name';
    put(ctx, ['trainer', 'model', 'name'], t.model, 'name', cfg.model.name, src);
    put(ctx, ['orchestrator', 'model', 'name'], o.model, 'name', cfg.model.name, src);
    if (inf) put(ctx, ['inference', 'model', 'name'], inf.model, 'name', cfg.model.name, src);
  }

  // max_steps, async_level
  if (given(ctx, ['max_steps'], cfg.max_steps)) {
    put(ctx, ['trainer', 'max_steps'], t, 'max_steps', cfg.max_steps, 'the shared max_steps');
    put(ctx, ['orchestrator', 'max_steps'], o, 'max_steps', cfg.max_steps, 'the shared max_steps');
  }
  if (cfg.async_level !== null && given(ctx, ['async_level'], cfg.async_level)) {
    put(ctx, ['trainer', 'async_level'], t, 'async_level', cfg.async_level, 'the shared async_level');
    put(ctx, ['orchestrator', 'async_level'], o, 'async_level', cfg.async_level, 'the shared async_level');
  }

  // seq_len, max_model_len
  if (cfg.seq_len !== null && given(ctx, ['seq_len'], cfg.seq_len)) {
    put(ctx, ['orchestrator', 'seq_len'], o, 'seq_len', cfg.seq_len, 'the shared seq_len');
  }
  if (inf && given(ctx, ['max_model_len'], cfg.max_model_len)) {
    put(
      ctx,
      ['inference', 'model', 'max_model_len'],
      inf.model,
      'max_model_len',
      cfg.max_model_len,
      'the shared max_model_len',
    );
  }

  // ckpt: a shared section creates both sub-config sections.
  if (cfg.ckpt) {
    t.ckpt ??= defaultTrainerCkpt();
    o.ckpt ??= defaultOrchestratorCkpt();
    for (const key of ['interval', 'resume_step', 'keep_last', 'keep_interval'] as const) {
      const value = cfg.ckpt[key];
      if (given(ctx, ['ckpt', key], value)) {
        put(ctx, ['trainer', 'ckpt', key], t.ckpt, key, value, `the shared ckpt.${key}`);
        put(ctx, ['orchestrator', 'ckpt', key], o.ckpt, key, value, `the shared ckpt.${key}`);
      }
    }
  }

  // wandb: a shared section creates both sub-config sections; names get suffixes.
  if (cfg.wandb) {
    const w = cfg.wandb;
    for (const [sub, conf] of [
      ['trainer', t],
      ['orchestrator', o],
    ] as const) {
      conf.wandb ??= z.strictObject(wandbShape).parse({});
      const target = conf.wandb;
      if (given(ctx, ['wandb', 'project'], w.project)) {
        put(ctx, [sub, 'wandb', 'project'], target, 'project', w.project, 'the shared wandb.project');
      }
      if (given(ctx, ['wandb', 'entity'], w.entity)) {
        put(ctx, [sub, 'wandb', 'entity'], target, 'entity', w.entity, 'the shared wandb.entity');
      }
      if (given(ctx, ['wandb', 'offline'], w.offline)) {
        put(ctx, [sub, 'wandb', 'offline'], target, 'offline', w.offline, 'the shared wandb.offline');
      }
      if (given(ctx, ['wandb', 'name'], w.name)) {
        put(ctx, [sub, 'wandb', 'name'], target, 'name', `${w.name}-${sub}`, 'the shared wandb.name');
      }
    }
  }

  // log
  for (const key of ['level', 'file'] as const) {
    if (given(ctx, ['log', key], cfg.log[key])) {
      put(ctx, ['trainer', 'log', key], t.log, key, cfg.log[key], `the shared log.${key}`);
      put(ctx, ['orchestrator', 'log', key], o.log, key, cfg.log[key], `the shared log.${key}`);
    }
  }

  // weight_broadcast.type
  if (cfg.weight_broadcast && given(ctx, ['weight_broadcast', 'type'], cfg.weight_broadcast.type)) {
    const type = cfg.weight_broadcast.type;
    const warnSwitch = (sub: string, old: string) => {
      if (old !== type && ctx.isSet([sub, 'weight_broadcast', 'type'])) {
        ctx.warn(
          `Overwriting ${sub}.weight_broadcast.type = ${old} with ${type} from the shared weight_broadcast.type.`,
        );
      }
    };
    if (t.weight_broadcast.type !== type) {
      warnSwitch('trainer', t.weight_broadcast.type);
      t.weight_broadcast = trainerShape.weight_broadcast.parse({ type });
    }
    if (o.weight_broadcast.type !== type) {
      warnSwitch('orchestrator', o.weight_broadcast.type);
      o.weight_broadcast = orchestratorShape.weight_broadcast.parse({ type });
    }
    if (inf && inf.weight_broadcast.type !== type) {
      warnSwitch('inference', inf.weight_broadcast.type);
      inf.weight_broadcast = inferenceShape.weight_broadcast.parse({ type });
    }
  }

  // bench
  if (given(ctx, ['bench'], cfg.bench)) {
    put(ctx, ['trainer', 'bench'], t, 'bench', cfg.bench, 'the shared bench');
    put(ctx, ['orchestrator', 'bench'], o, 'bench', cfg.bench, 'the shared bench');
    if (cfg.bench) {
      t.data.fake ??= z.strictObject(fakeDataShape).parse({});
      const src = 'the orchestrator batch shape (shared bench)';
      put(ctx, ['trainer', 'data', 'fake', 'batch_size'], t.data.fake, 'batch_size', o.batch_size, src);
      put(ctx, ['trainer', 'data', 'fake', 'seq_len'], t.data.fake, 'seq_len', o.seq_len, src);
    }
  }

  // GPU assignment
  if (inf) {
    const n = cfg.inference_gpu_ids.length;
    const tp = inf.parallel.tp;
    if (n % tp !== 0) {
      ctx.error(['inference_gpu_ids'], 'Number of inference GPUs must be divisible by the tensor parallel size');
    } else if (n !== inf.parallel.dp * tp) {
      put(ctx, ['inference', 'parallel', 'dp'], inf.parallel, 'dp', n / tp, `${n} inference_gpu_ids / tp ${tp}`);
    }
  }
  if (cfg.trainer_gpu_ids.length > 1) {
    const perWorker = t.model.cp * t.model.tp;
    const workers = Math.max(1, Math.floor(cfg.trainer_gpu_ids.length / perWorker));
    put(ctx, ['orchestrator', 'num_train_workers'], o, 'num_train_workers', workers, 'trainer_gpu_ids');
  }

  // NCCL: trainer needs the inference world size.
  if (t.weight_broadcast.type === 'nccl' && inf) {
    t.weight_broadcast.inference_world_size = inf.parallel.dp * inf.parallel.tp;
  }

  // LoRA adapter name (E2).
  const lora = t.model.experimental.lora;
  if (lora && o.lora_name === null) o.lora_name = `r${lora.rank}-a${pyFloat(lora.alpha)}`;
};

/** NCCL needs at least two distinct GPUs across trainer and inference. */
export const ncclNeedsTwoGpus: Validator<RlConfig> = (cfg, ctx) => {
  const types = [cfg.trainer.weight_broadcast.type, cfg.orchestrator.weight_broadcast.type];
  if (cfg.inference) types.push(cfg.inference.weight_broadcast.type);
  if (!types.includes('nccl')) return;
  const distinct = new Set([...cfg.inference_gpu_ids, ...cfg.trainer_gpu_ids]);
  if (distinct.size < 2) {
    ctx.error([], 'NCCL weight broadcast requires at least 2 GPUs to build the broadcast process group.');
  }
};

/** Run each sub-config's own validators (after propagation). */
export const subConfigValidators: Validator<RlConfig> = (cfg, ctx) => {
  const tctx = ctx.at(['trainer']);
  for (const v of trainerValidators) v(cfg.trainer, tctx);
  const octx = ctx.at(['orchestrator']);
  for (const v of orchestratorValidators) v(cfg.orchestrator, octx);
  if (cfg.inference) {
    const ictx = ctx.at(['inference']);
    for (const v of inferenceValidators) v(cfg.inference, ictx);
  }
};

// ---------------------------------------------------------------------------------------------
// Consistency checks (seed-era messages)
// ---------------------------------------------------------------------------------------------

function same(
  ctx: ValidationContext,
  what: string,
  a: { label: string; value: unknown },
  b: { label: string; value: unknown },
): void {
  if (!Object.is(a.value, b.value)) {
    ctx.error(
      [],
      `${a.label} ${what} (${py(a.value)}) and ${b.label} ${what} (${py(b.value)}) are not the same. Please specify the same ${what} for both.`,
    );
  }
}

export const consistencyChecks: Validator<RlConfig> = (cfg, ctx) => {
  const t = cfg.trainer;
  const o = cfg.orchestrator;
  const inf = cfg.inference;
  const T = (value: unknown) => ({ label: 'Trainer', value });
  const O = (value: unknown) => ({ label: 'orchestrator', value });

  if (t.ckpt && !o.ckpt) {
    ctx.error(
      [],
      'Trainer checkpoint config is specified, but orchestrator checkpoint config is not. Please setup checkpointing on both or neither.',
    );
  } else if (!t.ckpt && o.ckpt) {
    ctx.error(
      [],
      'Orchestrator checkpoint config is specified, but trainer checkpoint config is not. Please setup checkpointing on both or neither.',
    );
  } else if (t.ckpt && o.ckpt) {
    same(ctx, 'checkpoint interval', T(t.ckpt.interval), O(o.ckpt.interval));
    same(ctx, 'checkpoint resume step', T(t.ckpt.resume_step), O(o.ckpt.resume_step));
  }

  same(ctx, 'model name', T(t.model.name), O(o.model.name));
  if (inf) same(ctx, 'model name', { label: 'Inference', value: inf.model.name }, O(o.model.name));
  same(ctx, 'max steps', T(t.max_steps), O(o.max_steps));
  if (!(t.bench && o.bench)) same(ctx, 'async level', T(t.async_level), O(o.async_level));
  same(ctx, 'output directory', T(t.output_dir), O(o.output_dir));
  if (t.wandb && o.wandb) same(ctx, 'W&B project', T(t.wandb.project), O(o.wandb.project));
  same(ctx, 'weight broadcast type', T(t.weight_broadcast.type), O(o.weight_broadcast.type));
  if (inf) {
    same(
      ctx,
      'weight broadcast type',
      { label: 'Inference', value: inf.weight_broadcast.type },
      O(o.weight_broadcast.type),
    );
  }
  same(ctx, 'benchmark mode', T(t.bench), O(o.bench));

  for (const [label, conf] of [
    ['trainer', t],
    ['orchestrator', o],
  ] as const) {
    if (conf.wandb && conf.wandb.id === null && conf.ckpt && conf.ckpt.resume_step !== null) {
      ctx.warn(
        `W&B run ID is not set for ${label} even though resuming training. The current run will be created as a new run.`,
      );
    }
  }
};

export const rlValidators: ReadonlyArray<Validator<RlConfig>> = [
  propagateShared,
  subConfigValidators,
  ncclNeedsTwoGpus,
  consistencyChecks,
];

export function rlRenames(): Rename[] {
  return [
    ...asyncLevelRenames(),
    ...ckptRenames(),
    ...trainerRenames('trainer.'),
    ...orchestratorRenames('orchestrator.'),
  ];
}
