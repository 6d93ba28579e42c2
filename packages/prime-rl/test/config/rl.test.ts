// `rl` shared-field propagation and consistency checks beyond §5.6.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rlSpec } from '../../src/config/index.js';
import { configOf, errorOf, resolveIn } from './helpers.js';

const EMPTY = { 'rl.toml': '[trainer]\n[orchestrator]\n' };
const WITH_INFERENCE = { 'rl.toml': '[trainer]\n[orchestrator]\n[inference]\n' };

test('rl: defaults of shared fields are never pushed down', () => {
  const c = configOf(rlSpec, ['@', 'rl.toml'], {
    'rl.toml':
      '[trainer]\nmax_steps = 5\nasync_level = 2\n[trainer.log]\nlevel = "debug"\n[orchestrator]\nmax_steps = 5\nasync_level = 2\n[orchestrator.log]\nlevel = "debug"\n',
  });
  assert.equal(c.trainer.max_steps, 5);
  assert.equal(c.trainer.async_level, 2);
  assert.equal(c.trainer.log.level, 'debug');
  assert.equal(c.orchestrator.log.level, 'debug');
});

test('rl: explicit falsy shared values propagate (async_level = 0)', () => {
  const c = configOf(rlSpec, ['@', 'rl.toml', '--async-level', '0'], EMPTY);
  assert.equal(c.trainer.async_level, 0);
  assert.equal(c.orchestrator.async_level, 0);
  const m = configOf(rlSpec, ['@', 'rl.toml', '--max-async-level', '3'], EMPTY);
  assert.equal(m.trainer.async_level, 3);
});

test('rl: sub-config async levels must agree', () => {
  const msg = errorOf(rlSpec, ['@', 'rl.toml', '--trainer.async-level', '2'], EMPTY);
  assert.match(msg, /Trainer async level \(2\) and orchestrator async level \(1\) are not the same/);
});

test('rl: overwriting an explicit sub-config value warns; equal values do not', () => {
  const r = resolveIn(rlSpec, ['@', 'rl.toml', '--max-steps', '10', '--orchestrator.max-steps', '10'], EMPTY);
  assert.deepEqual(r.warnings, []);
  const w = resolveIn(rlSpec, ['@', 'rl.toml', '--output-dir', 'a', '--trainer.output-dir', 'b'], EMPTY);
  assert.equal(w.config.trainer.output_dir, 'a');
  assert.ok(w.warnings.some((x) => x.includes('trainer.output_dir = b with a')));
});

test('rl: output_dir always reaches the sub-configs, inference included', () => {
  const c = configOf(rlSpec, ['@', 'rl.toml'], WITH_INFERENCE);
  assert.equal(c.trainer.output_dir, 'outputs');
  assert.equal(c.inference?.output_dir, 'outputs');
  const d = configOf(rlSpec, ['@', 'rl.toml', '--output-dir', 'runs/y'], WITH_INFERENCE);
  assert.equal(d.inference?.output_dir, 'runs/y');
});

test('rl: shared ckpt fields, ckpt.keep alias, and mismatched intervals', () => {
  const c = configOf(rlSpec, ['@', 'rl.toml', '--ckpt.keep', '3', '--ckpt.resume-step', '-1'], EMPTY);
  assert.equal(c.trainer.ckpt?.keep_last, 3);
  assert.equal(c.orchestrator.ckpt?.keep_last, 3);
  assert.equal(c.trainer.ckpt?.resume_step, -1);
  assert.match(
    errorOf(rlSpec, ['@', 'rl.toml', '--trainer.ckpt.interval', '5', '--orchestrator.ckpt'], EMPTY),
    /Trainer checkpoint interval \(5\) and orchestrator checkpoint interval \(None\) are not the same/,
  );
  assert.match(
    errorOf(rlSpec, ['@', 'rl.toml', '--orchestrator.ckpt'], EMPTY),
    /Orchestrator checkpoint config is specified, but trainer checkpoint config is not/,
  );
});

test('rl: shared wandb enables both, pushes project/entity/offline, warns on resume without id', () => {
  const r = resolveIn(
    rlSpec,
    ['@', 'rl.toml', '--wandb.project', 'p', '--wandb.entity', 'team', '--wandb.offline', '--ckpt.resume-step', '4'],
    EMPTY,
  );
  for (const sub of [r.config.trainer, r.config.orchestrator]) {
    assert.equal(sub.wandb?.project, 'p');
    assert.equal(sub.wandb?.entity, 'team');
    assert.equal(sub.wandb?.offline, true);
    assert.equal(sub.wandb?.name, null);
  }
  assert.ok(r.warnings.some((w) => w.startsWith('W&B run ID is not set for trainer even though resuming training')));
  assert.match(
    errorOf(rlSpec, ['@', 'rl.toml', '--trainer.wandb.project', 'a', '--orchestrator.wandb.project', 'b'], EMPTY),
    /Trainer W&B project \(a\) and orchestrator W&B project \(b\) are not the same/,
  );
});

test('rl: shared log, seq_len and max_model_len', () => {
  const c = configOf(
    rlSpec,
    ['@', 'rl.toml', '--log.level', 'debug', '--seq-len', '4096', '--max-model-len', '8192'],
    WITH_INFERENCE,
  );
  assert.equal(c.trainer.log.level, 'debug');
  assert.equal(c.orchestrator.log.level, 'debug');
  assert.equal(c.orchestrator.seq_len, 4096);
  assert.equal(c.inference?.model.max_model_len, 8192);
});

test('rl: inference and orchestrator model names must agree', () => {
  const msg = errorOf(rlSpec, ['@', 'rl.toml', '--inference.model.name', 'X'], WITH_INFERENCE);
  assert.match(msg, /Inference model name \(X\) and orchestrator model name \(Qwen\/Qwen3-0\.6B\) are not the same/);
});

test('rl: weight broadcast types must agree; shared NCCL is propagated then reported unsupported', () => {
  assert.match(
    errorOf(rlSpec, ['@', 'rl.toml', '--trainer.weight-broadcast.type', 'nccl'], EMPTY),
    /Trainer weight broadcast type \(nccl\) and orchestrator weight broadcast type \(filesystem\) are not the same/,
  );
  const msg = errorOf(
    rlSpec,
    ['@', 'rl.toml', '--weight-broadcast.type', 'nccl', '--trainer-gpu-ids', '1'],
    WITH_INFERENCE,
  );
  assert.match(msg, /NCCL weight broadcast is not supported yet/);
  assert.doesNotMatch(msg, /are not the same/);
});

test('rl: inference GPUs must divide by tp; a single trainer GPU leaves num_train_workers alone', () => {
  const c = configOf(rlSpec, ['@', 'rl.toml', '--orchestrator.num-train-workers', '1'], WITH_INFERENCE);
  assert.equal(c.orchestrator.num_train_workers, 1);
  assert.equal(c.inference?.parallel.dp, 1);
  const r = resolveIn(
    rlSpec,
    ['@', 'rl.toml', '--inference-gpu-ids', '0,1', '--inference.parallel.dp', '1'],
    WITH_INFERENCE,
  );
  assert.equal(r.config.inference?.parallel.dp, 2);
  assert.ok(r.warnings.some((w) => w.includes('inference.parallel.dp = 1 with 2')));
});

test('rl: bench on both sub-configs, trainer fake data shaped like the orchestrator batches', () => {
  const c = configOf(
    rlSpec,
    ['@', 'rl.toml', '--bench', '--orchestrator.batch-size', '16', '--orchestrator.seq-len', '512'],
    EMPTY,
  );
  assert.equal(c.trainer.bench, true);
  assert.equal(c.orchestrator.bench, true);
  assert.deepEqual(c.trainer.data.fake, { batch_size: 16, seq_len: 512 });
  assert.equal(c.trainer.max_steps, 4);
  assert.equal(c.orchestrator.max_steps, 4);
  assert.equal(c.orchestrator.async_level, 1_000_000_000);
  assert.match(
    errorOf(rlSpec, ['@', 'rl.toml', '--orchestrator.bench'], EMPTY),
    /Trainer benchmark mode \(False\) and orchestrator benchmark mode \(True\) are not the same/,
  );
});

test('rl: trainer LoRA names the orchestrator adapter r<rank>-a<alpha> unless set', () => {
  const c = configOf(rlSpec, ['@', 'rl.toml', '--trainer.model.experimental.lora.rank', '8'], EMPTY);
  assert.equal(c.orchestrator.lora_name, 'r8-a16.0');
  const d = configOf(rlSpec, ['@', 'rl.toml', '--trainer.model.lora', '--orchestrator.lora-name', 'mine'], EMPTY);
  assert.equal(d.orchestrator.lora_name, 'mine');
});

test('rl: sub-config rules report under the sub-config flag', () => {
  const msg = errorOf(
    rlSpec,
    ['@', 'rl.toml', '--orchestrator.batch-size', '10', '--orchestrator.rollouts-per-example', '3'],
    EMPTY,
  );
  assert.match(msg, /--orchestrator\n\s+Batch size must be divisible by the number of samples per problem/);
  const t = errorOf(rlSpec, ['@', 'rl.toml', '--trainer.model.debug.random-init'], EMPTY);
  assert.match(t, /--trainer\.model\n\s+Random initialize is only supported when loading with meta/);
});

test('rl: renames inside section files (max_async_level, ckpt.keep)', () => {
  const r = resolveIn(rlSpec, ['--trainer', '@', 't.toml', '--orchestrator', '@', 'o.toml'], {
    't.toml': 'max_async_level = 2\n[ckpt]\nkeep = 1',
    'o.toml': 'max_async_level = 2\n[ckpt]\nkeep = 1',
  });
  assert.equal(r.config.trainer.async_level, 2);
  assert.equal(r.config.orchestrator.ckpt?.keep_last, 1);
});
