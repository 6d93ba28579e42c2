// `inference` entrypoint: an OpenAI-compatible server on our own engine.
import { inferenceSpec } from '../config/index.js';
import { runInference } from '../inference/run.js';
import { entrypoint } from './entry.js';

entrypoint(inferenceSpec, (config) => runInference(config));
