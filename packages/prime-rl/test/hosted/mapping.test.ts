// The hosted → `rl` mapping (config.md §4.4).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hostedToRl, parseHostedConfig } from '../../src/hosted/index.js';
import { FULL, MINIMAL } from './helpers.js';

test('mapping: minimal config', () => {
  const { config } = parseHostedConfig(MINIMAL, 'rl.toml');
  assert.deepEqual(hostedToRl(config), {
    model: { name: 'PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT' },
    max_steps: 100,
    trainer: { model: { experimental: { lora: {} } } },
    orchestrator: {
      batch_size: 128,
      rollouts_per_example: 8,
      sampling: { max_tokens: 2048 },
      env: [{ id: 'your-username/your-env' }],
    },
    inference: {},
  });
});

test('mapping: the seed-001 full config', () => {
  const { config } = parseHostedConfig(FULL, 'rl.toml');
  assert.deepEqual(hostedToRl(config, { seqLen: 4096 }), {
    model: { name: 'PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT' },
    max_steps: 500,
    seq_len: 4096,
    async_level: 4,
    wandb: { project: 'my-project', entity: 'my-team', name: 'my-run-name' },
    trainer: {
      model: { experimental: { lora: { alpha: 16 } } },
      optim: { type: 'adamw', lr: 1e-6 },
    },
    orchestrator: {
      batch_size: 128,
      rollouts_per_example: 8,
      oversampling_factor: 2,
      trajectory_strategy: 'interleaved',
      sampling: { max_tokens: 2048, temperature: 0.7 },
      env: [{ id: 'your-username/env-1', args: { split: 'train', max_examples: 1000 } }, { id: 'your-username/env-2' }],
      eval: {
        interval: 100,
        num_examples: -1,
        rollouts_per_example: 1,
        eval_base_model: true,
        env: [{ id: 'your-username/eval-env', args: { split: 'test' }, num_examples: 30, rollouts_per_example: 4 }],
      },
      val: { num_examples: 64, rollouts_per_example: 1, interval: 5 },
      buffer: {
        type: 'simple',
        online_difficulty_filtering: true,
        easy_threshold: 0.8,
        hard_threshold: 0.2,
        easy_fraction: 0,
        hard_fraction: 0,
      },
    },
    inference: {},
  });
});

test('mapping: [eval] without eval envs and [wandb] without project/entity map to nothing', () => {
  const { config } = parseHostedConfig(`${MINIMAL}[eval]\ninterval = 5\n[wandb]\nname = "n"\n`, 'rl.toml');
  const rl = hostedToRl(config) as Record<string, Record<string, unknown>>;
  assert.equal(rl.wandb, undefined);
  assert.equal(rl.orchestrator?.eval, undefined);
});

test('mapping: an empty [val] enables validation with the rl defaults', () => {
  const { config } = parseHostedConfig(`${MINIMAL}[val]\n`, 'rl.toml');
  const rl = hostedToRl(config) as Record<string, Record<string, unknown>>;
  assert.deepEqual(rl.orchestrator?.val, {});
});
