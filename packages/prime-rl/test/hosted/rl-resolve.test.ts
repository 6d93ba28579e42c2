// The mapped raw `rl` config must resolve through the real `rl` schema without errors.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolveConfig } from '@prime-rl/config';
import { rlSpec } from '../../src/config/index.js';
import { hostedToRl, parseHostedConfig, type RawTable } from '../../src/hosted/index.js';
import { FULL, MINIMAL } from './helpers.js';

function resolveMapped(mapped: RawTable) {
  return resolveConfig(rlSpec, {
    argv: [],
    env: {},
    layers: [{ data: mapped, source: { kind: 'layer', label: 'rl.toml (hosted)' } }],
  });
}

type Any = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

test('mapping: the minimal hosted config resolves through rlSpec', () => {
  const { config } = parseHostedConfig(MINIMAL, 'rl.toml');
  const { config: rl, warnings } = resolveMapped(hostedToRl(config)) as { config: Any; warnings: string[] };
  assert.deepEqual(warnings, []);
  assert.equal(rl.trainer.model.name, 'PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT');
  assert.equal(rl.orchestrator.model.name, 'PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT');
  assert.equal(rl.inference.model.name, 'PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT');
  assert.equal(rl.trainer.max_steps, 100);
  assert.equal(rl.orchestrator.max_steps, 100);
  assert.equal(rl.orchestrator.batch_size, 128);
  assert.equal(rl.orchestrator.rollouts_per_example, 8);
  assert.equal(rl.orchestrator.sampling.max_tokens, 2048);
  assert.equal(rl.orchestrator.sampling.temperature, 1.0);
  assert.deepEqual(
    rl.orchestrator.env.map((e: Any) => e.id),
    ['your-username/your-env'],
  );
  assert.notEqual(rl.trainer.model.experimental.lora, null);
});

test('mapping: the seed-001 full hosted config resolves through rlSpec', () => {
  const { config } = parseHostedConfig(FULL, 'rl.toml');
  const { config: rl } = resolveMapped(hostedToRl(config, { seqLen: 4096 })) as { config: Any };
  assert.equal(rl.orchestrator.seq_len, 4096);
  assert.equal(rl.trainer.max_steps, 500);
  assert.equal(rl.trainer.async_level, 4);
  assert.equal(rl.orchestrator.async_level, 4);
  assert.equal(rl.trainer.optim.type, 'adamw');
  assert.equal(rl.trainer.optim.lr, 1e-6);
  assert.equal(rl.trainer.model.experimental.lora.alpha, 16);
  assert.equal(rl.orchestrator.oversampling_factor, 2);
  assert.equal(rl.orchestrator.trajectory_strategy, 'interleaved');
  assert.equal(rl.orchestrator.sampling.temperature, 0.7);
  assert.equal(rl.orchestrator.env.length, 2);
  assert.deepEqual(rl.orchestrator.env[0].args, { split: 'train', max_examples: 1000 });
  assert.equal(rl.orchestrator.eval.interval, 100);
  assert.equal(rl.orchestrator.eval.env[0].num_examples, 30);
  assert.equal(rl.orchestrator.val.interval, 5);
  assert.equal(rl.orchestrator.buffer.type, 'simple');
  assert.equal(rl.orchestrator.buffer.online_difficulty_filtering, true);
  assert.equal(rl.orchestrator.buffer.easy_threshold, 0.8);
  assert.equal(rl.orchestrator.wandb.project, 'my-project');
  assert.equal(rl.trainer.wandb.project, 'my-project');
  assert.equal(rl.orchestrator.wandb.entity, 'my-team');
  assert.equal(rl.trainer.wandb.name, 'my-run-name-trainer');
  assert.equal(rl.orchestrator.lora_name, 'r16-a16.0');
});

test('mapping: a hosted [buffer] and an empty [val] resolve through rlSpec', () => {
  // the hosted buffer lands on the `simple` variant with only the fields the config set
  const { config } = parseHostedConfig(
    `${MINIMAL}[buffer]\nenv_ratios = [1.0]\nskip_verification = false\nseed = 3\n[val]\n`,
    'rl.toml',
  );
  const { config: rl } = resolveMapped(hostedToRl(config)) as { config: Any };
  assert.deepEqual(rl.orchestrator.buffer.env_ratios, [1]);
  assert.equal(rl.orchestrator.buffer.seed, 3);
  assert.equal(rl.orchestrator.val.num_examples, 16);
});
