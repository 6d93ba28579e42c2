// The acceptance cases of the config spec (§5.1–§5.5) on the demo schema D, numbered as there.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { demoSpec } from './demo-schema.js';
import { cli, errorOf, resolveIn } from './helpers.js';

const R = (argv: string[], files: Record<string, string> = {}, env: Record<string, string> = {}) =>
  resolveIn(demoSpec, argv, files, env).config;
const E = (argv: string[], files: Record<string, string> = {}, env: Record<string, string> = {}) =>
  errorOf(demoSpec, argv, files, env);

// §5.1 Sources, files, precedence
test('§5.1 #1 no arguments gives all defaults', () => {
  const c = R([]);
  assert.equal(c.file_monitor?.path, 'metrics.jsonl');
  assert.equal(c.ckpt, null);
  assert.equal(c.optim.type, 'adamw');
  assert.equal(c.seed, 42);
});
test('§5.1 #2 a root file sets a field', () => {
  assert.equal(R(['@', 'a.toml'], { 'a.toml': 'seed = 7' }).seed, 7);
});
test('§5.1 #3 a file section keeps the other defaults of that section', () => {
  const c = R(['@', 'a.toml'], { 'a.toml': '[nested]\nlr = 3e-4' });
  assert.deepEqual(c.nested, { lr: 3e-4, weight_decay: 0.01, label: 'default' });
});
const baseOver = { 'base.toml': '[nested]\nlr=3e-4\nweight_decay=0.1', 'over.toml': '[nested]\nlr=1e-3' };
test('§5.1 #4 an overlay preserves fields it does not set', () => {
  const c = R(['@', 'base.toml', '@', 'over.toml'], baseOver);
  assert.equal(c.nested.lr, 1e-3);
  assert.equal(c.nested.weight_decay, 0.1);
});
test('§5.1 #5 files merge left to right', () => {
  assert.equal(R(['@', 'over.toml', '@', 'base.toml'], baseOver).nested.lr, 3e-4);
});
test('§5.1 #6 the CLI beats files', () => {
  assert.equal(R(['@', 'base.toml', '--seed', '99'], { 'base.toml': 'seed=1' }).seed, 99);
});
test('§5.1 #7 lists are replaced wholesale', () => {
  const c = R(['@', 'base.toml', '@', 'over.toml'], {
    'base.toml': '[[env]]\nid="a/x"\n[[env]]\nid="b/y"',
    'over.toml': '[[env]]\nid="c/z"',
  });
  assert.deepEqual(
    c.env.map((e) => e.id),
    ['c/z'],
  );
});
test('§5.1 #8 free-form tables deep-merge', () => {
  const c = R(['@', 'base.toml', '@', 'over.toml'], { 'base.toml': '[extra]\nk1="v1"', 'over.toml': '[extra]\nk2=2' });
  assert.deepEqual(c.extra, { k1: 'v1', k2: 2 });
});
const nToml = { 'n.toml': 'lr = 0.5\nweight_decay = 0.2' };
test('§5.1 #9 a section file fills its section only', () => {
  const c = R(['--nested', '@', 'n.toml'], nToml);
  assert.equal(c.nested.lr, 0.5);
  assert.equal(c.nested.weight_decay, 0.2);
  assert.equal(c.lr, 1e-4);
});
test('§5.1 #10 a section file enables an optional section', () => {
  const c = R(['--model.compile', '@', 'c.toml'], { 'c.toml': 'fullgraph = true' });
  assert.deepEqual(c.model.compile, { fullgraph: true, dynamic: true });
});
test('§5.1 #11 a flag beats a section file', () => {
  const c = R(['--nested', '@', 'n.toml', '--nested.lr', '0.9'], nToml);
  assert.equal(c.nested.lr, 0.9);
  assert.equal(c.nested.weight_decay, 0.2);
});
test('§5.1 #12 section files beat root files regardless of order', () => {
  const c = R(['--nested', '@', 'n.toml', '@', 'root.toml'], {
    'root.toml': '[nested]\nlr=0.1\nlabel="root"',
    'n.toml': 'lr=0.2',
  });
  assert.equal(c.nested.lr, 0.2);
  assert.equal(c.nested.label, 'root');
});
test('§5.1 #13 the glued section form --nested @n.toml', () => {
  const c = R(['--nested', '@n.toml'], nToml);
  assert.equal(c.nested.lr, 0.5);
  assert.equal(c.nested.weight_decay, 0.2);
});
test('§5.1 #14 a glued root file is an error that says how to write it', async () => {
  const r = await cli(demoSpec, ['@a.toml'], { files: { 'a.toml': 'seed = 1' } });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /@a\.toml/);
  assert.match(r.stderr, /@ a\.toml/);
});
test('§5.1 #15 @ as the last argument', () => {
  assert.match(E(['@']), /@ must be followed by a config file path/);
});
test('§5.1 #16 a missing file', () => {
  assert.match(E(['@', 'missing.toml']), /Config file not found: missing\.toml/);
});
test('§5.1 #17 invalid TOML', () => {
  assert.match(E(['@', 'bad.toml'], { 'bad.toml': 'x = [1,' }), /^Invalid TOML in bad\.toml/m);
});
test('§5.1 #18 an unsupported file type', () => {
  assert.match(E(['@', 'conf.txt'], { 'conf.txt': 'seed = 1' }), /Unsupported file type: conf\.txt/);
});
test('§5.1 #19 JSON files may use null', () => {
  const c = R(['@', 'a.json'], { 'a.json': '{"seed": 5, "max_steps": null}' });
  assert.equal(c.seed, 5);
  assert.equal(c.max_steps, null);
});
test('§5.1 #19b YAML files', () => {
  assert.equal(R(['@', 'a.yaml'], { 'a.yaml': 'seed: 6\nnested:\n  lr: 0.5\n' }).nested.lr, 0.5);
});
test('§5.1 #20 an environment variable sets a field', () => {
  assert.equal(R([], {}, { PRIME_SEED: '7' }).seed, 7);
});
test('§5.1 #21 double underscore nests', () => {
  const c = R([], {}, { PRIME_NESTED__LR: '3e-4' });
  assert.equal(c.nested.lr, 3e-4);
  assert.equal(c.nested.weight_decay, 0.01);
});
test('§5.1 #22 files beat the environment', () => {
  assert.equal(R(['@', 'a.toml'], { 'a.toml': 'seed=1' }, { PRIME_SEED: '7' }).seed, 1);
});
test('§5.1 #23 the CLI beats the environment', () => {
  assert.equal(R(['--seed', '99'], {}, { PRIME_SEED: '7' }).seed, 99);
});
test('§5.1 #24 env values merge below files instead of replacing them', () => {
  const c = R(['@', 'a.toml'], { 'a.toml': '[model]\nmax_model_len=4096' }, { PRIME_MODEL__NAME: 'ENV' });
  assert.equal(c.model.name, 'ENV');
  assert.equal(c.model.max_model_len, 4096);
});
test('§5.1 #25 unrelated PRIME_ variables are ignored', () => {
  assert.equal(R([], {}, { PRIME_API_KEY: 'secret', PRIME_LOG_LEVEL: 'debug' }).seed, 42);
});
test('§5.1 #26 lists and sections from the environment are JSON', () => {
  assert.deepEqual(R([], {}, { PRIME_GPU_IDS: '[1,2]' }).gpu_ids, [1, 2]);
  assert.deepEqual(R([], {}, { PRIME_CKPT: '{}' }).ckpt, { interval: null, keep_last: null });
});
test('§5.1 #27 a bad env value names the variable', () => {
  const msg = E([], {}, { PRIME_LR: 'abc' });
  assert.match(msg, /PRIME_LR/);
  assert.match(msg, /valid number/);
});
test('§5.1 env matching is case-insensitive on field names', () => {
  assert.equal(R([], {}, { PRIME_Nested__Lr: '0.25' }).nested.lr, 0.25);
});

// §5.2 Names, scalars, booleans, None
test('§5.2 #28 --flag value and --flag=value', () => {
  assert.equal(R(['--max-steps', '5']).max_steps, 5);
  assert.equal(R(['--max-steps=5']).max_steps, 5);
});
test('§5.2 #29 snake_case flags are accepted', () => {
  assert.equal(R(['--max_steps', '5']).max_steps, 5);
});
test('§5.2 #30 kebab-case nested flags', () => {
  assert.equal(R(['--nested.weight-decay', '0.5']).nested.weight_decay, 0.5);
});
test('§5.2 #31 a negative number is a value, and ranges are checked', () => {
  const msg = E(['--lr', '-1e-3']);
  assert.match(msg, /--lr/);
  assert.match(msg, /greater than or equal to 0/);
  assert.match(msg, /\(got '-1e-3'\)/);
});
test('§5.2 #32 a non-integer string', () => {
  const msg = E(['--seed', 'nope']);
  assert.match(msg, /--seed/);
  assert.match(msg, /valid integer/);
  assert.match(msg, /nope/);
});
test('§5.2 #33 1.5 is not an integer, 5.0 is', () => {
  assert.match(E(['--seed', '1.5']), /--seed[^\n]*\n\s+Input should be a valid integer/);
  assert.equal(R(['--seed', '5.0']).seed, 5);
});
test('§5.2 #34 --flag and --no-flag', () => {
  assert.equal(R(['--enabled']).enabled, true);
  assert.equal(R(['--no-clean']).clean, false);
});
test('§5.2 #35 explicit boolean literals', () => {
  assert.equal(R(['--enabled', 'false']).enabled, false);
  assert.equal(R(['--enabled', '1']).enabled, true);
  assert.equal(R(['--enabled=yes']).enabled, true);
});
test('§5.2 #36 a non-literal after a boolean flag is a stray argument', () => {
  assert.match(E(['--enabled', 'maybe']), /Unrecognized arguments: maybe/);
});
test('§5.2 #37 lax booleans in files', () => {
  assert.equal(R(['@', 'a.toml'], { 'a.toml': 'enabled = "true"' }).enabled, true);
  assert.match(
    E(['@', 'a.toml'], { 'a.toml': 'enabled = 2' }),
    /--enabled \(from a\.toml\)\n\s+Input should be a valid boolean/,
  );
});
test('§5.2 #38 None on the CLI and in TOML', () => {
  assert.equal(R(['--max-steps', 'None']).max_steps, null);
  assert.equal(R(['@', 'a.toml'], { 'a.toml': 'max_steps = "None"' }).max_steps, null);
});
test('§5.2 #39 None on the CLI overrides a file value', () => {
  const c = R(['@', 'a.toml', '--model.max-model-len', 'None'], { 'a.toml': '[model]\nmax_model_len = 4096' });
  assert.equal(c.model.max_model_len, null);
});
test('§5.2 #40 a non-optional string cannot be None', () => {
  assert.match(E(['--name', 'None']), /--name[^\n]*\n\s+Input should be a valid string/);
});
test('§5.2 #41 None inside dicts and lists stays a string', () => {
  assert.deepEqual(R(['--extra', '{"k": "None"}']).extra, { k: 'None' });
  assert.deepEqual(R(['--tags', 'None', 'x']).tags, ['None', 'x']);
});
test('§5.2 #42 a scalar flag at the end needs a value', () => {
  assert.match(E(['--seed']), /--seed requires a value/);
});
test('§5.2 #43 a section used as a leaf', () => {
  const msg = E(['--nested', '5']);
  assert.match(msg, /--nested is a config group, not a leaf field/);
  assert.match(msg, /--nested\.label/);
});
test('§5.2 #44 a stray positional token', () => {
  assert.match(E(['foo', '--seed', '1']), /Unrecognized arguments: foo/);
});

// §5.3 Lists and dicts
test('§5.3 #45 space-separated list', () => {
  assert.deepEqual(R(['--tags', 'a', 'b', 'c']).tags, ['a', 'b', 'c']);
});
test('§5.3 #46 JSON list', () => {
  assert.deepEqual(R(['--tags', '["a","b"]']).tags, ['a', 'b']);
});
test('§5.3 #47 comma-separated list', () => {
  assert.deepEqual(R(['--gpu-ids', '0,1,2']).gpu_ids, [0, 1, 2]);
  assert.deepEqual(R(['--gpu-ids=0,1']).gpu_ids, [0, 1]);
});
test('§5.3 #48 a bare list flag is the empty list', () => {
  const c = R(['--tags', '--seed', '3']);
  assert.deepEqual(c.tags, []);
  assert.equal(c.seed, 3);
});
test('§5.3 #49 a bad list item names its index', () => {
  const msg = E(['--gpu-ids', '0', 'x']);
  assert.match(msg, /--gpu-ids\[1\]/);
  assert.match(msg, /valid integer/);
});
test('§5.3 #50 the CLI replaces a list', () => {
  assert.deepEqual(R(['@', 'a.toml', '--tags', 'c'], { 'a.toml': 'tags=["a","b"]' }).tags, ['c']);
});
test('§5.3 #51 an indexed flag edits element 0 of the default list', () => {
  assert.deepEqual(R(['--env.0.id', 'owner/x']).env, [{ id: 'owner/x', name: null, args: {} }]);
});
test('§5.3 #52 indexed flags append in order', () => {
  assert.deepEqual(
    R(['--env.0.id', 'a/x', '--env.1.id', 'b/y']).env.map((e) => e.id),
    ['a/x', 'b/y'],
  );
});
test('§5.3 #53 an indexed flag edits one element of a file list', () => {
  const c = R(['@', 'a.toml', '--env.1.name', 'second'], {
    'a.toml': '[[env]]\nid="a/x"\nargs={k=1}\n[[env]]\nid="b/y"',
  });
  assert.deepEqual(c.env[0], { id: 'a/x', name: null, args: { k: 1 } });
  assert.deepEqual(c.env[1], { id: 'b/y', name: 'second', args: {} });
});
test('§5.3 #54 an index past the end', () => {
  const msg = E(['--env.2.id', 'z/z']);
  assert.match(msg, /--env/);
  assert.match(msg, /index 2 out of range/);
});
test('§5.3 #55 unknown keys inside list items', () => {
  const msg = E(['@', 'a.toml'], { 'a.toml': '[[env]]\nid="a/x"\nbogus=1' });
  assert.match(msg, /--env\[0\]\.bogus/);
  assert.match(msg, /not permitted/);
});
test('§5.3 #56 a JSON dict', () => {
  assert.deepEqual(R(['--extra', '{"a": 1, "b": true}']).extra, { a: 1, b: true });
});
test('§5.3 #57 a CLI dict merges into the file dict', () => {
  assert.deepEqual(R(['@', 'a.toml', '--extra', '{"new": 2}'], { 'a.toml': '[extra]\nold="v"' }).extra, {
    old: 'v',
    new: 2,
  });
});
test('§5.3 #58 invalid JSON names the flag, without a stack trace', async () => {
  const r = await cli(demoSpec, ['--extra', '{bad json']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /--extra/);
  assert.doesNotMatch(r.stderr, /\n\s+at /);
});

// §5.4 Optional sections and unions
test('§5.4 #59 a bare flag enables an optional section with defaults', () => {
  assert.deepEqual(R(['--model.compile']).model.compile, { fullgraph: false, dynamic: true });
});
test('§5.4 #60 a bare nested boolean enables and sets', () => {
  assert.deepEqual(R(['--model.compile.fullgraph']).model.compile, { fullgraph: true, dynamic: true });
});
test('§5.4 #61 a nested value enables', () => {
  assert.deepEqual(R(['--model.compile.fullgraph', 'false']).model.compile, { fullgraph: false, dynamic: true });
});
test('§5.4 #62 an empty TOML header enables with defaults', () => {
  assert.deepEqual(R(['@', 'a.toml'], { 'a.toml': '[ckpt]' }).ckpt, { interval: null, keep_last: null });
});
test('§5.4 #63 a nested flag enables and sets', () => {
  assert.equal(R(['--ckpt.interval', '5']).ckpt?.interval, 5);
});
test('§5.4 #64 a bare flag keeps file values', () => {
  assert.equal(R(['@', 'a.toml', '--ckpt'], { 'a.toml': '[ckpt]\ninterval=5' }).ckpt?.interval, 5);
});
test('§5.4 #65 disabling an optional section that is enabled by default', () => {
  assert.equal(R(['--no-file-monitor']).file_monitor, null);
  assert.equal(R(['--file-monitor', 'None']).file_monitor, null);
  assert.equal(R(['@', 'a.toml'], { 'a.toml': 'file_monitor="None"' }).file_monitor, null);
});
test('§5.4 #66 None replaces a table and a later bare flag re-enables with defaults', () => {
  const files = { 'a.toml': '[ckpt]\ninterval=5', 'b.toml': 'ckpt="None"' };
  assert.equal(R(['@', 'a.toml', '@', 'b.toml'], files).ckpt, null);
  assert.deepEqual(R(['@', 'a.toml', '@', 'b.toml', '--ckpt'], files).ckpt, { interval: null, keep_last: null });
});
test('§5.4 #67 an enabled section is still validated', () => {
  const msg = E(['--ckpt.interval', '0']);
  assert.match(msg, /--ckpt\.interval/);
  assert.match(msg, /greater than or equal to 1/);
});
test('§5.4 #68 an optional section takes no value', () => {
  assert.match(E(['--ckpt', '5']), /Unrecognized arguments: 5/);
});
test('§5.4 #69 omitting type keeps the default variant', () => {
  assert.deepEqual(R(['@', 'a.toml'], { 'a.toml': '[optim]\nlr=1e-5' }).optim, {
    type: 'adamw',
    lr: 1e-5,
    betas1: 0.9,
  });
});
test('§5.4 #70 switching variant on the CLI', () => {
  assert.deepEqual(R(['--optim.type', 'muon', '--optim.lr', '2e-3']).optim, { type: 'muon', lr: 2e-3, mu: 0.95 });
});
test('§5.4 #71 a variant chosen in a lower layer is kept', () => {
  const c = R(['@', 'a.toml', '@', 'b.toml'], { 'a.toml': '[optim]\ntype="muon"', 'b.toml': '[optim]\nlr=3e-4' });
  assert.equal(c.optim.type, 'muon');
  assert.equal(c.optim.lr, 3e-4);
});
test('§5.4 #72 switching variants keeps foreign keys, which then fail', () => {
  const msg = E(['@', 'a.toml', '--scheduler.type', 'constant'], {
    'a.toml': '[scheduler]\ntype="cosine"\nwarmup_steps=5',
  });
  assert.match(msg, /scheduler/);
  assert.match(msg, /warmup-steps/);
});
test('§5.4 #73 an unknown tag', () => {
  const msg = E(['--optim.type', 'sgd']);
  assert.match(msg, /does not match any of the expected tags/);
  assert.match(msg, /'adamw', 'muon'/);
});
test('§5.4 #74 an empty union table is the default variant', () => {
  assert.deepEqual(R(['@', 'a.toml'], { 'a.toml': '[optim]' }).optim, { type: 'adamw', lr: 1e-6, betas1: 0.9 });
});

// §5.5 Unknown keys, help, errors, deprecation
test('§5.5 #75 an unknown flag with a suggestion', async () => {
  const r = await cli(demoSpec, ['--seedz', '5']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /--seedz/);
  assert.match(r.stderr, /not permitted/);
  assert.match(r.stderr, /did you mean --seed\?/i);
});
test('§5.5 #76 an unknown key in a file section', () => {
  assert.match(E(['@', 'a.toml'], { 'a.toml': '[nested]\nlrr=1' }), /--nested\.lrr/);
});
test('§5.5 #77 --help lists every field', async () => {
  const r = await cli(demoSpec, ['--help']);
  assert.equal(r.code, 0);
  assert.equal(r.ran, undefined);
  const h = r.stdout;
  assert.ok(h.startsWith('usage: '));
  for (const s of [
    '[@ FILE]',
    '-h, --help',
    '--seed INT',
    'default: 42',
    '--nested.weight-decay FLOAT',
    '--optim.mu',
    '--tags [STR [...]]',
    'default: []',
  ]) {
    assert.ok(h.includes(s), `help should contain ${s}`);
  }
  assert.match(h, /model\.compile \(optional, default: None\)/);
  assert.match(h, /file_monitor \(optional, enabled by default\)/);
  assert.match(h, /optim variant: adamw/);
  assert.match(h, /optim variant: muon/);
});
test('§5.5 #78 help wins over value errors but not over file errors', async () => {
  const a = await cli(demoSpec, ['--seed', 'nope', '--help']);
  assert.equal(a.code, 0);
  assert.match(a.stdout, /^usage: /);
  const b = await cli(demoSpec, ['@', 'missing.toml', '--help']);
  assert.equal(b.code, 1);
  assert.match(b.stderr, /Config file not found: missing\.toml/);
});
test('§5.5 #79 errors go to stderr, exit 1, no colour with NO_COLOR', async () => {
  const r = await cli(demoSpec, ['--seed', 'x'], { env: { NO_COLOR: '1', FORCE_COLOR: '1' } });
  assert.equal(r.code, 1);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /--seed/);
  assert.doesNotMatch(r.stderr, /\x1b\[/);
  const colored = await cli(demoSpec, ['--seed', 'x'], { env: { FORCE_COLOR: '1' } });
  assert.match(colored.stderr, /\x1b\[/);
});
test('§5.5 #80 all problems are reported at once', () => {
  const msg = E(['--seed', 'x', '--lr', 'y']);
  assert.match(msg, /2 validation errors/);
  assert.match(msg, /--seed/);
  assert.match(msg, /--lr/);
});
test('§5.5 #81 a renamed field is translated with a warning; the new name wins', async () => {
  const r = await cli(demoSpec, ['@', 'a.toml'], { files: { 'a.toml': '[sampling]\nmax_tokens = 64' } });
  assert.equal(r.code, 0);
  assert.equal((r.ran as { sampling: { max_completion_tokens: number } }).sampling.max_completion_tokens, 64);
  assert.equal(r.stderr.match(/'max_tokens' is deprecated/g)?.length, 1);
  assert.match(r.stderr, /max_completion_tokens/);
  const both = R(['@', 'a.toml'], { 'a.toml': '[sampling]\nmax_tokens = 64\nmax_completion_tokens = 32' });
  assert.equal(both.sampling.max_completion_tokens, 32);
  assert.equal(R(['--sampling.max-tokens', '7']).sampling.max_completion_tokens, 7);
  assert.equal(R([], {}, { PRIME_SAMPLING__MAX_TOKENS: '9' }).sampling.max_completion_tokens, 9);
});
