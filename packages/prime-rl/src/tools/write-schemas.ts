// `npm run schemas`: write the editor JSON Schemas into packages/prime-rl/schemas/.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { schemaFiles } from './schemas.js';

const dir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'schemas');
mkdirSync(dir, { recursive: true });
for (const [name, content] of schemaFiles()) writeFileSync(path.join(dir, name), content);
process.stdout.write(`wrote ${schemaFiles().size} schemas to ${dir}\n`);
