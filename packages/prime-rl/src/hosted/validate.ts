// Client-side checks of a schema-valid hosted config, in the order of config.md §4.3 (steps 4–6).
import { HostedConfigError, invalidConfig } from './errors.js';
import type { HostedConfig } from './schema.js';

/** `owner/name`, optionally pinned to a version: `owner/name@1.2.0`. */
const HUB_ID = /^[^/\s@]+\/[^/\s@]+(@[^/\s@]+)?$/;

export function isHubEnvId(id: string): boolean {
  return HUB_ID.test(id);
}

/** Repeated ids need distinct names: metrics and results are keyed by the name (or the id). */
function duplicateNames(envs: ReadonlyArray<{ id: string; name?: string }>, loc: string, problems: string[]): void {
  const seen = new Map<string, number>();
  envs.forEach((e, i) => {
    const key = e.name ?? e.id;
    const first = seen.get(key);
    if (first === undefined) seen.set(key, i);
    else {
      problems.push(
        `${loc}.${i}.name: Duplicate environment name '${key}' (entries ${first} and ${i}); set a distinct name for each entry`,
      );
    }
  });
}

export interface HostedCheckOptions {
  /** The cluster's training sequence length when known; `sampling.max_tokens` must stay below it. */
  seqLen?: number;
}

/**
 * Steps 4–6 of the client-side validation. Throws a {@link HostedConfigError} for the first failing
 * step (all problems of that step listed); returns the warnings of a config that passes.
 */
export function checkHostedConfig(config: HostedConfig, path: string, opts: HostedCheckOptions = {}): string[] {
  // 4. at least one training environment
  if (config.env.length === 0) {
    throw new HostedConfigError('Error: No environments specified. Add [[env]] sections.');
  }

  // 5. environment ids are Hub ids
  const formatErrors: string[] = [];
  for (const env of config.env) {
    if (!isHubEnvId(env.id)) {
      formatErrors.push(`Error: Invalid environment format: '${env.id}'. Expected 'owner/name' format.`);
    }
  }
  for (const env of config.eval?.env ?? []) {
    if (!isHubEnvId(env.id)) {
      formatErrors.push(`Error: Invalid eval environment format: '${env.id}'. Expected 'owner/name' format.`);
    }
  }
  if (formatErrors.length > 0) throw new HostedConfigError(formatErrors);

  // 6. cross-field rules (temperature ≥ 0 and the other bounds are schema constraints, step 2)
  const problems: string[] = [];
  if (config.batch_size % config.rollouts_per_example !== 0) {
    problems.push(
      `batch_size: Batch size must be divisible by the number of samples per problem ` +
        `(batch_size = ${config.batch_size} is not a multiple of rollouts_per_example = ${config.rollouts_per_example})`,
    );
  }
  const maxTokens = config.sampling?.max_tokens;
  if (maxTokens !== undefined && opts.seqLen !== undefined && maxTokens >= opts.seqLen) {
    problems.push(`sampling.max_tokens: must be less than the cluster's seq_len (${opts.seqLen}) (got ${maxTokens})`);
  }
  duplicateNames(config.env, 'env', problems);
  duplicateNames(config.eval?.env ?? [], 'eval.env', problems);
  const buffer = config.buffer;
  if (buffer) {
    if (buffer.env_ratios !== undefined && buffer.env_ratios.length !== config.env.length) {
      problems.push(
        `buffer.env_ratios: needs one ratio per [[env]] (${config.env.length} environment` +
          `${config.env.length === 1 ? '' : 's'}, ${buffer.env_ratios.length} ratio${buffer.env_ratios.length === 1 ? '' : 's'})`,
      );
    }
    if (
      buffer.easy_threshold !== undefined &&
      buffer.hard_threshold !== undefined &&
      !(buffer.easy_threshold > buffer.hard_threshold)
    ) {
      problems.push(
        `buffer.easy_threshold: must be greater than buffer.hard_threshold ` +
          `(got ${buffer.easy_threshold} <= ${buffer.hard_threshold})`,
      );
    }
    if (buffer.skip_verification) {
      for (const field of ['online_difficulty_filtering', 'easy_threshold', 'hard_threshold'] as const) {
        const v = buffer[field];
        if (v !== undefined && v !== false) {
          problems.push(
            `buffer.skip_verification: cannot be true when buffer.${field} is set ` +
              `(difficulty filtering needs verified rewards)`,
          );
        }
      }
    }
  }
  if (problems.length > 0) throw invalidConfig(path, problems);

  const warnings: string[] = [];
  if (maxTokens === undefined) {
    warnings.push(
      '[sampling] max_tokens is not set: a completion may run until the context is full. ' +
        'Set it to bound the tokens sampled per turn.',
    );
  }
  if (
    config.max_async_level !== undefined &&
    config.oversampling_factor !== undefined &&
    config.max_async_level < config.oversampling_factor
  ) {
    warnings.push(
      `max_async_level (${config.max_async_level}) should be >= oversampling_factor (${config.oversampling_factor}).`,
    );
  }
  if (config.eval && config.eval.env.length === 0) {
    warnings.push('[eval] has no [[eval.env]] entries, so no evaluation will run.');
  }
  const wandb = config.wandb;
  if (wandb && wandb.project === undefined && wandb.entity === undefined) {
    warnings.push('[wandb] sets neither project nor entity, so W&B logging stays off.');
  }
  return warnings;
}
