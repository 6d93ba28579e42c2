// The `prime` binary: global behaviour, `prime rl` dispatch and usage errors (hosted CLI spec C.0, C.1).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { LAUNCHER_JS, MINIMAL, prime, tempDir } from './helpers.js';

const version = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

test('prime --help / no arguments: usage on stdout, exit 0', () => {
  const cwd = tempDir();
  for (const args of [['--help'], ['-h'], []]) {
    const r = prime(args, { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^Usage: prime \[OPTIONS\] COMMAND \[ARGS\]\.\.\./);
    assert.match(r.stdout, /^ {2}rl {2}/m);
    assert.equal(r.stderr, '');
  }
});

test('prime --version', () => {
  const r = prime(['--version'], { cwd: tempDir() });
  assert.equal(r.code, 0);
  assert.equal(r.stdout, `Prime CLI version: ${version}\n`);
  assert.equal(prime(['-v'], { cwd: tempDir() }).stdout, `Prime CLI version: ${version}\n`);
});

test('the committed launcher runs the built CLI', () => {
  const r = prime(['--version'], { cwd: tempDir(), script: LAUNCHER_JS });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, `Prime CLI version: ${version}\n`);
});

test('unknown command or option: usage error on stderr, exit 2', () => {
  const cwd = tempDir();
  const r = prime(['frobnicate'], { cwd });
  assert.equal(r.code, 2);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /^Usage: prime \[OPTIONS\] COMMAND/);
  assert.match(r.stderr, /Try 'prime -h' for help\./);
  assert.match(r.stderr, /^Error: No such command 'frobnicate'\.$/m);
  const o = prime(['--bogus'], { cwd });
  assert.equal(o.code, 2);
  assert.match(o.stderr, /^Error: No such option: --bogus$/m);
});

test('prime rl --help / no arguments: group help, exit 0', () => {
  const cwd = tempDir();
  for (const args of [['rl', '--help'], ['rl', '-h'], ['rl']]) {
    const r = prime(args, { cwd });
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^Usage: prime rl \[OPTIONS\] CONFIG_PATH \[ARGS\]\.\.\. \| COMMAND \[ARGS\]\.\.\./);
    assert.match(r.stdout, /^ {2}init /m);
    assert.match(r.stdout, /^ {2}run /m);
  }
});

test('prime rl run --help and prime rl init --help', () => {
  const cwd = tempDir();
  const run = prime(['rl', 'run', '--help'], { cwd });
  assert.equal(run.code, 0);
  assert.match(run.stdout, /^Usage: prime rl run \[OPTIONS\] CONFIG_PATH/);
  for (const flag of ['-e, --env-var', '--env-file', '-o, --output', '--dry-run', '--output-dir']) {
    assert.ok(run.stdout.includes(flag), flag);
  }
  // help wins over other (even invalid) arguments
  assert.equal(prime(['rl', 'run', 'missing.toml', '--bogus', '-h'], { cwd }).code, 0);
  const init = prime(['rl', 'init', '--help'], { cwd });
  assert.equal(init.code, 0);
  assert.match(init.stdout, /^Usage: prime rl init \[OPTIONS\] \[OUTPUT_PATH\]/);
});

test('prime rl: a mistyped command is a usage error; service commands say they need the service', () => {
  const cwd = tempDir();
  const typo = prime(['rl', 'lsit'], { cwd });
  assert.equal(typo.code, 2);
  assert.match(typo.stderr, /^Usage: prime rl /);
  assert.match(typo.stderr, /^Error: No such command 'lsit'\.$/m);
  for (const cmd of ['list', 'logs', 'stop', 'delete', 'models']) {
    const r = prime(['rl', cmd], { cwd });
    assert.equal(r.code, 1, cmd);
    assert.match(r.stderr, new RegExp(`^Error: 'prime rl ${cmd}' needs a run service`, 'm'));
    assert.equal(r.stdout, '');
  }
});

test('prime rl run: usage errors exit 2', () => {
  const cwd = tempDir({ 'rl.toml': MINIMAL });
  const cases: Array<[string[], RegExp]> = [
    [['rl', 'run'], /^Error: Missing argument 'CONFIG_PATH'\.$/m],
    [['rl', 'run', 'rl.toml', 'extra'], /^Error: Got unexpected extra argument \(extra\)$/m],
    [['rl', 'run', 'rl.toml', '--bogus'], /^Error: No such option: --bogus$/m],
    [['rl', 'run', 'rl.toml', '-e'], /^Error: Option '-e' requires an argument\.$/m],
    [['rl', 'run', 'rl.toml', '--output-dir', 'out'], /^Error: --output-dir is only used together with --dry-run\.$/m],
    [['rl', 'run', '@'], /^Error: @ must be followed by a config file path\.$/m],
  ];
  for (const [args, message] of cases) {
    const r = prime(args, { cwd });
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /^Usage: prime rl run \[OPTIONS\] CONFIG_PATH$/m);
    assert.match(r.stderr, /^Try 'prime rl run -h' for help\.$/m);
    assert.match(r.stderr, message);
  }
});

test('prime rl run: an invalid output format is a handled error (exit 1)', () => {
  const r = prime(['rl', 'run', 'rl.toml', '-o', 'yaml'], { cwd: tempDir({ 'rl.toml': MINIMAL }) });
  assert.equal(r.code, 1);
  assert.equal(r.stderr, "Error: Invalid output format 'yaml'. Supported formats: table, json\n");
});
