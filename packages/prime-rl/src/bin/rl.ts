// `rl` entrypoint.
import { rlSpec } from '../config/index.js';
import { entrypoint } from './entry.js';

entrypoint(rlSpec);
