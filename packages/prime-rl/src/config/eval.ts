// Eval config (`eval` entrypoint): spec config.md §3.8 (E2 schema; seed 004
// `eval @ configs/.../eval.toml --client.base-url http://localhost:8000/v1`).
//
// Decisions (one line each):
// - E2 schema: the orchestrator's eval fields minus interval/eval_base_model, plus client (defaults:
//   OpenAI API, timeout 36000), model.name = gpt-4.1-mini, weights_dir/steps/eval_base, use_tqdm,
//   max_concurrent, reasoning_field, resume_path.
// - `steps` existence (`Step N not found in weights directory D`) is checked at resolve time as in E2,
//   relative to the process working directory; `steps` without `weights_dir` is rejected.
// - `save.env_hub` / `save.hf` are unsupported (see shared.ts).
// - Renames: `sampling.max_completion_tokens` → `sampling.max_tokens` (alias).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { section, z } from '@prime-rl/config';
import type { Rename, Validator } from '@prime-rl/config';
import {
  apiClientSection,
  checkUniqueEnvNames,
  evalEnvList,
  evalSamplingSection,
  evalSaveSection,
  forceOpenAiServerType,
  logSection,
  modelNameField,
  pathField,
  samplingRenames,
  wandbSection,
} from './shared.js';

export const evalShape = {
  env: evalEnvList(),
  num_examples: z.int().min(-1).default(-1).describe('Number of examples to evaluate per environment (-1 = all).'),
  rollouts_per_example: z
    .int()
    .min(1)
    .default(1)
    .describe('Number of samples to generate per example for each environment.'),
  max_concurrent: z
    .int()
    .min(1)
    .nullable()
    .default(null)
    .describe('Maximum number of concurrent rollouts. If None, does not limit concurrency.'),
  weights_dir: pathField()
    .nullable()
    .default(null)
    .describe(
      'Directory of step_N weight checkpoints to evaluate (each one in turn). If None, only the base model is evaluated.',
    ),
  steps: z
    .array(z.int().min(0))
    .min(1)
    .nullable()
    .default(null)
    .describe('Steps of weights_dir to evaluate. If None, evaluates every step_N found.'),
  eval_base: z.boolean().default(true).describe('Whether to evaluate the base model.'),
  use_tqdm: z.boolean().default(false).describe('Whether to show a progress bar.'),
  reasoning_field: z
    .string()
    .min(1)
    .default('reasoning_content')
    .describe('Response message field that carries the reasoning text.'),
  resume_path: pathField()
    .nullable()
    .default(null)
    .describe(
      'Streamed results file of an interrupted evaluation to resume (requires save.stream; single environment).',
    ),
  output_dir: pathField().default('outputs').describe('Directory to write outputs to (results and logs).'),

  client: apiClientSection(),
  model: section({ name: modelNameField('gpt-4.1-mini') }, 'Model to evaluate'),
  sampling: evalSamplingSection(),
  save: evalSaveSection(),
  log: logSection(),
  wandb: wandbSection(),
};

export const evalSchema = z.strictObject(evalShape);
export type EvalConfig = z.output<typeof evalSchema>;

export const evalClientServerType: Validator<EvalConfig> = (cfg) => {
  forceOpenAiServerType(cfg.client);
};

export const evalBaseOrCheckpoints: Validator<EvalConfig> = (cfg, ctx) => {
  if (!cfg.eval_base && cfg.weights_dir === null) {
    ctx.error(
      [],
      'You should either evaluate the base model and/or checkpoints. Set eval_base = true or give weights_dir.',
    );
  }
};

export const evalSteps: Validator<EvalConfig> = (cfg, ctx) => {
  if (cfg.steps === null) return;
  if (cfg.weights_dir === null) {
    ctx.error(['steps'], 'steps selects checkpoints inside weights_dir; set weights_dir too');
    return;
  }
  const dir = cfg.weights_dir;
  if (!fs.existsSync(dir)) {
    ctx.error(['weights_dir'], `Weights directory ${dir} does not exist`);
    return;
  }
  for (const step of cfg.steps) {
    if (!fs.existsSync(path.join(dir, `step_${step}`))) {
      ctx.error(['steps'], `Step ${step} not found in weights directory ${dir}`);
    }
  }
};

export const evalResume: Validator<EvalConfig> = (cfg, ctx) => {
  if (cfg.resume_path === null) return;
  if (!cfg.save.stream) ctx.error(['resume_path'], 'resume_path requires save.stream = true');
  if (cfg.env.length !== 1) ctx.error(['resume_path'], 'resume_path only supports a single environment');
};

export const evalUniqueEnvNames: Validator<EvalConfig> = (cfg, ctx) => {
  checkUniqueEnvNames(cfg.env, ctx, ['env']);
};

export const evalValidators: ReadonlyArray<Validator<EvalConfig>> = [
  evalClientServerType,
  evalBaseOrCheckpoints,
  evalSteps,
  evalResume,
  evalUniqueEnvNames,
];

export function evalRenames(prefix = ''): Rename[] {
  return samplingRenames(prefix);
}
