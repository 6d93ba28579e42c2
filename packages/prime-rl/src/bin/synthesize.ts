// `synthesize` entrypoint.
import { synthesizeSpec } from '../config/index.js';
import { entrypoint } from './entry.js';

entrypoint(synthesizeSpec);
