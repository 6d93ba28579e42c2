// `inference` entrypoint.
import { inferenceSpec } from '../config/index.js';
import { entrypoint } from './entry.js';

entrypoint(inferenceSpec);
