// @prime-rl/platform: managed runs (the `prime` CLI; the run service and dashboard come later).
export { main, primeHelp } from './cli/main.js';
export { processIo } from './cli/io.js';
export type { CliIo } from './cli/io.js';
export { buildRunRequest, redactRunRequest } from './runs/request.js';
export type { RedactedRunRequest, RunRequest, RunRequestEnv, RunRequestEvalEnv, RunSecret } from './runs/request.js';
export { rlConfigToml, withoutNulls, writeRlConfig } from './runs/rl-toml.js';
export { runSummary } from './runs/summary.js';
export { renderDefaultTemplate, renderTemplate, templateParts } from './cli/rl/template.js';
export type { TemplatePart } from './cli/rl/template.js';
