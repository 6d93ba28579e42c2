// Trainer and SFT schema decisions beyond §5.6: unsupported capabilities, renames, bench, schedules.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sftSpec, trainerSpec } from '../../src/config/index.js';
import { configOf, errorOf, resolveIn } from './helpers.js';

test('trainer: seed defaults (incl. defaults we cannot honour literally)', () => {
  const c = configOf(trainerSpec, []);
  assert.equal(c.model.attn, 'flash_attention_2');
  assert.equal(c.model.impl, 'hf');
  assert.equal(c.weights.save_format, 'torch');
  assert.equal(c.enable_token_export, false);
  assert.equal(c.dist_timeout_seconds, 600);
  assert.deepEqual(c.loss, {
    ratio_type: 'token',
    ratio_length_norm: false,
    mask_ratio_high: 8.0,
    mask_ratio_low: 0.125,
    sequence_mask_ratio_low: 0.0,
    kl_tau: 0.0,
    kl_mask_type: 'all',
  });
  assert.deepEqual(c.optim, { type: 'adamw', lr: 1e-6, weight_decay: 0.01, max_norm: 1.0, betas1: 0.9, betas2: 0.999 });
  assert.deepEqual(c.scheduler, { type: 'constant' });
  assert.equal(c.data.fake, null);
});

test('trainer: capabilities we do not have yet are rejected with "not supported yet"', () => {
  const cases: Array<[string[], RegExp]> = [
    [['--model.tp', '2'], /tensor parallelism is not supported yet/],
    [['--model.cp', '2'], /context parallelism is not supported yet/],
    [['--model.ep', '2'], /expert parallelism is not supported yet/],
    [['--model.dp-replicate', '2'], /replicated data parallelism is not supported yet/],
    [['--model.compile'], /model compilation is not supported yet/],
    [['--model.ac-offloading'], /activation offloading is not supported yet/],
    [['--model.optimization-dtype', 'bfloat16'], /bfloat16 training is not supported yet/],
    [['--weights.save-sharded'], /sharded weight checkpointing is not supported yet/],
    [['--memory-profiler-path', 'm.pkl'], /memory profiling is not supported yet/],
    [['--weight-broadcast.type', 'nccl'], /NCCL weight broadcast is not supported yet/],
    [['--model.impl', 'liger_kernel'], /Liger kernels are not supported yet/],
  ];
  for (const [argv, re] of cases) assert.match(errorOf(trainerSpec, argv), re, argv.join(' '));
  // Supported knobs with no effect on our engine are accepted.
  const c = configOf(trainerSpec, [
    '--model.attn',
    'sdpa',
    '--no-model.reshard-after-forward',
    '--model.load-using-meta',
    '--weights.save-format',
    'safetensors',
    '--model.ac',
  ]);
  assert.equal(c.model.ac?.freq, 1);
});

test('trainer: model.lora is the deprecated spelling of model.experimental.lora', () => {
  const r = resolveIn(trainerSpec, ['@', 't.toml'], { 't.toml': '[model.lora]\nrank = 8\nalpha = 32.0' });
  assert.equal(r.config.model.experimental.lora?.rank, 8);
  assert.equal(r.config.model.experimental.lora?.alpha, 32);
  assert.ok(r.warnings.some((w) => w.includes("'model.lora' is deprecated") && w.includes('model.experimental.lora')));
});

test('trainer: ckpt.keep and max_async_level aliases', () => {
  const r = resolveIn(trainerSpec, ['--ckpt.keep', '3', '--max-async-level', '2']);
  assert.equal(r.config.ckpt?.keep_last, 3);
  assert.equal(r.config.async_level, 2);
  assert.deepEqual(r.warnings, []);
});

test('trainer: bench uses fake data, 4 steps, no ckpt, no W&B extras', () => {
  const c = configOf(trainerSpec, ['--bench', '--ckpt', '--wandb']);
  assert.equal(c.max_steps, 4);
  assert.deepEqual(c.data.fake, { batch_size: 2, seq_len: 128 });
  assert.equal(c.ckpt, null);
  assert.equal(c.wandb?.log_extras, null);
});

test('trainer: W&B sample tables are never logged by the trainer', () => {
  const c = configOf(trainerSpec, ['--wandb']);
  assert.equal(c.wandb?.log_extras?.samples, false);
  assert.equal(c.wandb?.log_extras?.distributions, true);
  const r = resolveIn(trainerSpec, ['--wandb.log-extras.samples']);
  assert.equal(r.config.wandb?.log_extras?.samples, false);
  assert.ok(r.warnings.some((w) => w.includes('does not log sample tables')));
});

test('trainer: LoRA with NCCL and random init without meta loading are rejected', () => {
  assert.match(
    errorOf(trainerSpec, ['--weight-broadcast.type', 'nccl', '--model.experimental.lora']),
    /NCCL weight broadcast does not support LoRA yet/,
  );
  assert.match(
    errorOf(trainerSpec, ['--model.debug.random-init']),
    /Random initialize is only supported when loading with meta/,
  );
  assert.match(
    errorOf(trainerSpec, ['--loss.mask-ratio-low', '2', '--loss.mask-ratio-high', '1']),
    /mask_ratio_low \(2\) must be less than loss\.mask_ratio_high \(1\)/,
  );
});

test('trainer: schedulers must fit max_steps', () => {
  assert.match(errorOf(trainerSpec, ['--scheduler.type', 'cosine']), /cosine scheduler decays until max_steps/);
  assert.match(
    errorOf(trainerSpec, ['--scheduler.type', 'cosine', '--max-steps', '10', '--scheduler.warmup-steps', '10']),
    /warmup_steps \(10\) must be less than max_steps \(10\)/,
  );
  assert.match(errorOf(trainerSpec, ['--scheduler.type', 'linear']), /max_steps must be set/);
  assert.match(
    errorOf(trainerSpec, ['--scheduler.type', 'linear', '--max-steps', '15']),
    /must not exceed max_steps \(15\)/,
  );
  assert.match(
    errorOf(trainerSpec, [
      '--scheduler.type',
      'linear',
      '--scheduler.warmup-steps',
      '0',
      '--scheduler.decay-steps',
      '0',
    ]),
    /needs warmup_steps > 0 or decay_steps > 0/,
  );
  const c = configOf(trainerSpec, ['--scheduler.type', 'linear', '--max-steps', '20']);
  assert.deepEqual(c.scheduler, { type: 'linear', warmup_steps: 10, decay_steps: 10, min_lr: 0 });
  const w = configOf(trainerSpec, ['--scheduler.type', 'linear', '--scheduler.decay-steps', '0']);
  assert.equal(w.scheduler.type, 'linear');
});

test('trainer: muon keeps the seed betas and adds mu', () => {
  const c = configOf(trainerSpec, ['--optim.type', 'muon']);
  assert.deepEqual(c.optim, {
    type: 'muon',
    lr: 1e-6,
    weight_decay: 0.01,
    max_norm: 1.0,
    betas1: 0.9,
    betas2: 0.999,
    mu: 0.95,
  });
  assert.match(errorOf(trainerSpec, ['--optim.betas2', '1']), /less than 1/);
});

test('sft: defaults, dataset mixing and packing rules', () => {
  const c = configOf(sftSpec, []);
  assert.equal(c.data.type, 'sft');
  if (c.data.type !== 'sft') return;
  assert.equal(c.data.name, 'PrimeIntellect/Reverse-Text-SFT');
  assert.deepEqual(c.data.loss_mask, { system: false, user: false, assistant: true, tool: false });
  assert.equal(c.loss_impl, 'torch');
  assert.match(
    errorOf(sftSpec, ['--data.subsets', 'a', 'b', '--data.splits', 'train']),
    /Number of subsets must be equal to number of splits/,
  );
  assert.match(errorOf(sftSpec, ['--data.subsets', 'a', 'b', '--data.probabilities', '1']), /Number of probabilities/);
  assert.match(
    errorOf(sftSpec, ['--data.batch-size', '2', '--data.micro-batch-size', '4']),
    /greater than or equal to micro batch size/,
  );
  assert.match(errorOf(sftSpec, ['--data.pack-function', 'stack']), /divisible by 256/);
  configOf(sftSpec, ['--data.pack-function', 'stack', '--data.seq-len', '512']);
  assert.match(errorOf(sftSpec, ['--loss-impl', 'liger']), /Liger kernel loss is not supported yet/);
});

test('sft: bench keeps the data variant, sets 4 steps and drops ckpt', () => {
  const c = configOf(sftSpec, [
    '--bench',
    '--ckpt',
    '--data.seq-len',
    '4096',
    '--data.batch-size',
    '64',
    '--data.micro-batch-size',
    '2',
  ]);
  assert.equal(c.data.type, 'sft');
  assert.equal(c.max_steps, 4);
  assert.equal(c.ckpt, null);
  assert.equal(c.data.seq_len, 4096);
});

test('sft: model.lora deprecated, ckpt.keep alias', () => {
  const r = resolveIn(sftSpec, ['--model.lora.rank', '4', '--ckpt.keep', '2']);
  assert.equal(r.config.model.experimental.lora?.rank, 4);
  assert.equal(r.config.ckpt?.keep_last, 2);
  assert.equal(r.warnings.length, 1);
});
