// `eval` entrypoint.
import { evalSpec } from '../config/index.js';
import { entrypoint } from './entry.js';

entrypoint(evalSpec);
