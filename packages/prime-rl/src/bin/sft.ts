// `sft` entrypoint.
import { sftSpec } from '../config/index.js';
import { runSft } from '../sft/run.js';
import { entrypoint } from './entry.js';

entrypoint(sftSpec, async (config) => {
  await runSft(config);
  return 0;
});
