// Dry-run output re-loads to the identical config; random bad input never crashes; --explain and
// the editor JSON Schema tell the truth.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { ConfigError, editorSchema, meta, resolveConfig, section, toToml, z, type ConfigSpec } from '../src/index.js';
import { demoSpec } from './demo-schema.js';
import { cli, scratch } from './helpers.js';

const reload = (toml: string) => {
  const cwd = scratch({ 'dump.toml': toml });
  return resolveConfig(demoSpec, { argv: ['@', 'dump.toml'], env: {}, cwd }).config;
};

test('dry run writes TOML that re-loads to the same config, and nothing else', async () => {
  const overrides = [
    '--model.max-model-len',
    '4096',
    '--no-file-monitor',
    '--optim.type',
    'muon',
    '--env.0.id',
    'a/b',
    '--env.1.id',
    'c/d',
    '--ckpt',
    '--extra',
    '{"k": [1, 2], "s": "x"}',
  ];
  const r = await cli(demoSpec, ['--dry-run', ...overrides]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.ran, undefined, 'a dry run must not run the program');
  assert.match(r.stdout, /Dry run complete/);
  assert.deepEqual(readdirSync(path.join(r.cwd, 'outputs', 'configs')), ['demo.toml']);
  const text = readFileSync(path.join(r.cwd, 'outputs', 'configs', 'demo.toml'), 'utf8');
  assert.match(text, /file_monitor = "None"/, 'a null whose default is not null is written as "None"');
  assert.doesNotMatch(text, /max_steps/, 'a null whose default is null is omitted');
  const again = reload(text);
  const direct = resolveConfig(demoSpec, { argv: overrides, env: {} }).config;
  assert.deepEqual(again, direct);
});

test('an invalid config writes no dry-run files', async () => {
  const r = await cli(demoSpec, ['--dry-run', '--seed', 'x']);
  assert.equal(r.code, 1);
  assert.equal(existsSync(path.join(r.cwd, 'outputs')), false);
});

// Random valid overrides: the dump of the resolved config re-loads to the identical config.
const overrides = fc.record(
  {
    seed: fc.integer({ min: -1000, max: 1000 }),
    max_steps: fc.option(fc.nat(10_000), { nil: null }),
    lr: fc.double({ min: 0, max: 10, noNaN: true }),
    name: fc.string({ maxLength: 12 }).filter((s) => s !== 'None'),
    tags: fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
    ckpt: fc.option(fc.record({ interval: fc.option(fc.integer({ min: 1, max: 99 }), { nil: null }) }), { nil: null }),
    file_monitor: fc.option(fc.record({ path: fc.string({ maxLength: 8 }).filter((s) => s !== 'None') }), {
      nil: null,
    }),
    optim: fc.oneof(
      fc.record({ type: fc.constant('adamw'), lr: fc.double({ min: 0, max: 1, noNaN: true }) }),
      fc.record({ type: fc.constant('muon'), mu: fc.double({ min: 0, max: 1, noNaN: true }) }),
    ),
    env: fc.array(
      fc.record({
        id: fc.string({ minLength: 1, maxLength: 6 }).filter((s) => s !== 'None'),
        name: fc.option(
          fc.string({ maxLength: 4 }).filter((s) => s !== 'None'),
          { nil: null },
        ),
      }),
      { maxLength: 3 },
    ),
  },
  { requiredKeys: [] },
);

test('property: a dumped config re-loads unchanged', () => {
  fc.assert(
    fc.property(overrides, (raw) => {
      const cwd = scratch({ 'in.json': JSON.stringify(raw) });
      const first = resolveConfig(demoSpec, { argv: ['@', 'in.json'], env: {}, cwd }).config;
      assert.deepEqual(reload(toToml(demoSpec, first)), first);
    }),
    { numRuns: 150 },
  );
});

const token = fc.oneof(
  fc.constantFrom(
    '@',
    '--',
    '--seed',
    '--no-seed',
    '--env.0',
    '--env.9.id',
    '--ckpt',
    '--optim',
    '--optim.type',
    '--tags',
    '--extra',
    '--nested',
    '--model.compile.fullgraph',
    '--no-nested',
    '-h',
    'None',
    '[',
    '{',
    '"',
    '@x.toml',
    '--help=1',
    '--seed=',
    '--=',
    '---x',
  ),
  fc.string({ maxLength: 8 }),
  fc.string({ maxLength: 8 }).map((s) => `--${s}`),
);

test('property: random command lines never crash with anything but a ConfigError', () => {
  fc.assert(
    fc.property(fc.array(token, { maxLength: 8 }), (argv) => {
      try {
        resolveConfig(demoSpec, { argv, env: {}, cwd: scratch() });
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        assert.ok(err.message.length > 0);
      }
    }),
    { numRuns: 400 },
  );
});

test('property: random env values and file contents never crash', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 3 }), (envValue, fileValue) => {
      const cwd = scratch({ 'f.json': JSON.stringify({ nested: fileValue, env: fileValue, optim: fileValue }) });
      try {
        resolveConfig(demoSpec, { argv: ['@', 'f.json'], env: { PRIME_SEED: envValue, PRIME_CKPT: envValue }, cwd });
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
      }
    }),
    { numRuns: 200 },
  );
});

test('--explain names the source of every value', async () => {
  const r = await cli(demoSpec, ['@', 'a.toml', '--seed', '3', '--explain'], {
    files: { 'a.toml': '[nested]\nlr = 0.5' },
    env: { PRIME_NAME: 'from-env' },
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.ran, undefined);
  assert.match(r.stdout, /--seed\s+3\s+← --seed/);
  assert.match(r.stdout, /--nested\.lr\s+0\.5\s+← a\.toml/);
  assert.match(r.stdout, /--name\s+"from-env"\s+← env PRIME_NAME/);
  assert.match(r.stdout, /--nested\.weight-decay\s+0\.01\s+← default/);
});

test('errors name the source of the offending value', () => {
  try {
    resolveConfig(demoSpec, { argv: ['@', 'a.toml'], env: {}, cwd: scratch({ 'a.toml': 'seed = "x"' }) });
    assert.fail('expected an error');
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    assert.match(err.message, /--seed \(from a\.toml\)/);
  }
});

test('the editor schema accepts "None" for nullable fields and an untyped default variant', () => {
  const js = editorSchema(demoSpec.schema) as {
    properties: Record<string, { anyOf?: unknown[]; oneOf?: Array<{ required?: string[] }> }>;
  };
  assert.ok(JSON.stringify(js.properties.max_steps).includes('"const":"None"'));
  const adamw = js.properties.optim!.oneOf!.find((v) => JSON.stringify(v).includes('"const":"adamw"'))!;
  assert.ok(!(adamw.required ?? []).includes('type'));
  const muon = js.properties.optim!.oneOf!.find((v) => JSON.stringify(v).includes('"const":"muon"'))!;
  assert.ok((muon.required ?? []).includes('type'));
});

test('relativeToFile paths resolve against the file that sets them; unsupported values are rejected', () => {
  const spec: ConfigSpec = {
    name: 'P',
    prog: 'p',
    schema: z.strictObject({
      files: meta(z.array(z.string()).default([]), { relativeToFile: true }),
      data: section({ path: meta(z.string().default('x'), { relativeToFile: true }) }),
      tp: meta(z.int().default(1), { unsupported: 'tensor parallelism' }),
    }),
  };
  const cwd = scratch({ 'cfg/a.toml': 'files = ["s.env", "/abs/t.env"]\n[data]\npath = "d.jsonl"' });
  const c = resolveConfig(spec, { argv: ['@', 'cfg/a.toml', '--tp', '1'], env: {}, cwd }).config as {
    files: string[];
    data: { path: string };
  };
  assert.deepEqual(c.files, [path.join(cwd, 'cfg', 's.env'), '/abs/t.env']);
  assert.equal(c.data.path, path.join(cwd, 'cfg', 'd.jsonl'));
  assert.throws(
    () => resolveConfig(spec, { argv: ['--tp', '2'], env: {}, cwd }),
    /--tp \(from --tp\)\n\s+tensor parallelism is not supported yet \(got 2/,
  );
});

test('nullable scalars written as `type: [number, null]` are coerced from CLI strings', () => {
  const spec: ConfigSpec = {
    name: 'N',
    prog: 'n',
    schema: z.strictObject({
      min_reward: z.number().nullable().default(0.1),
      flag: z.boolean().nullable().default(null),
      count: z.int().min(0).nullable().default(null),
    }),
  };
  const c = resolveConfig(spec, { argv: ['--min-reward', '0.5', '--flag', '--count', '3'], env: {} }).config as Record<
    string,
    unknown
  >;
  assert.deepEqual(c, { min_reward: 0.5, flag: true, count: 3 });
  assert.equal(
    (resolveConfig(spec, { argv: ['--min-reward', 'None'], env: {} }).config as Record<string, unknown>).min_reward,
    null,
  );
  const editor = editorSchema(spec.schema) as { properties: Record<string, unknown> };
  assert.ok(JSON.stringify(editor.properties.min_reward).includes('"const":"None"'));
});

test('--explain marks values that a cross-field rule derived', () => {
  const spec: ConfigSpec = {
    name: 'S',
    prog: 's',
    schema: z.strictObject({ shared: z.int().nullable().default(null), sub: section({ steps: z.int().default(1) }) }),
    validators: [
      (cfg: { shared: number | null; sub: { steps: number } }) => {
        if (cfg.shared !== null) cfg.sub.steps = cfg.shared;
      },
    ] as ConfigSpec['validators'],
  };
  const r = resolveConfig(spec, { argv: ['--shared', '5'], env: {} });
  assert.equal((r.config as { sub: { steps: number } }).sub.steps, 5);
  assert.deepEqual(r.sources.get('sub.steps'), { kind: 'validator' });
  assert.deepEqual(r.sources.get('shared'), { kind: 'cli', flag: '--shared' });
});
