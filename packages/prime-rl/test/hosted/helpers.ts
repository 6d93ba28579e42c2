// Test helpers for the hosted config: temp dirs and error capture.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { HostedConfigError } from '../../src/hosted/index.js';

/** A fresh directory holding the given files (paths relative to it). */
export function tempDir(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'hosted-'));
  for (const [rel, text] of Object.entries(files)) {
    const file = join(dir, rel);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
  return dir;
}

/** Run `fn`, expect a HostedConfigError, return its report text. */
export function errorText(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof HostedConfigError, `expected HostedConfigError, got ${String(e)}`);
    return e.lines.join('\n');
  }
  assert.fail('expected an error');
}

export const MINIMAL = `model = "PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT"
max_steps = 100
batch_size = 128
rollouts_per_example = 8

[sampling]
max_tokens = 2048

[[env]]
id = "your-username/your-env"
`;

/** The seed-001 "Full Config with Advanced Options" (env_file dropped: no files in these tests). */
export const FULL = `name = "my-training-run"
model = "PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT"
max_steps = 500
batch_size = 128
rollouts_per_example = 8

trajectory_strategy = "interleaved"
learning_rate = 1e-6
lora_alpha = 16
oversampling_factor = 2.0
max_async_level = 4

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
