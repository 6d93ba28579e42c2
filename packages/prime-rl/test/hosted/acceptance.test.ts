// config.md §5.7: the hosted config (`prime rl run`), at the library level. The CLI-level versions of
// these cases live in packages/platform/test.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  checkWandbKey,
  collectSecrets,
  hostedToRl,
  loadHostedConfig,
  parseHostedConfig,
} from '../../src/hosted/index.js';
import { MINIMAL, errorText, tempDir } from './helpers.js';

const MODEL = 'model = "PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT"\n';
const ENV = '[[env]]\nid = "your-username/your-env"\n';

test('§5.7 #114 minimal seed-001 file is accepted with its values, temperature absent', () => {
  const { config, warnings } = parseHostedConfig(MINIMAL, 'rl.toml');
  assert.equal(config.model, 'PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT');
  assert.equal(config.max_steps, 100);
  assert.equal(config.batch_size, 128);
  assert.equal(config.rollouts_per_example, 8);
  assert.equal(config.sampling?.max_tokens, 2048);
  assert.equal(config.sampling?.temperature, undefined);
  assert.deepEqual(config.env, [{ id: 'your-username/your-env' }]);
  assert.deepEqual(warnings, []);
  const rl = hostedToRl(config) as { orchestrator: { sampling: Record<string, unknown> } };
  assert.deepEqual(rl.orchestrator.sampling, { max_tokens: 2048 });
});

test('§5.7 #115 missing model is an error', () => {
  const text = errorText(() => parseHostedConfig(ENV, 'rl.toml'));
  assert.match(text, /^Error: Invalid config in rl\.toml:$/m);
  assert.match(text, /^ {2}• model: Field required$/m);
});

test('§5.7 #116 no [[env]] is an error', () => {
  const text = errorText(() => parseHostedConfig(MODEL, 'rl.toml'));
  assert.equal(text, 'Error: No environments specified. Add [[env]] sections.');
});

test('§5.7 #117 a training env id without owner/ is an error', () => {
  const text = errorText(() => parseHostedConfig(`${MODEL}[[env]]\nid = "reverse-text"\n`, 'rl.toml'));
  assert.equal(text, "Error: Invalid environment format: 'reverse-text'. Expected 'owner/name' format.");
});

test('§5.7 #118 an eval env id without owner/ is an error', () => {
  const text = errorText(() => parseHostedConfig(`${MODEL}${ENV}[[eval.env]]\nid = "evalenv"\n`, 'rl.toml'));
  assert.equal(text, "Error: Invalid eval environment format: 'evalenv'. Expected 'owner/name' format.");
});

test('§5.7 #119 a negative temperature is rejected naming sampling.temperature', () => {
  const text = errorText(() => parseHostedConfig(`${MODEL}[sampling]\ntemperature = -0.5\n${ENV}`, 'rl.toml'));
  assert.match(text, /^ {2}• sampling\.temperature: Input should be greater than or equal to 0 \(got -0\.5\)$/m);
});

test('§5.7 #120 batch_size not a multiple of rollouts_per_example is rejected', () => {
  const text = errorText(() =>
    parseHostedConfig(`${MODEL}batch_size = 10\nrollouts_per_example = 3\n${ENV}`, 'rl.toml'),
  );
  assert.match(text, /^Error: Invalid config in rl\.toml:$/m);
  assert.match(text, /• batch_size: Batch size must be divisible by the number of samples per problem/);
  assert.match(text, /batch_size = 10 is not a multiple of rollouts_per_example = 3/);
});

test('§5.7 #121 model and one env only: defaults 100 / 128 / 8', () => {
  const { config } = parseHostedConfig(`${MODEL}${ENV}`, 'rl.toml');
  assert.equal(config.max_steps, 100);
  assert.equal(config.batch_size, 128);
  assert.equal(config.rollouts_per_example, 8);
});

test('§5.7 #122 env_file is relative to the config file; --env-file overrides its keys', () => {
  const cwd = tempDir({
    'cfg/rl.toml': `${MODEL}env_file = ["secrets.env"]\n${ENV}`,
    'cfg/secrets.env': 'FROM_CONFIG=config\nSHARED=config\n',
    // a same-named file in the CWD must not be picked up
    'secrets.env': 'WRONG=cwd\n',
    'cli.env': 'SHARED=cli\n',
  });
  const loaded = loadHostedConfig('cfg/rl.toml', { cwd });
  assert.deepEqual(loaded.envFiles, ['secrets.env']);
  assert.ok(loaded.warnings.includes(`'env_file' is deprecated, use 'env_files' instead.`));
  const base = { configPath: loaded.path, configDir: loaded.dir, configEnvFiles: loaded.envFiles, cwd, env: {} };
  const fromConfig = collectSecrets(base).secrets;
  assert.deepEqual(Object.fromEntries(fromConfig), { FROM_CONFIG: 'config', SHARED: 'config' });
  const withCli = collectSecrets({ ...base, envFiles: ['cli.env'] }).secrets;
  assert.deepEqual(Object.fromEntries(withCli), { FROM_CONFIG: 'config', SHARED: 'cli' });
});

test('§5.7 #123 [wandb] project without WANDB_API_KEY is an error', () => {
  const { config } = parseHostedConfig(`${MODEL}${ENV}[wandb]\nproject = "p"\n`, 'rl.toml');
  const text = errorText(() => checkWandbKey(config, new Map()));
  assert.match(text, /^Error: WANDB_API_KEY is required when W&B monitoring is configured\.$/m);
  assert.match(text, /-e WANDB_API_KEY=your-key/);
  assert.doesNotThrow(() => checkWandbKey(config, new Map([['WANDB_API_KEY', 'k']])));
  // an empty key does not count
  assert.throws(() => checkWandbKey(config, new Map([['WANDB_API_KEY', '']])));
});

test('§5.7 #124 an unknown top-level key is rejected naming it', () => {
  const text = errorText(() => parseHostedConfig(`${MODEL}foo = 1\n${ENV}`, 'rl.toml'));
  assert.match(text, /^ {2}• foo: Extra inputs are not permitted$/m);
});

test('§5.7 #125 trajectory_strategy = "branching" is accepted and forwarded', () => {
  const { config, warnings } = parseHostedConfig(`${MODEL}trajectory_strategy = "branching"\n${ENV}`, 'rl.toml');
  assert.equal(config.trajectory_strategy, 'branching');
  assert.ok(!warnings.some((w) => w.includes('trajectory_strategy')));
  const rl = hostedToRl(config) as { orchestrator: Record<string, unknown> };
  assert.equal(rl.orchestrator.trajectory_strategy, 'branching');
  const bad = errorText(() => parseHostedConfig(`${MODEL}trajectory_strategy = "tree"\n${ENV}`, 'rl.toml'));
  assert.match(bad, /• trajectory_strategy: Input should be 'interleaved' or 'branching' \(got 'tree'\)/);
});

// ---------------------------------------------------------------------------------------------
// Beyond the numbered cases: the rest of §4.3
// ---------------------------------------------------------------------------------------------

test('missing file and invalid TOML', () => {
  const cwd = tempDir({ 'bad.toml': 'x = [1,\n' });
  assert.equal(
    errorText(() => loadHostedConfig('nope.toml', { cwd })),
    'Error: Config file not found: nope.toml',
  );
  assert.match(
    errorText(() => loadHostedConfig('bad.toml', { cwd })),
    /^Error: Invalid TOML in bad\.toml: /,
  );
});

test('several schema problems are listed together, one bullet each, nested keys dotted', () => {
  const text = errorText(() =>
    parseHostedConfig(
      'max_steps = "ten"\nbatch_size = 1.5\n[sampling]\nmax_tokens = 0\nbogus = true\n[[env]]\nname = "x"\n[wandb]\nteam = "t"\n',
      'cfg/rl.toml',
    ),
  );
  const lines = text.split('\n');
  assert.equal(lines[0], 'Error: Invalid config in cfg/rl.toml:');
  for (const expected of [
    '  • model: Field required',
    "  • max_steps: Input should be a valid integer (got 'ten')",
    '  • batch_size: Input should be a valid integer, got a number with a fractional part (got 1.5)',
    '  • sampling.max_tokens: Input should be greater than or equal to 1 (got 0)',
    '  • sampling.bogus: Extra inputs are not permitted',
    '  • env.0.id: Field required',
    '  • wandb.team: Extra inputs are not permitted',
  ]) {
    assert.ok(lines.includes(expected), `missing line ${JSON.stringify(expected)} in\n${text}`);
  }
  assert.equal(lines.length, 8);
});

test('validation order: schema problems before env checks, env presence before id format', () => {
  // both a schema problem and a bad env id: only the schema report
  const text = errorText(() => parseHostedConfig(`${MODEL}foo = 1\n[[env]]\nid = "bad"\n`, 'rl.toml'));
  assert.match(text, /foo: Extra inputs/);
  assert.doesNotMatch(text, /Invalid environment format/);
  // bad id and bad batch size: the id is reported first (step 5 before step 6)
  const text2 = errorText(() =>
    parseHostedConfig(`${MODEL}batch_size = 10\nrollouts_per_example = 3\n[[env]]\nid = "bad"\n`, 'rl.toml'),
  );
  assert.match(text2, /Invalid environment format: 'bad'/);
  assert.doesNotMatch(text2, /batch_size/);
});

test('all invalid env ids are reported, train before eval', () => {
  const text = errorText(() =>
    parseHostedConfig(
      `${MODEL}[[env]]\nid = "a"\n[[env]]\nid = "o/b"\n[[env]]\nid = "c"\n[[eval.env]]\nid = "d"\n`,
      'rl.toml',
    ),
  );
  assert.deepEqual(text.split('\n'), [
    "Error: Invalid environment format: 'a'. Expected 'owner/name' format.",
    "Error: Invalid environment format: 'c'. Expected 'owner/name' format.",
    "Error: Invalid eval environment format: 'd'. Expected 'owner/name' format.",
  ]);
});

test('hub ids may carry a version; other shapes are rejected', () => {
  assert.doesNotThrow(() => parseHostedConfig(`${MODEL}[[env]]\nid = "owner/name@0.1.2"\n`, 'rl.toml'));
  for (const id of ['owner/', '/name', 'a/b/c', 'owner/na me']) {
    assert.match(
      errorText(() => parseHostedConfig(`${MODEL}[[env]]\nid = "${id}"\n`, 'rl.toml')),
      /Invalid environment format/,
    );
  }
});

test('env_files is canonical; env_file is a deprecated alias whose files load first', () => {
  const cwd = tempDir({
    'rl.toml': `${MODEL}env_file = ["old.env"]\nenv_files = ["new.env"]\n${ENV}`,
    'old.env': 'K=old\nONLY_OLD=1\n',
    'new.env': 'K=new\n',
  });
  const loaded = loadHostedConfig('rl.toml', { cwd });
  assert.deepEqual(loaded.envFiles, ['old.env', 'new.env']);
  assert.equal(loaded.warnings.filter((w) => w.includes('deprecated')).length, 1);
  const { secrets } = collectSecrets({
    configPath: 'rl.toml',
    configDir: loaded.dir,
    configEnvFiles: loaded.envFiles,
    cwd,
    env: {},
  });
  assert.deepEqual(Object.fromEntries(secrets), { K: 'new', ONLY_OLD: '1' });
  // env_files alone: no warning; a single string is accepted as a one-element list
  const plain = parseHostedConfig(`${MODEL}env_files = "a.env"\n${ENV}`, 'rl.toml');
  assert.deepEqual(plain.envFiles, ['a.env']);
  assert.ok(!plain.warnings.some((w) => w.includes('deprecated')));
});

test('secrets: -e wins over files; KEY from the environment; quotes stripped; .env path accepted', () => {
  const cwd = tempDir({
    'rl.toml': `${MODEL}env_files = ["c.env"]\n${ENV}`,
    'c.env': 'A=file\nB=file\n',
    'x.env': 'C=x\n',
  });
  const loaded = loadHostedConfig('rl.toml', { cwd });
  const { secrets } = collectSecrets({
    configPath: 'rl.toml',
    configDir: loaded.dir,
    configEnvFiles: loaded.envFiles,
    envFiles: ['x.env'],
    envVars: ['A=cli', 'B', 'D="quoted value"', 'x.env'],
    env: { B: 'from-env' },
    cwd,
  });
  assert.deepEqual(Object.fromEntries(secrets), { A: 'cli', B: 'from-env', C: 'x', D: 'quoted value' });
});

test('secrets: errors name files and variables, never values', () => {
  const cwd = tempDir({ 'rl.toml': `${MODEL}env_files = ["missing.env"]\n${ENV}` });
  const loaded = loadHostedConfig('rl.toml', { cwd });
  const base = { configPath: 'rl.toml', configDir: loaded.dir, cwd, env: {} };
  assert.equal(
    errorText(() => collectSecrets({ ...base, configEnvFiles: loaded.envFiles })),
    'Error: Env file not found: missing.env',
  );
  assert.equal(
    errorText(() => collectSecrets({ ...base, envFiles: ['nope.env'] })),
    'Error: Env file not found: nope.env',
  );
  assert.equal(
    errorText(() => collectSecrets({ ...base, envVars: ['UNSET_VAR'] })),
    "Error: Environment variable 'UNSET_VAR' is not set. Either set it or use UNSET_VAR=VALUE syntax.",
  );
  const bad = errorText(() => collectSecrets({ ...base, envVars: ['1BAD=hunter2'] }));
  assert.match(bad, /Invalid environment variable name '1BAD'/);
  assert.doesNotMatch(bad, /hunter2/);
  const pasted = errorText(() => collectSecrets({ ...base, envVars: ['sk-live-abcdef'] }));
  assert.doesNotMatch(pasted, /sk-live-abcdef/);
});

test('config env file paths are shown relative to the config path as given', () => {
  const cwd = tempDir({ 'cfg/rl.toml': `${MODEL}env_files = ["s.env"]\n${ENV}` });
  const loaded = loadHostedConfig('cfg/rl.toml', { cwd });
  const text = errorText(() =>
    collectSecrets({ configPath: 'cfg/rl.toml', configDir: loaded.dir, configEnvFiles: loaded.envFiles, cwd, env: {} }),
  );
  assert.equal(text, `Error: Env file not found: ${join('cfg', 's.env')}`);
});

test('cross-field rules: seq_len, buffer ratios and thresholds, duplicate env names', () => {
  const over = errorText(() =>
    parseHostedConfig(`${MODEL}[sampling]\nmax_tokens = 4096\n${ENV}`, 'rl.toml', { seqLen: 4096 }),
  );
  assert.match(over, /sampling\.max_tokens: must be less than the cluster's seq_len \(4096\)/);
  assert.doesNotThrow(() =>
    parseHostedConfig(`${MODEL}[sampling]\nmax_tokens = 4095\n${ENV}`, 'rl.toml', { seqLen: 4096 }),
  );
  const ratios = errorText(() => parseHostedConfig(`${MODEL}${ENV}[buffer]\nenv_ratios = [0.5, 0.5]\n`, 'rl.toml'));
  assert.match(ratios, /buffer\.env_ratios: needs one ratio per \[\[env\]\]/);
  const thresholds = errorText(() =>
    parseHostedConfig(`${MODEL}${ENV}[buffer]\neasy_threshold = 0.2\nhard_threshold = 0.8\n`, 'rl.toml'),
  );
  assert.match(thresholds, /buffer\.easy_threshold: must be greater than buffer\.hard_threshold/);
  const skip = errorText(() =>
    parseHostedConfig(
      `${MODEL}${ENV}[buffer]\nskip_verification = true\nonline_difficulty_filtering = true\n`,
      'rl.toml',
    ),
  );
  assert.match(skip, /buffer\.skip_verification: cannot be true when buffer\.online_difficulty_filtering is set/);
  const dup = errorText(() => parseHostedConfig(`${MODEL}${ENV}${ENV}`, 'rl.toml'));
  assert.match(dup, /env\.1\.name: Duplicate environment name 'your-username\/your-env'/);
  assert.doesNotThrow(() => parseHostedConfig(`${MODEL}${ENV}${ENV}name = "second"\n`, 'rl.toml'));
});

test('warnings: max_async_level below oversampling_factor, missing max_tokens, eval without envs', () => {
  const { warnings } = parseHostedConfig(
    `${MODEL}oversampling_factor = 2.0\nmax_async_level = 1\n[eval]\ninterval = 5\n${ENV}`,
    'rl.toml',
  );
  assert.ok(warnings.some((w) => w.includes('max_async_level (1) should be >= oversampling_factor (2)')));
  assert.ok(warnings.some((w) => w.includes('max_tokens is not set')));
  assert.ok(warnings.some((w) => w.includes('no [[eval.env]]')));
});
