// Sections shared by the two training entrypoints (RL `trainer` and `sft`): the trained model, the
// optimizer, the LR scheduler, weight checkpoints, and the rules on them (T1–T5 of config.md §3.3).
//
// Capability decisions (one line each):
// - `model.attn` keeps the seed default `flash_attention_2` and is NOT marked unsupported: our engine
//   has one causal attention kernel (GQA over packed sequences); every value selects it.
// - `model.impl`: `hf`, `custom` and `auto` all select our engine's implementation of the architecture
//   (loaded from the Hugging Face layout); `liger_kernel` is rejected by a validator (Liger kernels
//   are CUDA/Triton code that does not exist in a TS engine). A per-value rejection cannot use `meta`.
// - `model.compile` (torch.compile) → unsupported "model compilation".
// - `model.ac` (activation recompute per layer) is supported.
// - `model.ac_offloading` → unsupported "activation offloading".
// - `model.dp_replicate` / `ep` / `tp` / `cp` > 1 → unsupported (replicated data parallelism, expert,
//   tensor, context parallelism).
// - `model.optimization_dtype` / `reduce_dtype`: default float32 is what we do; bfloat16 → unsupported.
// - `model.reshard_after_forward`, `load_using_meta`, `moe_use_grouped_mm`: accepted, documented as
//   having no effect on our engine (they tune FSDP/torch internals); `load_using_meta` still gates
//   `debug.random_init` (T2) so seed configs validate the same way.
// - `model.trust_remote_code` is accepted (it only grants a permission; we never run repository code).
// - `weights.save_format` keeps the seed default `torch` and is NOT unsupported: weights are always
//   written as safetensors in Hugging Face layout, whatever the value.
// - `weights.save_sharded` → unsupported "sharded weight checkpointing".
// - `model.lora` (E2/HEAD location) is a deprecated spelling of the seed's `model.experimental.lora`.
// - Muon keeps the seed's betas (0.9/0.999, used by its AdamW sub-optimizer; the seed era silently
//   ignored them — a [Q] quirk we do not copy) and adds `mu` = 0.95 (momentum of the Muon update).
// - Scheduler/max_steps rules (linear needs a phase, decay/cosine need max_steps and must fit in it)
//   are checked here because the schedule is undefined otherwise (spec rl.md §8.2).
import { meta, optionalSection, section, union, variant, z } from '@prime-rl/config';
import type { Rename, Validator } from '@prime-rl/config';
import { modelNameField, py } from './shared.js';

// ---------------------------------------------------------------------------------------------
// [model]
// ---------------------------------------------------------------------------------------------

export const DEFAULT_LORA_TARGET_MODULES = [
  'q_proj',
  'k_proj',
  'v_proj',
  'o_proj',
  'gate_proj',
  'up_proj',
  'down_proj',
];

export const loraShape = {
  rank: z.int().min(1).default(16).describe('Rank of the low-rank decomposition matrices.'),
  alpha: z.number().min(0).default(16.0).describe('LoRA scaling parameter.'),
  dropout: z.number().min(0).max(1).default(0.0).describe('LoRA dropout rate.'),
  target_modules: z
    .array(z.string().min(1))
    .default(() => [...DEFAULT_LORA_TARGET_MODULES])
    .describe('Module names or regex patterns for modules to apply LoRA to.'),
  modules_to_save: z
    .array(z.string().min(1))
    .default(() => [])
    .describe('Module names or regex patterns for modules to keep fully trainable.'),
};

const parallelDegree = (capability: string, description: string) =>
  meta(z.int().min(1).default(1), { unsupported: capability }).describe(description);

const trainDtype = (description: string) =>
  meta(z.enum(['bfloat16', 'float32']).default('float32'), { unsupported: 'bfloat16 training' }).describe(description);

export const trainModelShape = {
  name: modelNameField(),
  attn: z
    .enum(['sdpa', 'flash_attention_2', 'flash_attention_3'])
    .default('flash_attention_2')
    .describe(
      'The attention implementation to use. Our engine has a single causal attention kernel, which every value selects.',
    ),
  compile: meta(
    optionalSection(
      { fullgraph: z.boolean().default(false).describe('Whether to compile transformer blocks with fullgraph.') },
      {},
    ),
    { unsupported: 'model compilation' },
  ).describe('Compile the transformer blocks (not supported yet)'),
  ac: optionalSection(
    {
      freq: z
        .int()
        .min(1)
        .default(1)
        .describe('Applies activation checkpointing to every `freq` layers. 1 = full activation checkpointing.'),
    },
    {
      description: 'Activation checkpointing (recompute activations in the backward pass). Disabled (None) by default',
    },
  ),
  ac_offloading: meta(
    optionalSection(
      {
        pin_memory: z.boolean().default(true).describe('Whether to pin the offloaded activations to CPU memory.'),
        max_inflight_activations: z
          .int()
          .min(1)
          .default(5)
          .describe('Maximum number of activations to keep while offloading further.'),
      },
      {},
    ),
    { unsupported: 'activation offloading' },
  ).describe('Offload checkpointed activations to CPU memory (not supported yet)'),
  reshard_after_forward: z
    .boolean()
    .default(true)
    .describe(
      'Whether to reshard the model after each forward pass (sharded data parallelism only; no effect otherwise).',
    ),
  trust_remote_code: z
    .boolean()
    .default(false)
    .describe(
      'Whether to trust remote code for model and tokenizer initialization. We never execute code from a model repository, so this only grants a permission.',
    ),
  dp_replicate: parallelDegree(
    'replicated data parallelism',
    'The data parallel dim where model weights are replicated.',
  ),
  ep: parallelDegree(
    'expert parallelism',
    'The expert parallelism to use if the model has MoE layers. If 1, no EP is used.',
  ),
  tp: parallelDegree('tensor parallelism', 'The tensor parallelism size to use. If 1, no TP is used.'),
  cp: parallelDegree('context parallelism', 'The context parallelism size to use. If 1, no CP is used.'),
  impl: z
    .enum(['hf', 'liger_kernel', 'custom', 'auto'])
    .default('hf')
    .describe(
      'Model implementation. "hf", "custom" and "auto" all select our engine\'s implementation of the architecture; "liger_kernel" is not supported yet.',
    ),
  load_using_meta: z
    .boolean()
    .default(false)
    .describe('Whether to build the model without allocating weights, then load them from the HF checkpoint.'),
  optimization_dtype: trainDtype('The dtype to use for model optimization.'),
  reduce_dtype: trainDtype('The dtype to use for model reduce.'),
  moe_use_grouped_mm: z
    .boolean()
    .default(true)
    .describe('Whether to use grouped matmuls for MoE layers (a CUDA tuning knob; no effect on our engine).'),
  debug: section(
    {
      num_layers: z.int().min(1).nullable().default(null).describe('The number of layers in the model.'),
      random_init: z.boolean().default(false).describe('Whether to randomly initialize the model.'),
    },
    'Debug options for the model',
  ),
  experimental: section(
    {
      lora: optionalSection(loraShape, { description: 'LoRA adapters. Disabled (None) by default' }),
    },
    'Experimental model features',
  ),
};

export const trainModelSection = () => section(trainModelShape, 'Model to train');

type TrainModel = z.output<ReturnType<typeof trainModelSection>>;

/** `model.lora` (E2/HEAD) → `model.experimental.lora` (seed): deprecated, translated with a warning. */
export function loraRenames(prefix = ''): Rename[] {
  return [{ from: `${prefix}model.lora`, to: `${prefix}model.experimental.lora`, kind: 'deprecated' }];
}

// ---------------------------------------------------------------------------------------------
// [optim], [scheduler]
// ---------------------------------------------------------------------------------------------

const optimCommon = {
  lr: z.number().min(0).default(1e-6).describe('Learning rate.'),
  weight_decay: z.number().min(0).default(0.01).describe('Weight decay.'),
  max_norm: z.number().min(0).default(1.0).describe('Maximum gradient norm to clip.'),
};

const betas = {
  betas1: z.number().min(0).lt(1).default(0.9).describe('Beta1 parameter.'),
  betas2: z.number().min(0).lt(1).default(0.999).describe('Beta2 parameter.'),
};

export const optimUnion = () =>
  union(
    [
      variant('adamw', { ...optimCommon, ...betas }, 'AdamW (decoupled weight decay).'),
      variant(
        'sgd',
        {
          ...optimCommon,
          nesterov: z.boolean().default(true).describe('Whether to use Nesterov momentum.'),
          momentum: z.number().min(0).default(0.9).describe('Momentum factor.'),
        },
        'SGD with momentum (coupled L2 weight decay).',
      ),
      variant(
        'muon',
        {
          ...optimCommon,
          ...betas,
          mu: z.number().min(0).lt(1).default(0.95).describe('Momentum of the Muon update.'),
        },
        'Muon for 2-D weight matrices, AdamW (betas1/betas2) for the other parameters.',
      ),
    ],
    'adamw',
    'Optimizer',
  );

const warmupSteps = () => z.int().min(0).default(10).describe('Number of warmup steps.');
const minLr = () => z.number().min(0).default(0.0).describe('Minimum learning rate to converge to.');

export const schedulerUnion = () =>
  union(
    [
      variant('constant', {}, 'Constant learning rate.'),
      variant(
        'linear',
        {
          warmup_steps: warmupSteps(),
          decay_steps: z.int().min(0).default(10).describe('Number of decay steps during final portion of training.'),
          min_lr: minLr(),
        },
        'Linear warmup, constant, then linear decay over the last decay_steps.',
      ),
      variant(
        'cosine',
        { warmup_steps: warmupSteps(), min_lr: minLr() },
        'Linear warmup, then cosine decay to min_lr.',
      ),
    ],
    'constant',
    'Learning rate scheduler',
  );

// ---------------------------------------------------------------------------------------------
// [weights]
// ---------------------------------------------------------------------------------------------

export const weightsSection = () =>
  section(
    {
      interval: z
        .int()
        .min(1)
        .nullable()
        .default(null)
        .describe(
          'Interval at which to save weight checkpoint. If None, saves all necessary weight checkpoints on RL trainer and only final weight checkpoint on SFT trainer.',
        ),
      save_sharded: meta(z.boolean().default(false), { unsupported: 'sharded weight checkpointing' }).describe(
        'Whether to save the weight checkpoint in sharded format.',
      ),
      save_format: z
        .enum(['safetensors', 'torch'])
        .default('torch')
        .describe(
          'The format to save the weight checkpoint in. Our trainer always writes safetensors in Hugging Face layout, whatever the value.',
        ),
      save_async: z.boolean().default(true).describe('Whether to save the weight checkpoint asynchronously.'),
      save_adapter_separately: z
        .boolean()
        .default(false)
        .describe('Whether to save LoRA adapters separately before merging into full model weights.'),
    },
    'Weight checkpoints (Hugging Face layout)',
  );

// ---------------------------------------------------------------------------------------------
// Validators shared by trainer and sft
// ---------------------------------------------------------------------------------------------

interface HasModel {
  model: TrainModel;
}

/** Liger kernels do not exist in our engine. */
export const noLigerImpl: Validator<HasModel> = (cfg, ctx) => {
  if (cfg.model.impl === 'liger_kernel') {
    ctx.error(['model', 'impl'], 'Liger kernels are not supported yet; use model.impl = "hf"');
  }
};

/** T1. */
export const trustRemoteCodeNeedsHf: Validator<HasModel> = (cfg, ctx) => {
  if (cfg.model.trust_remote_code && cfg.model.impl !== 'hf' && cfg.model.impl !== 'auto') {
    ctx.error(['model'], 'Trust remote code is only supported with the HF implementation.');
  }
};

/** T2. */
export const randomInitNeedsMeta: Validator<HasModel> = (cfg, ctx) => {
  if (cfg.model.debug.random_init && !cfg.model.load_using_meta) {
    ctx.error(['model'], 'Random initialize is only supported when loading with meta.');
  }
};

/** T3 (E2 message). */
export const cpNeedsFlashAttention: Validator<HasModel> = (cfg, ctx) => {
  const { cp, attn } = cfg.model;
  if (cp > 1 && attn !== 'flash_attention_2' && attn !== 'flash_attention_3') {
    ctx.error(['model'], 'CP is only supported with flash attention 2 or flash attention 3');
  }
};

/** T4. */
export const tracingNeedsFewSteps: Validator<{ trace_path: string | null; max_steps: number | null }> = (cfg, ctx) => {
  if (cfg.trace_path === null) return;
  if (cfg.max_steps === null) {
    ctx.error(['max_steps'], 'Must specify max_steps when tracing');
  } else if (cfg.max_steps >= 10) {
    ctx.error(
      ['max_steps'],
      `Tracing more than 10 steps is not recommended as the trace becomes very large (max_steps = ${cfg.max_steps}). Set max_steps below 10.`,
    );
  }
};

/** T5. */
export const adapterNeedsLora: Validator<HasModel & { weights: { save_adapter_separately: boolean } }> = (cfg, ctx) => {
  if (cfg.weights.save_adapter_separately && cfg.model.experimental.lora === null) {
    ctx.error(
      ['weights', 'save_adapter_separately'],
      'save_adapter_separately=True requires LoRA to be enabled. Set model.experimental.lora or disable save_adapter_separately.',
    );
  }
};

type Scheduler = z.output<ReturnType<typeof schedulerUnion>>;

/** The LR schedule must be computable from max_steps (rl.md §8.2). */
export const schedulerFitsMaxSteps: Validator<{ scheduler: Scheduler; max_steps: number | null }> = (cfg, ctx) => {
  const s = cfg.scheduler;
  const max = cfg.max_steps;
  if (s.type === 'linear') {
    if (s.warmup_steps === 0 && s.decay_steps === 0) {
      ctx.error(
        ['scheduler'],
        'The linear scheduler needs warmup_steps > 0 or decay_steps > 0 (use type = "constant" otherwise)',
      );
    }
    if (s.decay_steps > 0 && max === null) {
      ctx.error(
        ['scheduler', 'decay_steps'],
        'The linear scheduler decays over the last decay_steps of training, so max_steps must be set',
      );
    }
    if (max !== null && s.warmup_steps + s.decay_steps > max) {
      ctx.error(
        ['scheduler'],
        `warmup_steps (${s.warmup_steps}) + decay_steps (${s.decay_steps}) must not exceed max_steps (${max})`,
      );
    }
  } else if (s.type === 'cosine') {
    if (max === null) {
      ctx.error(['scheduler'], 'The cosine scheduler decays until max_steps, so max_steps must be set');
    } else if (s.warmup_steps >= max) {
      ctx.error(
        ['scheduler', 'warmup_steps'],
        `warmup_steps (${s.warmup_steps}) must be less than max_steps (${py(max)})`,
      );
    }
  }
};

export const modelValidators: ReadonlyArray<Validator<HasModel>> = [
  noLigerImpl,
  trustRemoteCodeNeedsHf,
  randomInitNeedsMeta,
  cpNeedsFlashAttention,
];
