// Every field of every entrypoint has help text, and every entrypoint resolves with no arguments
// (except `rl`, whose trainer/orchestrator sections are required).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolveConfig, treeOf, type ConfigSpec, type Node } from '@prime-rl/config';
import {
  evalSpec,
  inferenceSpec,
  orchestratorSpec,
  rlSpec,
  sftSpec,
  synthesizeSpec,
  trainerSpec,
} from '../../src/config/index.js';
import { scratch } from './helpers.js';

const specs = [
  orchestratorSpec,
  trainerSpec,
  inferenceSpec,
  sftSpec,
  evalSpec,
  synthesizeSpec,
  rlSpec,
] as unknown as ConfigSpec[];

function undocumented(node: Node, path: string, out: string[]): void {
  if (path !== '' && !node.description) out.push(path);
  if (node.kind === 'section') for (const [k, f] of node.fields) undocumented(f, path ? `${path}.${k}` : k, out);
  if (node.kind === 'union') {
    for (const v of node.variants.values()) {
      for (const [k, f] of v.fields) if (k !== node.discriminator) undocumented(f, path ? `${path}.${k}` : k, out);
    }
  }
  if (node.kind === 'list' && node.item.kind === 'section') {
    for (const [k, f] of node.item.fields) undocumented(f, `${path}[*].${k}`, out);
  }
}

for (const spec of specs) {
  test(`${spec.prog}: every field has a description`, () => {
    const missing: string[] = [];
    undocumented(treeOf(spec.schema), '', missing);
    assert.deepEqual(missing, []);
  });
}

for (const spec of specs.filter((s) => s.prog !== 'rl')) {
  test(`${spec.prog}: resolves with no arguments and no warnings`, () => {
    const r = resolveConfig(spec, { argv: [], env: {}, cwd: scratch() });
    assert.deepEqual(r.warnings, []);
  });
}
