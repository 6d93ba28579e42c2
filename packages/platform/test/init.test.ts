// `prime rl init`: the template, its file handling, and that it validates (hosted CLI spec C.3).
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseHostedConfig } from 'prime-rl/hosted';
import { renderTemplate, templateParts } from '../src/cli/rl/template.js';
import { prime, tempDir } from './helpers.js';

test('init writes rl.toml by default, and the result runs as a dry run', () => {
  const cwd = tempDir();
  const r = prime(['rl', 'init'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, '✓ Created rl.toml\nRun with: prime rl run rl.toml\n');
  const text = readFileSync(join(cwd, 'rl.toml'), 'utf8');
  assert.match(text, /^model = "PrimeIntellect\/Qwen3-0\.6B-Reverse-Text-SFT"$/m);
  assert.match(text, /^id = "primeintellect\/reverse-text"$/m);
  const run = prime(['rl', 'run', 'rl.toml', '--dry-run', '-o', 'json'], { cwd });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stderr.includes('Warning'), false, run.stderr);
});

test('init refuses to overwrite without --force; creates parent directories', () => {
  const cwd = tempDir({ 'rl.toml': 'keep me\n' });
  const r = prime(['rl', 'init'], { cwd });
  assert.equal(r.code, 1);
  assert.equal(r.stderr, 'Error: rl.toml already exists. Use --force to overwrite.\n');
  assert.equal(readFileSync(join(cwd, 'rl.toml'), 'utf8'), 'keep me\n');
  for (const flag of ['--force', '-f']) {
    writeFileSync(join(cwd, 'rl.toml'), 'keep me\n');
    const f = prime(['rl', 'init', flag], { cwd });
    assert.equal(f.code, 0, f.stderr);
    assert.match(readFileSync(join(cwd, 'rl.toml'), 'utf8'), /^model = /m);
  }
  const nested = prime(['rl', 'init', 'configs/exp/my.toml'], { cwd });
  assert.equal(nested.code, 0, nested.stderr);
  assert.ok(existsSync(join(cwd, 'configs/exp/my.toml')));
  assert.match(nested.stdout, /Run with: prime rl run configs\/exp\/my\.toml/);
});

test('init - prints the template on stdout and writes nothing', () => {
  const cwd = tempDir();
  const r = prime(['rl', 'init', '-'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, renderTemplate(templateParts()));
  assert.equal(existsSync(join(cwd, 'rl.toml')), false);
  assert.equal(existsSync(join(cwd, '-')), false);
});

test('init detects the environment of the current directory', () => {
  for (const meta of ['.prime/.env-metadata.json', '.env-metadata.json']) {
    const cwd = tempDir({ [meta]: JSON.stringify({ owner: 'alice', name: 'my-env' }) });
    const r = prime(['rl', 'init'], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^Detected environment: alice\/my-env$/m);
    assert.match(readFileSync(join(cwd, 'rl.toml'), 'utf8'), /^id = "alice\/my-env"$/m);
  }
  const broken = tempDir({ '.env-metadata.json': '{not json' });
  const r = prime(['rl', 'init'], { cwd: broken });
  assert.equal(r.code, 0);
  assert.match(readFileSync(join(broken, 'rl.toml'), 'utf8'), /^id = "primeintellect\/reverse-text"$/m);
});

test('init: usage errors', () => {
  const r = prime(['rl', 'init', 'a.toml', 'b.toml'], { cwd: tempDir() });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /^Error: Got unexpected extra argument \(b\.toml\)$/m);
  assert.equal(prime(['rl', 'init', '--bogus'], { cwd: tempDir() }).code, 2);
});

test('template: the active part validates with no warnings; every commented block validates when uncommented', () => {
  const parts = templateParts();
  const base = parseHostedConfig(renderTemplate(parts), 'rl.toml');
  assert.deepEqual(base.warnings, []);
  assert.equal(base.config.env.length, 1);
  const examples = parts.flatMap((p, i) => (p.kind === 'example' ? [i] : []));
  assert.ok(examples.length >= 9, 'expected the documented example blocks');
  const seen = new Set<string>();
  for (const i of examples) {
    const text = renderTemplate(parts, new Set([i]));
    const { config } = parseHostedConfig(text, `rl.toml (block ${i})`);
    for (const k of Object.keys(config)) seen.add(k);
    for (const k of Object.keys(config.buffer ?? {})) seen.add(`buffer.${k}`);
    for (const k of Object.keys(config.eval ?? {})) seen.add(`eval.${k}`);
  }
  // every hosted key is shown somewhere in the template
  for (const key of [
    'name',
    'env_files',
    'trajectory_strategy',
    'learning_rate',
    'lora_alpha',
    'oversampling_factor',
    'max_async_level',
    'wandb',
    'eval',
    'eval.env',
    'val',
    'buffer.online_difficulty_filtering',
    'buffer.easy_threshold',
    'buffer.hard_threshold',
    'buffer.easy_fraction',
    'buffer.hard_fraction',
    'buffer.env_ratios',
    'buffer.skip_verification',
    'buffer.seed',
  ]) {
    assert.ok(seen.has(key), `template never shows ${key}`);
  }
  // the temperature example lands in [sampling]
  const withTemp = parts.findIndex((p) => p.kind === 'example' && p.lines.some((l) => l.startsWith('temperature')));
  assert.equal(
    parseHostedConfig(renderTemplate(parts, new Set([withTemp])), 'rl.toml').config.sampling?.temperature,
    1,
  );
  // all blocks but the buffer's single env ratio together (a second [[env]] needs two ratios)
  const allButBuffer = new Set(examples.filter((i) => !parts[i]?.lines.includes('[buffer]')));
  assert.doesNotThrow(() => parseHostedConfig(renderTemplate(parts, allButBuffer), 'rl.toml'));
});
