// The `prime rl init` template validates against the committed editor schema of the hosted rl.toml.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse } from 'smol-toml';
import { renderDefaultTemplate } from '../src/cli/rl/template.js';

const require = createRequire(import.meta.url);

test('the init template is valid under hosted-rl.schema.json, and a typo is not', () => {
  const file = require.resolve('prime-rl/schemas/hosted-rl.schema.json');
  const validate = new Ajv2020({ strict: false, allErrors: true }).compile(JSON.parse(readFileSync(file, 'utf8')));
  assert.ok(validate(parse(renderDefaultTemplate())), JSON.stringify(validate.errors));
  assert.equal(validate(parse('model = "m"\nmax_step = 3\n[[env]]\nid = "a/b"\n')), false);
});
