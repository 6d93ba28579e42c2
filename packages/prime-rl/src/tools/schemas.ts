// The editor JSON Schemas of every entrypoint config, as committed in packages/prime-rl/schemas/.
// Regenerate with `npm run schemas`; a test checks the committed files are current.
import { editorSchema, type ConfigSpec } from '@prime-rl/config';
import {
  evalSpec,
  inferenceSpec,
  orchestratorSpec,
  rlSpec,
  sftSpec,
  synthesizeSpec,
  trainerSpec,
} from '../config/index.js';
import { hostedConfigSchema } from '../hosted/schema.js';

const SPECS = [
  rlSpec,
  orchestratorSpec,
  trainerSpec,
  inferenceSpec,
  sftSpec,
  evalSpec,
  synthesizeSpec,
] as unknown as ConfigSpec[];

/** File name → content. */
export function schemaFiles(): Map<string, string> {
  const files = new Map<string, string>();
  for (const spec of SPECS) {
    const schema = { ...editorSchema(spec.schema, spec.name), description: spec.description };
    files.set(`${spec.prog}.schema.json`, `${JSON.stringify(schema, null, 2)}\n`);
  }
  const hosted = {
    ...editorSchema(hostedConfigSchema, 'HostedRLConfig'),
    description: 'The flat rl.toml of `prime rl run` (hosted-style managed runs).',
  };
  files.set('hosted-rl.schema.json', `${JSON.stringify(hosted, null, 2)}\n`);
  return files;
}
