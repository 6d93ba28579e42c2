// The sft trainer end to end on real files: a tiny random Qwen3 model in Hugging Face layout with the
// reverse-text byte tokenizer, chat data in JSONL. Loss goes down, checkpoints and final weights land
// where they should, resuming from a checkpoint reproduces an uninterrupted run bit for bit, and the
// CLI runs as a child process.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as T from '@prime-rl/tensor';
import { DecoderModel, loadAdapter, loadPretrained, qwen3Config, savePretrained } from '@prime-rl/lm';
import { resolveConfig } from '@prime-rl/config';
import { sftSpec } from '../src/config/index.js';
import { runSft } from '../src/sft/run.js';

const pkg = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const TOKENIZER = path.resolve(pkg, '..', '..', 'examples', 'reverse-text', 'tokenizer');
const root = mkdtempSync(path.join(os.tmpdir(), 'prl-sft-'));
const modelDir = path.join(root, 'model');
const dataFile = path.join(root, 'train.jsonl');
after(() => rmSync(root, { recursive: true, force: true }));

before(async () => {
  T.useBackend('cpu', { threads: 1 });
  const model = DecoderModel.init(
    qwen3Config({
      vocabSize: 272,
      hiddenSize: 32,
      numLayers: 2,
      numHeads: 2,
      numKvHeads: 1,
      headDim: 16,
      intermediateSize: 64,
      rmsNormEps: 1e-6,
      ropeTheta: 10000,
      tieWordEmbeddings: true,
    }),
    { seed: 1 },
  );
  await savePretrained(model, modelDir);
  model.dispose();
  cpSync(TOKENIZER, modelDir, { recursive: true });
  const words = ['alpha', 'beta', 'gamma', 'delta', 'echo', 'fox'];
  const lines: string[] = [];
  for (let i = 0; i < 40; i++) {
    const text = Array.from({ length: 2 + (i % 4) }, (_, j) => words[(i * 7 + j * 3) % words.length]).join(' ');
    lines.push(
      JSON.stringify({
        prompt: [{ role: 'user', content: text }],
        completion: [{ role: 'assistant', content: [...text].reverse().join('') }],
      }),
    );
  }
  writeFileSync(dataFile, lines.join('\n') + '\n');
});

function config(outputDir: string, argv: string[]) {
  return resolveConfig(sftSpec, {
    env: {},
    argv: [
      '--model.name',
      modelDir,
      '--data.name',
      dataFile,
      '--data.seq-len',
      '96',
      '--data.batch-size',
      '4',
      '--data.micro-batch-size',
      '2',
      '--optim.lr',
      '3e-3',
      '--output-dir',
      outputDir,
      ...argv,
    ],
  }).config;
}

const quiet = { write: () => true } as unknown as NodeJS.WritableStream;
const metricsOf = (dir: string) =>
  readFileSync(path.join(dir, 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, number>);

test('sft trains, checkpoints, and writes Hugging Face weights that load back', async () => {
  T.useBackend('cpu', { threads: 1 });
  const out = path.join(root, 'run-a');
  const result = await runSft(config(out, ['--max-steps', '8', '--ckpt.interval', '3', '--ckpt.keep-last', '1']), {
    stream: quiet,
  });
  assert.equal(result.steps, 8);
  const metrics = metricsOf(out);
  assert.deepEqual(
    metrics.map((m) => m['step']),
    [1, 2, 3, 4, 5, 6, 7, 8],
  );
  const losses = metrics.map((m) => m['loss/mean']!);
  assert.ok(losses[7]! < losses[0]! * 0.9, `loss goes down: ${losses.join(', ')}`);
  assert.ok(metrics.every((m) => m['progress/loss_tokens']! > 0 && m['perf/throughput']! > 0));
  // keep_last = 1: only the final checkpoint survives (step 3 and 6 were pruned).
  assert.deepEqual(readdirSync(path.join(out, 'checkpoints')), ['step_8']);
  const weights = path.join(out, 'weights', 'step_8');
  for (const f of ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json', 'STABLE'])
    assert.ok(existsSync(path.join(weights, f)), f);
  const { model } = await loadPretrained(weights);
  assert.equal(model.config.numLayers, 2);
  model.dispose();
  assert.ok(readFileSync(path.join(out, 'logs', 'sft.log'), 'utf8').includes('Step 8/8'));
});

test('resuming from a checkpoint gives the same weights as an uninterrupted run', async () => {
  T.useBackend('cpu', { threads: 1 });
  const straight = path.join(root, 'straight');
  await runSft(config(straight, ['--max-steps', '6']), { stream: quiet });
  const split = path.join(root, 'split');
  await runSft(config(split, ['--max-steps', '3', '--scheduler.type', 'constant', '--ckpt']), { stream: quiet });
  await runSft(config(split, ['--max-steps', '6', '--ckpt.resume-step', '-1']), { stream: quiet });
  const a = readFileSync(path.join(straight, 'weights', 'step_6', 'model.safetensors'));
  const b = readFileSync(path.join(split, 'weights', 'step_6', 'model.safetensors'));
  assert.ok(a.equals(b), 'final weights differ');
  const losses = (dir: string) => metricsOf(dir).map((m) => m['loss/mean']);
  assert.deepEqual(losses(split), losses(straight));
});

test('resume_step naming a missing checkpoint fails with the path', async () => {
  const out = path.join(root, 'missing');
  await assert.rejects(
    runSft(config(out, ['--max-steps', '2', '--ckpt.resume-step', '5']), { stream: quiet }),
    /ckpt\.resume_step = 5: no complete checkpoint at .*checkpoints\/step_5/,
  );
});

test('the sft binary runs fake data with --bench and reports throughput', () => {
  const out = path.join(root, 'bench');
  const r = spawnSync(
    process.execPath,
    [
      path.join(pkg, 'bin', 'sft.js'),
      '--model.name',
      modelDir,
      '--data.type',
      'fake',
      '--data.seq-len',
      '32',
      '--data.batch-size',
      '2',
      '--bench',
      '--output-dir',
      out,
    ],
    { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', PRIME_TENSOR_THREADS: '1' } },
  );
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /Step 4\/4 \|/);
  assert.match(
    r.stderr,
    /Benchmark \(3 steps after 1 warm-up\): throughput [\d,]+ ± [\d,]+ \[[\d,]+, [\d,]+\] tokens\/s/,
  );
  assert.ok(!existsSync(path.join(out, 'checkpoints')));
});

test('sft with LoRA: merged weights and the separately saved PEFT adapter give the same model', async () => {
  T.useBackend('cpu', { threads: 1 });
  const out = path.join(root, 'lora');
  await runSft(
    config(out, [
      '--max-steps',
      '4',
      '--optim.lr',
      '2e-2',
      '--model.experimental.lora.rank',
      '4',
      '--weights.save-adapter-separately',
    ]),
    { stream: quiet },
  );
  const weights = path.join(out, 'weights', 'step_4');
  const adapterConfig = JSON.parse(
    readFileSync(path.join(weights, 'adapter', 'adapter_config.json'), 'utf8'),
  ) as Record<string, unknown>;
  assert.equal(adapterConfig['r'], 4);
  const ids = T.tensor(Int32Array.from([257, 72, 105, 258]), [1, 4]);
  const logits = (model: DecoderModel): Float32Array =>
    T.tidy(() => T.noGrad(() => model.forward(ids).toArray() as Float32Array));
  const merged = await loadPretrained(weights);
  const base = await loadPretrained(modelDir);
  const before = logits(base.model);
  const handle = await loadAdapter(base.model, path.join(weights, 'adapter'));
  const withAdapter = logits(base.model);
  const mergedLogits = logits(merged.model);
  let diff = 0;
  let changed = 0;
  for (let i = 0; i < mergedLogits.length; i++) {
    diff = Math.max(diff, Math.abs(mergedLogits[i]! - withAdapter[i]!));
    changed = Math.max(changed, Math.abs(before[i]! - withAdapter[i]!));
  }
  assert.ok(diff < 1e-4, `merged vs adapter: ${diff}`);
  assert.ok(changed > 1e-3, 'training changed the model');
  handle.detach();
  merged.model.dispose();
  base.model.dispose();
  ids.dispose();
});
