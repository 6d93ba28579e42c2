// `sft` entrypoint.
import { sftSpec } from '../config/index.js';
import { entrypoint } from './entry.js';

entrypoint(sftSpec);
