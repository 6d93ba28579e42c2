// Orchestrator schema decisions beyond §5.6: hosted-era knobs, the hosted buffer, renames, bench.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { orchestratorSpec } from '../../src/config/index.js';
import { configOf, errorOf, resolveIn } from './helpers.js';

test('orchestrator: seed and hosted-era defaults', () => {
  const c = configOf(orchestratorSpec, []);
  assert.equal(c.batch_size, 128);
  assert.equal(c.rollouts_per_example, 1);
  assert.equal(c.seq_len, 2048);
  assert.equal(c.async_level, 1);
  assert.equal(c.strict_async_level, false);
  assert.equal(c.max_off_policy_steps, 8);
  assert.equal(c.oversampling_factor, 1.0);
  assert.equal(c.trajectory_strategy, 'interleaved');
  assert.equal(c.workers_per_env, 1);
  assert.equal(c.seed, 42);
  assert.deepEqual(c.client.base_url, ['http://localhost:8000/v1']);
  assert.equal(c.client.api_key_var, 'OPENAI_API_KEY');
  assert.deepEqual(c.env, [{ id: 'reverse-text', args: {}, name: null }]);
  assert.deepEqual(c.buffer, {
    type: 'simple',
    from_scratch: true,
    seed: null,
    env_ratios: null,
    easy_threshold: null,
    hard_threshold: null,
    easy_fraction: 0,
    hard_fraction: 0,
    online_difficulty_filtering: false,
    skip_verification: false,
    hash_keys: ['task', 'prompt'],
  });
  assert.deepEqual(c.advantage, {
    std_norm: null,
    length_weighted_mean: false,
    leave_one_out: false,
    neg_clipped: false,
  });
  assert.equal(c.ckpt, null);
  assert.equal(c.wandb, null);
  assert.equal(c.weight_broadcast.type, 'filesystem');
});

test('orchestrator: oversampling_factor must be at least 1 (O5)', () => {
  assert.match(errorOf(orchestratorSpec, ['--oversampling-factor', '0.5']), /greater than or equal to 1/);
});

test('orchestrator: a hosted [buffer] table without type is the simple (unified) buffer', () => {
  const c = configOf(orchestratorSpec, ['@', 'o.toml'], {
    'o.toml': [
      '[[env]]\nid = "a/x"\n[[env]]\nid = "b/y"',
      '[buffer]',
      'online_difficulty_filtering = true',
      'easy_threshold = 0.8',
      'hard_threshold = 0.2',
      'env_ratios = [0.5, 0.5]',
      'seed = 42',
    ].join('\n'),
  });
  assert.equal(c.buffer.type, 'simple');
  if (c.buffer.type !== 'simple') return;
  assert.deepEqual(c.buffer.env_ratios, [0.5, 0.5]);
  assert.equal(c.buffer.online_difficulty_filtering, true);
  assert.equal(c.buffer.seed, 42);
});

test('orchestrator: hosted buffer rules (O4)', () => {
  assert.match(
    errorOf(orchestratorSpec, ['--buffer.env-ratios', '0.5', '0.5']),
    /buffer\.env_ratios has 2 entries but there are 1 environments/,
  );
  assert.match(errorOf(orchestratorSpec, ['--buffer.env-ratios', '0']), /greater than 0/);
  assert.match(
    errorOf(orchestratorSpec, ['--buffer.easy-threshold', '0.2', '--buffer.hard-threshold', '0.5']),
    /easy_threshold \(0\.2\) must be greater than hard_threshold \(0\.5\)/,
  );
  const msg = errorOf(orchestratorSpec, [
    '--buffer.skip-verification',
    '--buffer.online-difficulty-filtering',
    '--buffer.easy-threshold',
    '0.9',
  ]);
  assert.match(msg, /skip_verification cannot be True when online_difficulty_filtering is set/);
  assert.match(msg, /skip_verification cannot be True when easy_threshold is set/);
  assert.match(errorOf(orchestratorSpec, ['--buffer.hash-keys']), /at least 1 item/);
  assert.match(
    errorOf(orchestratorSpec, ['--buffer.env-ratios', '1', '--env-mix.probabilities', '1']),
    /either buffer\.env_ratios or env_mix\.probabilities/,
  );
});

test('orchestrator: hosted fields are not accepted on the seed buffer variants', () => {
  const msg = errorOf(orchestratorSpec, ['--buffer.type', 'difficulty-pool', '--buffer.env-ratios', '1']);
  assert.match(msg, /env-ratios|env_ratios/);
  const c = configOf(orchestratorSpec, ['--buffer.type', 'difficulty-pool', '--buffer.seed', '3']);
  assert.deepEqual(c.buffer, {
    type: 'difficulty-pool',
    from_scratch: true,
    seed: 3,
    easy_border: 0.8,
    hard_border: 0.2,
    easy_fraction: 0.1,
    hard_fraction: 0.1,
  });
});

test('orchestrator: seed buffer variant sanity checks', () => {
  assert.match(
    errorOf(orchestratorSpec, [
      '--buffer.type',
      'difficulty-pool',
      '--buffer.easy-fraction',
      '0.6',
      '--buffer.hard-fraction',
      '0.6',
    ]),
    /must be at most 1/,
  );
  assert.match(
    errorOf(orchestratorSpec, [
      '--buffer.type',
      'online-difficulty',
      '--buffer.min-reward',
      '0.9',
      '--buffer.max-reward',
      '0.1',
    ]),
    /min_reward \(0\.9\) must be less than or equal to buffer\.max_reward \(0\.1\)/,
  );
  const c = configOf(orchestratorSpec, ['--buffer.type', 'online-difficulty', '--buffer.min-reward', 'None']);
  assert.equal(c.buffer.type === 'online-difficulty' && c.buffer.min_reward, null);
});

test('orchestrator: env names must be unique; env_mix probabilities need one per env', () => {
  const msg = errorOf(orchestratorSpec, ['@', 'o.toml'], { 'o.toml': '[[env]]\nid = "a/x"\n[[env]]\nid = "a/x"' });
  assert.match(msg, /Duplicate environment name 'a\/x'/);
  configOf(orchestratorSpec, ['@', 'o.toml'], {
    'o.toml': '[[env]]\nid = "a/x"\n[[env]]\nid = "a/x"\nname = "second"',
  });
  assert.match(
    errorOf(orchestratorSpec, ['--env-mix.probabilities', '0.5', '0.5']),
    /env_mix\.probabilities has 2 entries/,
  );
  assert.match(errorOf(orchestratorSpec, ['@', 'o.toml'], { 'o.toml': 'env = []' }), /at least 1 item/);
});

test('orchestrator: renames — max_async_level, ckpt.keep and max_completion_tokens are silent aliases', () => {
  const r = resolveIn(orchestratorSpec, ['@', 'o.toml'], {
    'o.toml':
      'max_async_level = 3\n[ckpt]\nkeep = 2\n[sampling]\nmax_completion_tokens = 64\n[eval.sampling]\nmax_completion_tokens = 32',
  });
  assert.equal(r.config.async_level, 3);
  assert.equal(r.config.ckpt?.keep_last, 2);
  assert.equal(r.config.sampling.max_tokens, 64);
  assert.equal(r.config.eval?.sampling.max_tokens, 32);
  assert.deepEqual(r.warnings, []);
  const cli = resolveIn(orchestratorSpec, ['--max-async-level', '2', '--ckpt.keep', '4']).config;
  assert.equal(cli.async_level, 2);
  assert.equal(cli.ckpt?.keep_last, 4);
});

test('orchestrator: bench also disables ckpt and W&B extras, and is idempotent', () => {
  const r = resolveIn(orchestratorSpec, ['--bench', '--ckpt', '--wandb', '--max-steps', '9']);
  assert.equal(r.config.ckpt, null);
  assert.equal(r.config.wandb?.log_extras, null);
  assert.equal(r.config.max_steps, 4);
  assert.ok(r.warnings.some((w) => w.includes('overrides max_steps (9) with 4')));
  const again = resolveIn(orchestratorSpec, ['--bench', '--max-steps', '4', '--async-level', '1000000000']);
  assert.deepEqual(again.warnings, []);
});

test('orchestrator: NCCL weight broadcast is not supported yet', () => {
  const msg = errorOf(orchestratorSpec, ['--weight-broadcast.type', 'nccl']);
  assert.match(msg, /NCCL weight broadcast is not supported yet/);
});

test('orchestrator: eval save to disk works, Hub pushes are not supported yet', () => {
  const c = configOf(orchestratorSpec, ['--eval.save.disk.path', 'out/evals']);
  assert.equal(c.eval?.save.disk?.path, 'out/evals');
  assert.match(errorOf(orchestratorSpec, ['--eval.save.env-hub']), /Environments Hub is not supported yet/);
  assert.match(
    errorOf(orchestratorSpec, ['--eval.save.hf.dataset-name', 'x']),
    /Hugging Face Hub is not supported yet/,
  );
});
