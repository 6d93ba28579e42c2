// `orchestrator` entrypoint.
import { orchestratorSpec } from '../config/index.js';
import { entrypoint } from './entry.js';

entrypoint(orchestratorSpec);
