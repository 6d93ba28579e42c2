// Config schemas of every prime-rl entrypoint, one `ConfigSpec` each. The sections and rules live in
// one file per concept: shared.ts (sections reused everywhere), training.ts (trainer/sft model,
// optimizer, scheduler, weights), orchestrator.ts, trainer.ts, inference.ts, sft.ts, eval.ts,
// synthesize.ts and rl.ts (the combined launcher config).
import type { ConfigSpec, DryRunFile, z } from '@prime-rl/config';
import { evalRenames, evalSchema, evalValidators } from './eval.js';
import { inferenceSchema, inferenceValidators } from './inference.js';
import { orchestratorRenames, orchestratorSchema, orchestratorValidators } from './orchestrator.js';
import { rlRenames, rlSchema, rlValidators } from './rl.js';
import { sftRenames, sftSchema, sftValidators } from './sft.js';
import { synthesizeRenames, synthesizeSchema, synthesizeValidators } from './synthesize.js';
import { trainerRenames, trainerSchema, trainerValidators } from './trainer.js';

export { evalSchema, type EvalConfig } from './eval.js';
export { inferenceSchema, type InferenceConfig } from './inference.js';
export { orchestratorSchema, type OrchestratorConfig } from './orchestrator.js';
export { rlSchema, type RlConfig } from './rl.js';
export { sftSchema, type SftConfig } from './sft.js';
export { synthesizeOutputPath, synthesizeSchema, type SynthesizeConfig } from './synthesize.js';
export { trainerSchema, type TrainerConfig } from './trainer.js';
export { BENCH_ASYNC_LEVEL, BENCH_MAX_STEPS } from './shared.js';

export const orchestratorSpec: ConfigSpec<typeof orchestratorSchema> = {
  name: 'OrchestratorConfig',
  prog: 'orchestrator',
  description: 'Orchestrator: generates and scores rollouts against the inference server and ships training batches.',
  schema: orchestratorSchema,
  validators: orchestratorValidators,
  renames: orchestratorRenames(),
};

export const trainerSpec: ConfigSpec<typeof trainerSchema> = {
  name: 'TrainerConfig',
  prog: 'trainer',
  description: 'RL trainer: trains the policy on the orchestrator batches and publishes new weights.',
  schema: trainerSchema,
  validators: trainerValidators,
  renames: trainerRenames(),
};

export const inferenceSpec: ConfigSpec<typeof inferenceSchema> = {
  name: 'InferenceConfig',
  prog: 'inference',
  description: 'Inference server: an OpenAI-compatible server with weight-update endpoints.',
  schema: inferenceSchema,
  validators: inferenceValidators,
};

export const sftSpec: ConfigSpec<typeof sftSchema> = {
  name: 'SFTConfig',
  prog: 'sft',
  description: 'Supervised fine-tuning trainer.',
  schema: sftSchema,
  validators: sftValidators,
  renames: sftRenames(),
};

export const evalSpec: ConfigSpec<typeof evalSchema> = {
  name: 'EvalConfig',
  prog: 'eval',
  description: 'Evaluate a model (and optionally its checkpoints) on environments.',
  schema: evalSchema,
  validators: evalValidators,
  renames: evalRenames(),
};

export const synthesizeSpec: ConfigSpec<typeof synthesizeSchema> = {
  name: 'SynthesizeConfig',
  prog: 'synthesize',
  description: 'Generate SFT data by running environments against a model and keeping rollouts by reward.',
  schema: synthesizeSchema,
  validators: synthesizeValidators,
  renames: synthesizeRenames(),
};

/** A spec as the untyped `ConfigSpec` that dry-run files carry. */
function erase<S extends z.ZodType>(spec: ConfigSpec<S>): ConfigSpec {
  return spec as unknown as ConfigSpec;
}

export const rlSpec: ConfigSpec<typeof rlSchema> = {
  name: 'RLConfig',
  prog: 'rl',
  description: 'RL training: starts inference (optional), orchestrator and trainer, and supervises them.',
  schema: rlSchema,
  validators: rlValidators,
  renames: rlRenames(),
  dryRunFiles: (cfg) => {
    const files: DryRunFile[] = [
      { name: 'trainer.toml', spec: erase(trainerSpec), value: cfg.trainer },
      { name: 'orchestrator.toml', spec: erase(orchestratorSpec), value: cfg.orchestrator },
    ];
    if (cfg.inference) files.push({ name: 'inference.toml', spec: erase(inferenceSpec), value: cfg.inference });
    return files;
  },
};
