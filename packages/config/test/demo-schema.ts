// The stand-in root config "D" of the config spec's acceptance tests: one field of every construct.
import { dict, optionalSection, section, union, variant, z, type ConfigSpec } from '../src/index.js';

export const demoSchema = z.strictObject({
  name: z.string().default('experiment').describe('Experiment name'),
  seed: z.int().default(42).describe('Random seed'),
  max_steps: z.int().nullable().default(null).describe('Steps to run; None = forever'),
  lr: z.number().min(0).default(1e-4).describe('Learning rate'),
  enabled: z.boolean().default(false),
  clean: z.boolean().default(true),
  tags: z.array(z.string()).default([]),
  gpu_ids: z.array(z.int()).default([0]),
  extra: dict('Free-form extras'),
  nested: section({
    lr: z.number().default(1e-4),
    weight_decay: z.number().default(0.01),
    label: z.string().default('default'),
  }),
  model: section({
    name: z.string().default('Qwen/Qwen3-0.6B'),
    max_model_len: z.int().nullable().default(null),
    compile: optionalSection({ fullgraph: z.boolean().default(false), dynamic: z.boolean().default(true) }),
  }),
  ckpt: optionalSection({
    interval: z.int().min(1).nullable().default(null),
    keep_last: z.int().min(1).nullable().default(null),
  }),
  file_monitor: optionalSection({ path: z.string().default('metrics.jsonl') }, { enabled: true }),
  optim: union(
    [
      variant('adamw', { lr: z.number().default(1e-6), betas1: z.number().default(0.9) }),
      variant('muon', { lr: z.number().default(1e-6), mu: z.number().default(0.95) }),
    ],
    'adamw',
  ),
  scheduler: union(
    [
      variant('constant', {}),
      variant('cosine', { warmup_steps: z.int().default(10), min_lr: z.number().default(0.0) }),
    ],
    'constant',
  ),
  env: z
    .array(
      z.strictObject({
        id: z.string().default('reverse-text'),
        name: z.string().nullable().default(null),
        args: dict(),
      }),
    )
    .default([{ id: 'reverse-text', name: null, args: {} }]),
  sampling: section({
    max_completion_tokens: z.int().nullable().default(null),
  }),
});

export type Demo = z.output<typeof demoSchema>;

export const demoSpec: ConfigSpec<typeof demoSchema> = {
  name: 'DemoConfig',
  prog: 'demo',
  schema: demoSchema,
  renames: [{ from: 'sampling.max_tokens', to: 'sampling.max_completion_tokens' }],
};
