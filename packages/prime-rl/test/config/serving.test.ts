// Inference, eval and synthesize schemas.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { resolveConfig } from '@prime-rl/config';
import { evalSpec, inferenceSpec, synthesizeOutputPath, synthesizeSpec } from '../../src/config/index.js';
import { configOf, errorOf, resolveIn, scratch } from './helpers.js';

test('inference: seed defaults, vllm_extra and output_dir', () => {
  const c = configOf(inferenceSpec, ['--vllm-extra', '{"max_num_seqs": 256}']);
  assert.equal(c.gpu_memory_utilization, 0.9);
  assert.equal(c.server.port, 8000);
  assert.equal(c.server.host, null);
  assert.equal(c.model.tool_call_parser, 'hermes');
  assert.equal(c.model.dtype, 'auto');
  assert.deepEqual(c.parallel, { tp: 1, dp: 1 });
  assert.deepEqual(c.vllm_extra, { max_num_seqs: 256 });
  assert.equal(c.output_dir, 'outputs');
  assert.match(errorOf(inferenceSpec, ['--parallel.tp', '2']), /tensor parallelism is not supported yet/);
  assert.match(errorOf(inferenceSpec, ['--server.port', '70000']), /less than or equal to 65535/);
  assert.match(errorOf(inferenceSpec, ['--gpu-memory-utilization', '0']), /greater than 0/);
});

test('eval: E2 defaults (OpenAI API client, gpt-4.1-mini)', () => {
  const c = configOf(evalSpec, []);
  assert.deepEqual(c.client.base_url, ['https://api.openai.com/v1']);
  assert.equal(c.client.timeout, 36000);
  assert.equal(c.client.server_type, 'openai');
  assert.equal(c.model.name, 'gpt-4.1-mini');
  assert.equal(c.num_examples, -1);
  assert.equal(c.rollouts_per_example, 1);
  assert.equal(c.eval_base, true);
  assert.equal(c.reasoning_field, 'reasoning_content');
  assert.equal(c.env[0]?.id, 'reverse-text');
  const local = configOf(evalSpec, ['--client.base-url', 'http://localhost:8000/v1']);
  assert.equal(local.client.server_type, 'vllm');
});

test('eval: base model and/or checkpoints, steps must exist, resume needs streaming', () => {
  assert.match(errorOf(evalSpec, ['--no-eval-base']), /You should either evaluate the base model and\/or checkpoints/);
  assert.match(errorOf(evalSpec, ['--steps', '1']), /set weights_dir too/);
  const dir = scratch();
  const weights = path.join(dir, 'weights');
  mkdirSync(path.join(weights, 'step_10'), { recursive: true });
  const ok = resolveConfig(evalSpec, { argv: ['--weights-dir', weights, '--steps', '10'], env: {}, cwd: dir }).config;
  assert.deepEqual(ok.steps, [10]);
  const msg = errorOf(evalSpec, ['--weights-dir', weights, '--steps', '10', '20']);
  assert.match(
    msg,
    new RegExp(`Step 20 not found in weights directory ${weights.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`),
  );
  assert.match(errorOf(evalSpec, ['--resume-path', 'r.jsonl']), /resume_path requires save\.stream = true/);
  configOf(evalSpec, ['--resume-path', 'r.jsonl', '--save.stream']);
});

test('eval: max_completion_tokens alias', () => {
  const r = resolveIn(evalSpec, ['--sampling.max-completion-tokens', '100']);
  assert.equal(r.config.sampling.max_tokens, 100);
});

test('synthesize: defaults and output path', () => {
  const c = configOf(synthesizeSpec, []);
  assert.equal(c.output.format, 'jsonl');
  assert.equal(c.output.path, null);
  assert.equal(c.min_reward, null);
  assert.equal(c.max_reward, null);
  assert.equal(synthesizeOutputPath(c), 'outputs/synthetic/data.jsonl');
  const p = configOf(synthesizeSpec, ['--output.format', 'parquet', '--output-dir', 'runs/s']);
  assert.equal(synthesizeOutputPath(p), 'runs/s/synthetic/data.parquet');
});

test('synthesize: reward bounds and format/extension consistency', () => {
  assert.match(
    errorOf(synthesizeSpec, ['@', 's.toml'], { 's.toml': 'min_reward = 1\nmax_reward = 0.5' }),
    /min_reward \(1\) must be less than or equal to max_reward \(0\.5\)/,
  );
  assert.match(
    errorOf(synthesizeSpec, ['--output.path', 'data.parquet']),
    /has a \.parquet extension but output\.format is "jsonl"/,
  );
  const c = configOf(synthesizeSpec, ['--output.path', 'd.parquet', '--output.format', 'parquet']);
  assert.equal(c.output.format, 'parquet');
  assert.match(errorOf(synthesizeSpec, ['--output.format', 'csv']), /Input should be 'jsonl' or 'parquet'/);
});

test('synthesize: reward filters from the CLI', () => {
  const c = configOf(synthesizeSpec, ['--min-reward', '0.5', '--max-reward', 'None']);
  assert.equal(c.min_reward, 0.5);
  assert.equal(c.max_reward, null);
});
