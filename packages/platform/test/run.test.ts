// `prime rl run`: config §5.7 cases through the real binary, dry runs, and the missing run service.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { resolveConfig } from '@prime-rl/config';
import { rlSpec } from 'prime-rl/config';
import { hostedToRl, parseHostedConfig } from 'prime-rl/hosted';
import { parse as parseToml } from 'smol-toml';
import { ENV, FULL, MINIMAL, MODEL, prime, tempDir } from './helpers.js';

const NO_SERVICE = 'Error: no run service is configured (set PRIME_API_BASE_URL or run with --dry-run)\n';

/** `prime rl run <file> --dry-run -o json` on a config text; returns the result and parsed stdout. */
function dryRunJson(toml: string, extra: string[] = [], env: Record<string, string> = {}) {
  const cwd = tempDir({ 'rl.toml': toml });
  const r = prime(['rl', 'run', 'rl.toml', '--dry-run', '-o', 'json', ...extra], { cwd, env });
  return { r, cwd, body: r.code === 0 ? (JSON.parse(r.stdout) as Record<string, unknown>) : undefined };
}

function failing(toml: string, files: Record<string, string> = {}, extra: string[] = []) {
  const cwd = tempDir({ 'rl.toml': toml, ...files });
  const r = prime(['rl', 'run', 'rl.toml', '--dry-run', ...extra], { cwd });
  assert.equal(r.code, 1, `expected exit 1, got ${r.code}: ${r.stderr}`);
  return r;
}

test('§5.7 #114 (CLI) minimal seed-001 file: request carries its values, no temperature', () => {
  const { r, body } = dryRunJson(MINIMAL);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(body, {
    model: { name: 'PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT' },
    environments: [{ id: 'your-username/your-env' }],
    rollouts_per_example: 8,
    max_steps: 100,
    batch_size: 128,
    secrets: [],
    max_tokens: 2048,
  });
  assert.ok(!('temperature' in (body as object)));
  // JSON mode: stdout is only the JSON document; progress went to stderr
  assert.match(r.stderr, /^Loading config from rl\.toml$/m);
});

test('§5.7 #115 (CLI) missing model', () => {
  const r = failing(ENV);
  assert.match(r.stderr, /^Error: Invalid config in rl\.toml:\n {2}• model: Field required$/m);
});

test('§5.7 #116 (CLI) no [[env]]', () => {
  assert.match(failing(MODEL).stderr, /^Error: No environments specified\. Add \[\[env\]\] sections\.$/m);
});

test('§5.7 #117 (CLI) env id without owner', () => {
  const r = failing(`${MODEL}[[env]]\nid = "reverse-text"\n`);
  assert.match(r.stderr, /^Error: Invalid environment format: 'reverse-text'\. Expected 'owner\/name' format\.$/m);
});

test('§5.7 #118 (CLI) eval env id without owner', () => {
  const r = failing(`${MODEL}${ENV}[[eval.env]]\nid = "evalenv"\n`);
  assert.match(r.stderr, /^Error: Invalid eval environment format: 'evalenv'\. Expected 'owner\/name' format\.$/m);
});

test('§5.7 #119 (CLI) negative temperature', () => {
  const r = failing(`${MODEL}[sampling]\ntemperature = -0.5\n${ENV}`);
  assert.match(r.stderr, /^ {2}• sampling\.temperature: Input should be greater than or equal to 0 \(got -0\.5\)$/m);
});

test('§5.7 #120 (CLI) batch_size 10 with rollouts_per_example 3', () => {
  const r = failing(`${MODEL}batch_size = 10\nrollouts_per_example = 3\n${ENV}`);
  assert.match(r.stderr, /• batch_size: Batch size must be divisible by the number of samples per problem/);
});

test('§5.7 #121 (CLI) defaults 100 / 128 / 8', () => {
  const { r, body } = dryRunJson(`${MODEL}${ENV}`);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(body?.max_steps, 100);
  assert.equal(body?.batch_size, 128);
  assert.equal(body?.rollouts_per_example, 8);
  assert.match(r.stderr, /^Warning: \[sampling\] max_tokens is not set/m);
});

test('§5.7 #122 (CLI) env_file relative to the config file; --env-file adds and overrides', () => {
  const cwd = tempDir({
    'cfg/rl.toml': `${MODEL}env_file = ["secrets.env"]\n${ENV}`,
    'cfg/secrets.env': 'FROM_CONFIG=1\nSHARED=config\n',
    'secrets.env': 'FROM_CWD=1\n',
    'cli.env': 'SHARED=cli\nFROM_CLI=1\n',
  });
  const r = prime(['rl', 'run', 'cfg/rl.toml', '--env-file', 'cli.env', '--dry-run', '-o', 'json'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  const body = JSON.parse(r.stdout) as { secrets: Array<{ key: string }> };
  assert.deepEqual(body.secrets, [{ key: 'FROM_CONFIG' }, { key: 'SHARED' }, { key: 'FROM_CLI' }]);
  assert.match(r.stderr, /^Warning: 'env_file' is deprecated, use 'env_files' instead\.$/m);
  // the same config run from inside cfg/ finds the file too (it is relative to the config, not the CWD)
  const inner = prime(['rl', 'run', 'rl.toml', '--dry-run', '-o', 'json'], { cwd: join(cwd, 'cfg') });
  assert.equal(inner.code, 0, inner.stderr);
  // a missing config env file is an error naming it relative to the config path
  const missing = tempDir({ 'cfg/rl.toml': `${MODEL}env_files = ["nope.env"]\n${ENV}` });
  const m = prime(['rl', 'run', 'cfg/rl.toml', '--dry-run'], { cwd: missing });
  assert.equal(m.code, 1);
  assert.match(m.stderr, /^Error: Env file not found: cfg\/nope\.env$/m);
});

test('§5.7 #123 (CLI) [wandb] project without WANDB_API_KEY', () => {
  const toml = `${MODEL}${ENV}[wandb]\nproject = "p"\n`;
  const r = failing(toml);
  assert.match(r.stderr, /^Error: WANDB_API_KEY is required when W&B monitoring is configured\.$/m);
  assert.match(r.stderr, /^Provide it via:$/m);
  // with the key, from the CLI's own environment through a bare -e
  const cwd = tempDir({ 'rl.toml': toml });
  const ok = prime(['rl', 'run', 'rl.toml', '-e', 'WANDB_API_KEY', '--dry-run', '-o', 'json'], {
    cwd,
    env: { WANDB_API_KEY: 'k-from-env' },
  });
  assert.equal(ok.code, 0, ok.stderr);
  const body = JSON.parse(ok.stdout) as Record<string, unknown>;
  assert.deepEqual(body.secrets, [{ key: 'WANDB_API_KEY' }]);
  assert.deepEqual(body.monitoring, { wandb: { project: 'p' } });
  // an environment variable alone is not forwarded implicitly
  const implicit = prime(['rl', 'run', 'rl.toml', '--dry-run'], { cwd, env: { WANDB_API_KEY: 'k' } });
  assert.equal(implicit.code, 1);
});

test('§5.7 #124 (CLI) unknown top-level key', () => {
  const r = failing(`${MODEL}foo = 1\n${ENV}`);
  assert.match(r.stderr, /^ {2}• foo: Extra inputs are not permitted$/m);
});

test('§5.7 #125 (CLI) trajectory_strategy = "branching" is accepted and forwarded', () => {
  const cwd = tempDir({ 'rl.toml': `${MINIMAL.replace('max_steps', 'trajectory_strategy = "branching"\nmax_steps')}` });
  const r = prime(['rl', 'run', 'rl.toml', '--dry-run', '-o', 'json', '--output-dir', 'out'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  assert.equal((JSON.parse(r.stdout) as Record<string, unknown>).trajectory_strategy, 'branching');
  assert.doesNotMatch(r.stderr, /deprecated/);
  const rl = parseToml(readFileSync(join(cwd, 'out/configs/rl.toml'), 'utf8')) as {
    orchestrator: Record<string, unknown>;
  };
  assert.equal(rl.orchestrator.trajectory_strategy, 'branching');
});

test('config file errors: not found, invalid TOML, leading @', () => {
  const cwd = tempDir({ 'bad.toml': 'x = [1,\n', 'rl.toml': MINIMAL });
  const nf = prime(['rl', 'run', 'missing.toml'], { cwd });
  assert.equal(nf.code, 1);
  assert.match(nf.stderr, /^Error: Config file not found: missing\.toml$/m);
  const bad = prime(['rl', 'run', 'bad.toml'], { cwd });
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /^Error: Invalid TOML in bad\.toml: /m);
  for (const args of [['@rl.toml'], ['@', 'rl.toml']]) {
    const r = prime(['rl', 'run', ...args, '--dry-run', '-o', 'json'], { cwd });
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
  }
});

test('prime rl CONFIG is short for prime rl run CONFIG', () => {
  const cwd = tempDir({ 'rl.toml': MINIMAL });
  const r = prime(['rl', 'rl.toml', '--dry-run', '-o', 'json'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  assert.equal((JSON.parse(r.stdout) as Record<string, unknown>).max_steps, 100);
  const at = prime(['rl', '@rl.toml', '--dry-run', '-o', 'json'], { cwd });
  assert.equal(at.code, 0, at.stderr);
});

test('without --dry-run: fails clearly, never pretends to start a run', () => {
  const cwd = tempDir({ 'rl.toml': MINIMAL });
  const r = prime(['rl', 'run', 'rl.toml'], { cwd });
  assert.equal(r.code, 1);
  assert.ok(r.stderr.endsWith(NO_SERVICE), r.stderr);
  assert.doesNotMatch(r.stdout + r.stderr, /created|✓/i);
  // validation still comes first
  const bad = tempDir({ 'rl.toml': MODEL });
  assert.match(prime(['rl', 'run', 'rl.toml'], { cwd: bad }).stderr, /No environments specified/);
  // a configured base URL does not make this version submit either
  const withUrl = prime(['rl', 'run', 'rl.toml'], { cwd, env: { PRIME_API_BASE_URL: 'http://127.0.0.1:9' } });
  assert.equal(withUrl.code, 1);
  assert.match(withUrl.stderr, /^Error: this version of prime cannot submit runs/m);
});

test('dry run in table mode: summary, request JSON and completion line on stdout', () => {
  const cwd = tempDir({ 'rl.toml': MINIMAL });
  const r = prime(['rl', 'run', 'rl.toml', '--dry-run', '-e', 'SOME_KEY=v'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^Loading config from rl\.toml$/m);
  assert.match(r.stdout, /^ {4}Model: {8}PrimeIntellect\/Qwen3-0\.6B-Reverse-Text-SFT$/m);
  assert.match(r.stdout, /^ {4}Rollouts per Example: 8$/m);
  assert.match(r.stdout, /^ {4}Keys: SOME_KEY$/m);
  assert.match(r.stdout, /"secrets": \[\n\s+\{\n\s+"key": "SOME_KEY"\n\s+\}\n\s+\]/);
  assert.match(r.stdout, /Dry run complete/);
  assert.equal(r.stderr, '');
});

test('dry run --output-dir writes configs/rl.toml: the mapped rl config, nulls omitted', () => {
  const toml = `${MINIMAL}[eval]\ninterval = 10\n[[eval.env]]\nid = "o/e"\n[val]\n`;
  const cwd = tempDir({ 'rl.toml': toml });
  const r = prime(['rl', 'run', 'rl.toml', '--dry-run', '--output-dir', 'out'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^Wrote out\/configs\/rl\.toml$/m);
  const text = readFileSync(join(cwd, 'out/configs/rl.toml'), 'utf8');
  assert.doesNotMatch(text, /null|None/);
  const written = JSON.parse(JSON.stringify(parseToml(text))) as unknown;
  assert.deepEqual(written, hostedToRl(parseHostedConfig(toml, 'rl.toml').config));
  assert.deepEqual(readdirSync(join(cwd, 'out')), ['configs']);
});

test('the written configs/rl.toml loads with the rl entrypoint (rl @ configs/rl.toml)', () => {
  const cwd = tempDir({ 'rl.toml': FULL, 'secrets.env': 'WANDB_API_KEY=k\n' });
  const r = prime(['rl', 'run', 'rl.toml', '--dry-run', '--output-dir', 'out'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  const { config } = resolveConfig(rlSpec, { argv: ['@', 'out/configs/rl.toml'], env: {}, cwd });
  assert.equal(config.trainer.max_steps, 500);
  assert.equal(config.orchestrator.model.name, 'PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT');
  assert.equal(config.trainer.model.experimental.lora?.alpha, 16);
  assert.equal(config.orchestrator.buffer.type, 'simple');
});

test('dry run with an invalid config writes nothing', () => {
  const cwd = tempDir({ 'rl.toml': `${MODEL}batch_size = 10\nrollouts_per_example = 3\n${ENV}` });
  const r = prime(['rl', 'run', 'rl.toml', '--dry-run', '--output-dir', 'out'], { cwd });
  assert.equal(r.code, 1);
  assert.equal(existsSync(join(cwd, 'out')), false);
});

test('secrets: -e wins over --env-file and config env files (names only in the request)', () => {
  const cwd = tempDir({
    'rl.toml': `${MODEL}env_files = ["a.env"]\n${ENV}`,
    'a.env': 'A=1\nB=1\n',
    'b.env': 'B=2\nC=2\n',
  });
  const r = prime(
    ['rl', 'run', 'rl.toml', '--env-file', 'b.env', '-e', 'C=3', '--env-var', 'D=4', '--dry-run', '-o', 'json'],
    {
      cwd,
    },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual((JSON.parse(r.stdout) as { secrets: unknown }).secrets, [
    { key: 'A' },
    { key: 'B' },
    { key: 'C' },
    { key: 'D' },
  ]);
  const unset = prime(['rl', 'run', 'rl.toml', '-e', 'NOT_SET_ANYWHERE', '--dry-run'], { cwd });
  assert.equal(unset.code, 1);
  assert.match(unset.stderr, /^Error: Environment variable 'NOT_SET_ANYWHERE' is not set\./m);
});

/** Every regular file below `dir`. */
function filesBelow(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? filesBelow(p) : [p];
  });
}

test('a secret value given with -e never appears in any output or written file', () => {
  const SECRET = 'sk-very-secret-7f3a9c2e1b';
  const FILE_SECRET = 'file-secret-0d8e4b';
  const toml = `${MINIMAL}[wandb]\nproject = "p"\nentity = "e"\nname = "n"\n`;
  const cwd = tempDir({ 'rl.toml': toml, 'more.env': `OTHER=${FILE_SECRET}\nbroken line ${FILE_SECRET}\n` });
  const runs = [
    [
      'rl',
      'run',
      'rl.toml',
      '-e',
      `WANDB_API_KEY=${SECRET}`,
      '--env-file',
      'more.env',
      '--dry-run',
      '--output-dir',
      'o1',
    ],
    [
      'rl',
      'run',
      'rl.toml',
      '-e',
      `WANDB_API_KEY=${SECRET}`,
      '--env-file',
      'more.env',
      '--dry-run',
      '-o',
      'json',
      '--output-dir',
      'o2',
    ],
    ['rl', 'run', 'rl.toml', '-e', `WANDB_API_KEY="${SECRET}"`, '--env-file', 'more.env'],
    ['rl', 'rl.toml', '-e', `WANDB_API_KEY=${SECRET}`, '-e', `bad-name=${SECRET}`, '--dry-run'],
    ['rl', 'run', 'rl.toml', '-e', SECRET, '--dry-run'],
  ];
  for (const args of runs) {
    const r = prime(args, { cwd });
    assert.ok(!r.stdout.includes(SECRET) && !r.stderr.includes(SECRET), `secret leaked by: ${args.join(' ')}`);
    assert.ok(
      !r.stdout.includes(FILE_SECRET) && !r.stderr.includes(FILE_SECRET),
      `file secret leaked by: ${args.join(' ')}`,
    );
  }
  const written = filesBelow(cwd).filter((f) => !f.endsWith('more.env'));
  assert.ok(written.some((f) => f.endsWith(join('o1', 'configs', 'rl.toml'))));
  for (const f of written) {
    const text = readFileSync(f, 'utf8');
    assert.ok(!text.includes(SECRET) && !text.includes(FILE_SECRET), `secret written to ${f}`);
  }
});
