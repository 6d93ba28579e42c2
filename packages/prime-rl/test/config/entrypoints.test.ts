// config.md §5.6: the entrypoint schemas (seed era), numbered as in the spec. Run with no PRIME_*
// variables and no visible GPUs.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { resolveConfig, type ConfigSpec } from '@prime-rl/config';
import { inferenceSpec, orchestratorSpec, rlSpec, sftSpec, trainerSpec } from '../../src/config/index.js';
import { cli, configOf, errorOf, resolveIn, scratch } from './helpers.js';

const EMPTY_RL = { 'rl.toml': '[trainer]\n[orchestrator]\n' };

// ---------------------------------------------------------------------------------------------
// orchestrator
// ---------------------------------------------------------------------------------------------

test('§5.6 #82 orchestrator: batch size must be divisible by rollouts per example', () => {
  const msg = errorOf(orchestratorSpec, ['--batch-size', '10', '--rollouts-per-example', '3']);
  assert.match(msg, /Batch size must be divisible by the number of samples per problem/);
  assert.doesNotMatch(msg, /Value error/);
});

test('§5.6 #83 orchestrator: batch size 12 with 3 rollouts per example is fine', () => {
  const c = configOf(orchestratorSpec, ['--batch-size', '12', '--rollouts-per-example', '3']);
  assert.equal(c.batch_size, 12);
  assert.equal(c.rollouts_per_example, 3);
});

test('§5.6 #84 orchestrator: NCCL broadcast needs async level 1', () => {
  const msg = errorOf(orchestratorSpec, ['--weight-broadcast.type', 'nccl', '--async-level', '2']);
  assert.match(msg, /Async level must be 1 for NCCL broadcast/);
});

test('§5.6 #85 orchestrator: negative temperature is rejected on its flag', () => {
  const msg = errorOf(orchestratorSpec, ['--sampling.temperature', '-0.1']);
  assert.match(msg, /--sampling\.temperature/);
  assert.match(msg, /greater than or equal to 0/);
});

test('§5.6 #86 orchestrator: --bench forces 4 steps, no eval, never-waiting async level', () => {
  const c = configOf(orchestratorSpec, ['--bench', '--eval']);
  assert.equal(c.bench, true);
  assert.equal(c.max_steps, 4);
  assert.equal(c.eval, null);
  assert.equal(c.async_level, 1_000_000_000);
});

test('§5.6 #87 orchestrator: several base URLs; the OpenAI API forces server_type openai', () => {
  const c = configOf(orchestratorSpec, ['--client.base-url', 'http://a/v1', 'http://b/v1']);
  assert.deepEqual(c.client.base_url, ['http://a/v1', 'http://b/v1']);
  assert.equal(c.client.server_type, 'vllm');
  const o = configOf(orchestratorSpec, ['--client.base-url', 'https://api.openai.com/v1']);
  assert.equal(o.client.server_type, 'openai');
});

test('§5.6 #88 orchestrator: bare --eval enables eval with its defaults', () => {
  const c = configOf(orchestratorSpec, ['--eval']);
  assert.ok(c.eval);
  assert.equal(c.eval.interval, 100);
  assert.equal(c.eval.eval_base_model, true);
  assert.equal(c.eval.num_examples, -1);
  assert.equal(c.eval.env.length, 1);
  assert.equal(c.eval.env[0]?.id, 'reverse-text');
});

test('§5.6 #89 orchestrator: online-difficulty buffer with an oversampling factor', () => {
  const c = configOf(orchestratorSpec, ['--buffer.type', 'online-difficulty', '--buffer.oversampling-factor', '2']);
  assert.equal(c.buffer.type, 'online-difficulty');
  if (c.buffer.type !== 'online-difficulty') return;
  assert.equal(c.buffer.oversampling_factor, 2);
  assert.equal(c.buffer.min_reward, 0.01);
  assert.equal(c.buffer.max_reward, 0.99);
});

test('§5.6 #90 orchestrator: val.num_examples -1 is rejected (≥ 1)', () => {
  const msg = errorOf(orchestratorSpec, ['--val.num-examples', '-1']);
  assert.match(msg, /--val\.num-examples/);
  assert.match(msg, /greater than or equal to 1/);
});

// ---------------------------------------------------------------------------------------------
// trainer
// ---------------------------------------------------------------------------------------------

test('§5.6 #91 trainer: CP needs flash attention', () => {
  const msg = errorOf(trainerSpec, ['--model.cp', '2', '--model.attn', 'sdpa']);
  assert.match(msg, /CP is only supported with flash attention/);
});

test('§5.6 #92 trainer: trust_remote_code needs the HF implementation', () => {
  const msg = errorOf(trainerSpec, ['--model.trust-remote-code', '--model.impl', 'custom']);
  assert.match(msg, /Trust remote code is only supported with the HF implementation/);
});

test('§5.6 #93 trainer: tracing needs max_steps below 10', () => {
  assert.match(errorOf(trainerSpec, ['--trace-path', '/tmp/t']), /Must specify max_steps when tracing/);
  assert.match(errorOf(trainerSpec, ['--trace-path', '/tmp/t', '--max-steps', '10']), /more than 10 steps/);
  // The seed rule passes with 3 steps. Profiler traces are a capability we do not have yet, so the
  // only problem left is the "not supported yet" report (spec: "ok").
  const msg = errorOf(trainerSpec, ['--trace-path', '/tmp/t', '--max-steps', '3']);
  assert.match(msg, /profiler tracing is not supported yet/);
  assert.match(msg, /1 validation error/);
  assert.doesNotMatch(msg, /max_steps when tracing|more than 10 steps/);
});

test('§5.6 #94 trainer: save_adapter_separately needs LoRA', () => {
  const msg = errorOf(trainerSpec, ['--weights.save-adapter-separately']);
  assert.match(msg, /save_adapter_separately=True requires LoRA/);
  const c = configOf(trainerSpec, ['--weights.save-adapter-separately', '--model.experimental.lora']);
  assert.equal(c.weights.save_adapter_separately, true);
  assert.equal(c.model.experimental.lora?.rank, 16);
  assert.equal(c.model.experimental.lora?.alpha, 16.0);
});

test('§5.6 #95 trainer: NCCL broadcast needs async level 1', () => {
  const msg = errorOf(trainerSpec, ['--weight-broadcast.type', 'nccl', '--async-level', '2']);
  assert.match(msg, /NCCL weight broadcast only works with async level 1/);
});

test('§5.6 #96 trainer: the sgd optimizer variant and its defaults', () => {
  const c = configOf(trainerSpec, ['--optim.type', 'sgd']);
  assert.equal(c.optim.type, 'sgd');
  if (c.optim.type !== 'sgd') return;
  assert.equal(c.optim.nesterov, true);
  assert.equal(c.optim.momentum, 0.9);
  assert.equal(c.optim.lr, 1e-6);
});

// ---------------------------------------------------------------------------------------------
// inference
// ---------------------------------------------------------------------------------------------

test('§5.6 #97 inference: NCCL broadcast needs data parallel size 1', () => {
  const msg = errorOf(inferenceSpec, ['--weight-broadcast.type', 'nccl', '--parallel.dp', '2']);
  assert.match(msg, /NCCL broadcast backend requires data parallel size to be 1/);
});

// ---------------------------------------------------------------------------------------------
// sft
// ---------------------------------------------------------------------------------------------

test('§5.6 #98 sft: batch size must be divisible by micro batch size', () => {
  const msg = errorOf(sftSpec, ['--data.batch-size', '10', '--data.micro-batch-size', '4']);
  assert.match(msg, /Batch size must be divisible by micro batch size/);
});

test('§5.6 #99 sft: context parallelism constrains seq_len and micro batch size', () => {
  assert.match(
    errorOf(sftSpec, ['--model.cp', '2', '--data.seq-len', '129']),
    /Sequence length must be divisible by CP degree/,
  );
  assert.match(
    errorOf(sftSpec, ['--model.cp', '2', '--data.micro-batch-size', '2', '--data.batch-size', '4']),
    /Micro batch size must be 1 when CP is enabled/,
  );
});

test('§5.6 #100 sft: fake data with bench', () => {
  const c = configOf(sftSpec, ['--data.type', 'fake', '--bench']);
  assert.equal(c.data.type, 'fake');
  assert.equal(c.bench, true);
  assert.equal(c.max_steps, 4);
});

// ---------------------------------------------------------------------------------------------
// rl
// ---------------------------------------------------------------------------------------------

test('§5.6 #101 rl: trainer and orchestrator are required', () => {
  const msg = errorOf(rlSpec, []);
  assert.match(msg, /--trainer\n\s+Field required/);
  assert.match(msg, /--orchestrator\n\s+Field required/);
});

test('§5.6 #102 rl: the shared max_steps overwrites both sub-configs', () => {
  const r = resolveIn(rlSpec, ['--trainer', '@', 't.toml', '--orchestrator', '@', 'o.toml', '--max-steps', '10'], {
    't.toml': 'max_steps = 20',
    'o.toml': 'max_steps = 20',
  });
  assert.equal(r.config.trainer.max_steps, 10);
  assert.equal(r.config.orchestrator.max_steps, 10);
  assert.ok(r.warnings.some((w) => w.includes('trainer.max_steps') && w.includes('20') && w.includes('10')));
  assert.ok(r.warnings.some((w) => w.includes('orchestrator.max_steps')));
});

test('§5.6 #103 rl: different max_steps in the sub-configs are reported', () => {
  const msg = errorOf(rlSpec, ['--trainer', '@', 't.toml', '--orchestrator', '@', 'o.toml'], {
    't.toml': 'max_steps = 20',
    'o.toml': '',
  });
  assert.match(msg, /Trainer max steps \(20\) and orchestrator max steps \(None\) are not the same/);
});

test('§5.6 #104 rl: the shared model name reaches trainer, orchestrator and inference', () => {
  const c = configOf(rlSpec, ['@', 'rl.toml'], {
    'rl.toml': '[model]\nname = "M"\n[trainer]\n[orchestrator]\n[inference]\n',
  });
  assert.equal(c.trainer.model.name, 'M');
  assert.equal(c.orchestrator.model.name, 'M');
  assert.equal(c.inference?.model.name, 'M');
});

test('§5.6 #105 rl: different model names without a shared one are reported', () => {
  const msg = errorOf(
    rlSpec,
    ['@', 'rl.toml', '--trainer.model.name', 'A', '--orchestrator.model.name', 'B'],
    EMPTY_RL,
  );
  assert.match(msg, /Trainer model name \(A\) and orchestrator model name \(B\) are not the same/);
});

test('§5.6 #106 rl: a bare --ckpt enables checkpointing on both sub-configs', () => {
  const c = configOf(rlSpec, ['@', 'rl.toml', '--ckpt'], EMPTY_RL);
  assert.ok(c.trainer.ckpt);
  assert.ok(c.orchestrator.ckpt);
  assert.equal(c.trainer.ckpt.interval, null);
  assert.equal(c.orchestrator.ckpt.interval, null);
  assert.equal(c.orchestrator.ckpt.keep_last, null);
  const d = configOf(rlSpec, ['@', 'rl.toml', '--ckpt.interval', '5'], EMPTY_RL);
  assert.equal(d.trainer.ckpt?.interval, 5);
  assert.equal(d.orchestrator.ckpt?.interval, 5);
});

test('§5.6 #107 rl: checkpointing on the trainer only is reported', () => {
  const msg = errorOf(rlSpec, ['@', 'rl.toml'], { 'rl.toml': '[trainer.ckpt]\n[orchestrator]\n' });
  assert.match(msg, /Trainer checkpoint config is specified, but orchestrator checkpoint config is not/);
});

test('§5.6 #108 rl: the shared W&B name gets -trainer / -orchestrator suffixes', () => {
  const c = configOf(rlSpec, ['@', 'rl.toml', '--wandb.name', 'exp'], EMPTY_RL);
  assert.equal(c.trainer.wandb?.name, 'exp-trainer');
  assert.equal(c.orchestrator.wandb?.name, 'exp-orchestrator');
  assert.equal(c.trainer.wandb?.project, 'prime-rl');
  assert.equal(c.orchestrator.wandb?.project, 'prime-rl');
});

test('§5.6 #109 rl: NCCL broadcast needs two distinct GPUs', () => {
  const msg = errorOf(
    rlSpec,
    ['@', 'rl.toml', '--weight-broadcast.type', 'nccl', '--trainer-gpu-ids', '0', '--inference-gpu-ids', '0'],
    EMPTY_RL,
  );
  assert.match(msg, /NCCL weight broadcast requires at least 2 GPUs/);
});

test('§5.6 #110 rl: GPU ids set inference dp and the number of trainer workers', () => {
  const c = configOf(rlSpec, ['@', 'rl.toml', '--inference-gpu-ids', '0,1,2,3', '--trainer-gpu-ids', '4,5'], {
    'rl.toml': '[trainer]\n[orchestrator]\n[inference]\n',
  });
  assert.equal(c.inference?.parallel.tp, 1);
  assert.equal(c.inference?.parallel.dp, 4);
  assert.equal(c.orchestrator.num_train_workers, 2);
});

test('§5.6 #111 rl: the shared output_dir goes to trainer and orchestrator', () => {
  const c = configOf(rlSpec, ['@', 'rl.toml', '--output-dir', 'runs/x'], EMPTY_RL);
  assert.equal(c.trainer.output_dir, 'runs/x');
  assert.equal(c.orchestrator.output_dir, 'runs/x');
});

test('§5.6 #112 rl dry run: each written file re-loads to the identical sub-config', async () => {
  const out = scratch();
  const cwd = scratch({
    'rl.toml': [
      'max_steps = 8',
      '[model]\nname = "M"',
      '[wandb]\nname = "exp"',
      '[ckpt]\ninterval = 2',
      '[trainer.model.experimental.lora]\nrank = 8',
      '[orchestrator]\nbatch_size = 16\nrollouts_per_example = 4',
      '[orchestrator.eval]',
      '[inference]',
    ].join('\n'),
  });
  const r = await cli(rlSpec, ['@', 'rl.toml', '--dry-run', '--output-dir', out], cwd);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.ran, false);
  const resolved = resolveConfig(rlSpec, { argv: ['@', 'rl.toml', '--output-dir', out], env: {}, cwd }).config;
  const pairs: Array<[string, ConfigSpec, unknown]> = [
    ['trainer.toml', trainerSpec as unknown as ConfigSpec, resolved.trainer],
    ['orchestrator.toml', orchestratorSpec as unknown as ConfigSpec, resolved.orchestrator],
    ['inference.toml', inferenceSpec as unknown as ConfigSpec, resolved.inference],
  ];
  for (const [name, spec, expected] of pairs) {
    const file = path.join(out, 'configs', name);
    assert.ok(existsSync(file), `${name} written`);
    assert.doesNotMatch(readFileSync(file, 'utf8'), /= null/);
    const again = resolveConfig(spec, { argv: ['@', file], env: {}, cwd }).config;
    assert.deepEqual(again, expected, name);
  }
});

test('§5.6 #113 rl dry run with an invalid combination fails and writes nothing', async () => {
  const out = scratch();
  const cwd = scratch({ 'rl.toml': '[trainer]\n[orchestrator]\nbatch_size = 10\nrollouts_per_example = 3\n' });
  const r = await cli(rlSpec, ['@', 'rl.toml', '--dry-run', '--output-dir', out], cwd);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /Batch size must be divisible by the number of samples per problem/);
  assert.equal(r.ran, false);
  assert.equal(existsSync(path.join(out, 'configs')), false);
});
