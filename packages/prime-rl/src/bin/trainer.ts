// `trainer` entrypoint.
import { trainerSpec } from '../config/index.js';
import { entrypoint } from './entry.js';

entrypoint(trainerSpec);
