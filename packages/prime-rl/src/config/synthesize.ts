// Synthetic-data config (`synthesize` entrypoint). Not in the spec: seed 004 only says
// `uv run synthesize` "supports single-turn, multi-turn, and tool-calling environments". Our
// design: run environments against an OpenAI-compatible model endpoint (like `eval`), score every
// rollout, keep those whose reward lies within [min_reward, max_reward], and write them as SFT-ready
// records (messages + tools) to one JSONL or Parquet file that `sft` can train on.
//
// Decisions (one line each):
// - Fields mirror `eval`: client (OpenAI API by default), model.name, env list with per-env
//   num_examples/rollouts_per_example overrides, sampling (None = server default), num_examples,
//   rollouts_per_example, max_concurrent, reasoning_field, log, output_dir.
// - Output: `output.path` (None = <output_dir>/synthetic/data.<format>) and `output.format`
//   (`jsonl` | `parquet`); a path whose extension names the other format is rejected.
// - Reward filters are unbounded floats (env rewards are not restricted to [0, 1]); None = no bound;
//   `min_reward` must not exceed `max_reward`.
// - No W&B section: synthesis logs to files only.
// - Renames: `sampling.max_completion_tokens` → `sampling.max_tokens` (alias).
import { section, z } from '@prime-rl/config';
import type { Rename, Validator } from '@prime-rl/config';
import {
  apiClientSection,
  checkUniqueEnvNames,
  evalEnvList,
  evalSamplingSection,
  forceOpenAiServerType,
  logSection,
  modelNameField,
  pathField,
  py,
  samplingRenames,
} from './shared.js';

export const synthesizeShape = {
  env: evalEnvList('Environments to generate data from.'),
  num_examples: z.int().min(-1).default(-1).describe('Number of examples to use per environment (-1 = all).'),
  rollouts_per_example: z.int().min(1).default(1).describe('Number of rollouts to generate per example.'),
  max_concurrent: z
    .int()
    .min(1)
    .nullable()
    .default(null)
    .describe('Maximum number of concurrent rollouts. If None, does not limit concurrency.'),
  min_reward: z
    .number()
    .nullable()
    .default(null)
    .describe('Keep only rollouts whose reward is >= this. If None, no lower bound.'),
  max_reward: z
    .number()
    .nullable()
    .default(null)
    .describe('Keep only rollouts whose reward is <= this. If None, no upper bound.'),
  reasoning_field: z
    .string()
    .min(1)
    .default('reasoning_content')
    .describe('Response message field that carries the reasoning text.'),
  output_dir: pathField().default('outputs').describe('Directory to write outputs to (data and logs).'),

  client: apiClientSection(),
  model: section({ name: modelNameField('gpt-4.1-mini') }, 'Model that generates the data'),
  sampling: evalSamplingSection(),
  output: section(
    {
      path: pathField()
        .nullable()
        .default(null)
        .describe('File to write the data to. If None, writes <output_dir>/synthetic/data.<format>.'),
      format: z
        .enum(['jsonl', 'parquet'])
        .default('jsonl')
        .describe('File format: one JSON record per line, or an Apache Parquet table.'),
    },
    'Where and how the SFT-ready data is written',
  ),
  log: logSection(),
};

export const synthesizeSchema = z.strictObject(synthesizeShape);
export type SynthesizeConfig = z.output<typeof synthesizeSchema>;

/** The file the data goes to. */
export function synthesizeOutputPath(cfg: SynthesizeConfig): string {
  return cfg.output.path ?? `${cfg.output_dir}/synthetic/data.${cfg.output.format}`;
}

export const synthesizeClientServerType: Validator<SynthesizeConfig> = (cfg) => {
  forceOpenAiServerType(cfg.client);
};

export const rewardBounds: Validator<SynthesizeConfig> = (cfg, ctx) => {
  if (cfg.min_reward !== null && cfg.max_reward !== null && cfg.min_reward > cfg.max_reward) {
    ctx.error(
      [],
      `min_reward (${py(cfg.min_reward)}) must be less than or equal to max_reward (${py(cfg.max_reward)})`,
    );
  }
};

export const outputFormatMatchesPath: Validator<SynthesizeConfig> = (cfg, ctx) => {
  const p = cfg.output.path;
  if (p === null) return;
  const lower = p.toLowerCase();
  for (const other of ['jsonl', 'parquet'] as const) {
    if (other !== cfg.output.format && lower.endsWith(`.${other}`)) {
      ctx.error(
        ['output'],
        `output.path (${p}) has a .${other} extension but output.format is "${cfg.output.format}"; set output.format = "${other}" or change the path`,
      );
    }
  }
};

export const synthesizeUniqueEnvNames: Validator<SynthesizeConfig> = (cfg, ctx) => {
  checkUniqueEnvNames(cfg.env, ctx, ['env']);
};

export const synthesizeValidators: ReadonlyArray<Validator<SynthesizeConfig>> = [
  synthesizeClientServerType,
  rewardBounds,
  outputFormatMatchesPath,
  synthesizeUniqueEnvNames,
];

export function synthesizeRenames(prefix = ''): Rename[] {
  return samplingRenames(prefix);
}
