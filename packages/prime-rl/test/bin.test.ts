// The entrypoint binaries, run as real child processes.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { resolveConfig } from '@prime-rl/config';
import { inferenceSpec, orchestratorSpec, rlSpec, trainerSpec } from '../src/config/index.js';

const pkg = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const BINS = ['rl', 'orchestrator', 'trainer', 'inference', 'sft', 'eval', 'evals', 'synthesize'];

function run(bin: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [path.join(pkg, 'bin', `${bin}.js`), ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', NO_COLOR: '1', ...env },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const tmp = () => mkdtempSync(path.join(os.tmpdir(), 'prl-bin-'));
const body = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => !l.startsWith('#'))
    .join('\n');

test('every entrypoint prints --help and exits 0', () => {
  const cwd = tmp();
  for (const bin of BINS) {
    const r = run(bin, ['--help'], cwd);
    assert.equal(r.code, 0, `${bin}: ${r.stderr}`);
    assert.ok(r.stdout.startsWith(`usage: ${bin === 'evals' ? 'eval' : bin} [-h] [@ FILE] [OPTIONS]`), bin);
  }
});

test('every entrypoint rejects an unknown flag with exit 1 and no stack trace', () => {
  const cwd = tmp();
  for (const bin of BINS) {
    const r = run(bin, ['--max-stepz', '3'], cwd);
    assert.equal(r.code, 1, bin);
    assert.match(r.stderr, /--max-stepz/);
    assert.doesNotMatch(r.stderr, /\n\s+at /, `${bin} printed a stack trace`);
  }
});

test('entrypoints that cannot run yet say so after validating, with exit 2', () => {
  const r = run('trainer', [], tmp());
  assert.equal(r.code, 2);
  assert.match(r.stderr, /not available in this version yet/);
});

test('rl dry run: layered files and a flag give configs that re-load unchanged through each entrypoint', () => {
  const cwd = tmp();
  writeFileSync(
    path.join(cwd, 'a.toml'),
    'max_steps = 20\n[model]\nname = "M"\n[orchestrator]\nrollouts_per_example = 4\n[[orchestrator.env]]\nid = "reverse-text"\n[trainer.optim]\nlr = 3e-6\n[inference]\n',
  );
  writeFileSync(
    path.join(cwd, 'b.toml'),
    '[orchestrator.sampling]\nmax_tokens = 64\n[trainer.scheduler]\ntype = "cosine"\n',
  );
  const args = ['@', 'a.toml', '@', 'b.toml', '--orchestrator.batch-size', '64', '--dry-run', '--output-dir', 'out'];
  const r = run('rl', args, cwd, { PRIME_TRAINER__OPTIM__WEIGHT_DECAY: '0.05' });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(readdirSync(path.join(cwd, 'out', 'configs')).sort(), [
    'inference.toml',
    'orchestrator.toml',
    'trainer.toml',
  ]);

  const resolved = resolveConfig(rlSpec, {
    argv: args,
    env: { PRIME_TRAINER__OPTIM__WEIGHT_DECAY: '0.05' },
    cwd,
  }).config;
  assert.equal(resolved.orchestrator.batch_size, 64);
  assert.equal(resolved.trainer.optim.weight_decay, 0.05);
  const specs = { trainer: trainerSpec, orchestrator: orchestratorSpec, inference: inferenceSpec } as const;
  for (const name of ['trainer', 'orchestrator', 'inference'] as const) {
    const file = path.join('out', 'configs', `${name}.toml`);
    const again = resolveConfig(specs[name] as never, { argv: ['@', file], env: {}, cwd }).config;
    assert.deepEqual(again, resolved[name], `${name}.toml must re-load to the identical config`);
    // The standalone binary's own dry run of that file writes the same file again (a fixpoint).
    const before = body(path.join(cwd, file));
    const again2 = run(name, ['@', file, '--dry-run'], cwd);
    assert.equal(again2.code, 0, again2.stderr);
    assert.equal(body(path.join(cwd, file)), before, `${name}: dumping the re-loaded config changes nothing`);
  }
});

test('rl dry run of an invalid combination writes nothing', () => {
  const cwd = tmp();
  writeFileSync(path.join(cwd, 'rl.toml'), '[trainer]\n[orchestrator]\nbatch_size = 10\nrollouts_per_example = 3\n');
  const r = run('rl', ['@', 'rl.toml', '--dry-run', '--output-dir', 'out'], cwd);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /Batch size must be divisible by the number of samples per problem/);
  assert.deepEqual(readdirSync(cwd), ['rl.toml']);
});

test('the shipped example resolves', () => {
  const cwd = tmp();
  const example = path.resolve(pkg, '..', '..', 'examples', 'reverse-text', 'rl.toml');
  const r = run('rl', ['@', example, '--dry-run', '--output-dir', 'out'], cwd);
  assert.equal(r.code, 0, r.stderr);
  assert.match(readFileSync(path.join(cwd, 'out', 'configs', 'orchestrator.toml'), 'utf8'), /id = "reverse-text"/);
});
