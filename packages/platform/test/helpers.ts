// Spawning the real built `prime` binary in a temp directory.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** dist/test/helpers.js → dist/src/bin/prime.js */
export const PRIME_JS = fileURLToPath(new URL('../src/bin/prime.js', import.meta.url));
/** The committed launcher npm links as the `prime` bin. */
export const LAUNCHER_JS = fileURLToPath(new URL('../../bin/prime.js', import.meta.url));

export interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The test runner's environment without anything that could change the CLI's behaviour. */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || k.startsWith('PRIME_') || k.startsWith('WANDB_')) continue;
    env[k] = v;
  }
  return { ...env, NO_COLOR: '1', ...extra };
}

export function prime(
  args: readonly string[],
  opts: { cwd: string; env?: Record<string, string>; script?: string },
): Result {
  const r = spawnSync(process.execPath, [opts.script ?? PRIME_JS, ...args], {
    cwd: opts.cwd,
    env: cleanEnv(opts.env),
    encoding: 'utf8',
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

export function tempDir(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'prime-cli-'));
  for (const [rel, text] of Object.entries(files)) {
    const file = join(dir, rel);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
  return dir;
}

export const MODEL = 'model = "PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT"\n';
export const ENV = '[[env]]\nid = "your-username/your-env"\n';
export const MINIMAL = `${MODEL}max_steps = 100
batch_size = 128
rollouts_per_example = 8

[sampling]
max_tokens = 2048

${ENV}`;

/** Seed 001's "Full Config with Advanced Options". */
export const FULL = `name = "my-training-run"
${MODEL}max_steps = 500
batch_size = 128
rollouts_per_example = 8

trajectory_strategy = "interleaved"
learning_rate = 1e-6
lora_alpha = 16
oversampling_factor = 2.0
max_async_level = 4

env_file = ["secrets.env"]

[sampling]
max_tokens = 2048
temperature = 0.7

[[env]]
id = "your-username/env-1"
args = { split = "train", max_examples = 1000 }

[[env]]
id = "your-username/env-2"

[wandb]
project = "my-project"
entity = "my-team"
name = "my-run-name"

[eval]
interval = 100
num_examples = -1
rollouts_per_example = 1
eval_base_model = true

[[eval.env]]
id = "your-username/eval-env"
args = { split = "test" }
num_examples = 30
rollouts_per_example = 4

[val]
num_examples = 64
rollouts_per_example = 1
interval = 5

[buffer]
online_difficulty_filtering = true
easy_threshold = 0.8
hard_threshold = 0.2
easy_fraction = 0.0
hard_fraction = 0.0
`;
