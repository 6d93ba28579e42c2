// The committed editor schemas match the config schemas.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { schemaFiles } from '../src/tools/schemas.js';

const dir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'schemas');

test('packages/prime-rl/schemas/*.schema.json are current (run `npm run schemas` after changing a config)', () => {
  for (const [name, content] of schemaFiles()) {
    const committed = readFileSync(path.join(dir, name), 'utf8');
    assert.equal(committed, content, `${name} is stale: run npm run schemas`);
  }
});

test('the editor schema validates the shipped example and catches a typo', async () => {
  const { Ajv2020 } = await import('ajv/dist/2020.js');
  const { parse } = await import('smol-toml');
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  const validate = ajv.compile(JSON.parse(schemaFiles().get('rl.schema.json')!) as object);
  const example = path.resolve(dir, '..', '..', '..', 'examples', 'reverse-text', 'rl.toml');
  const data = parse(readFileSync(example, 'utf8'));
  assert.ok(validate(data), JSON.stringify(validate.errors));
  const typo = parse('[orchestrator]\nbatch_sise = 4\n[trainer]\n[model]\nmax_model_len = "None"\n');
  assert.equal(validate(typo), false);
  assert.ok(JSON.stringify(validate.errors).includes('batch_sise'));
  assert.ok(
    validate(parse('[orchestrator]\n[trainer]\n[trainer.optim]\nlr = 1e-5\n')),
    'omitting type keeps the default variant',
  );
  assert.ok(validate(parse('max_steps = "None"\n[orchestrator]\n[trainer]\n')), '"None" is accepted where null is');
});

test('every example config validates against the schema its #:schema line names', async () => {
  const { Ajv2020 } = await import('ajv/dist/2020.js');
  const { parse } = await import('smol-toml');
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  const examples = path.resolve(dir, '..', '..', '..', 'examples', 'reverse-text');
  const checked: string[] = [];
  for (const name of readdirSync(examples).filter((f) => f.endsWith('.toml'))) {
    const text = readFileSync(path.join(examples, name), 'utf8');
    const schema = /^#:schema .*\/([a-z-]+\.schema\.json)$/m.exec(text)?.[1];
    assert.ok(schema, `${name} names its schema`);
    const validate = ajv.compile(JSON.parse(schemaFiles().get(schema)!) as object);
    assert.ok(validate(parse(text)), `${name}: ${JSON.stringify(validate.errors)}`);
    checked.push(name);
  }
  assert.ok(checked.includes('infer.toml') && checked.includes('sft.toml'), checked.join());
});
