// Hosted training (`prime rl run`): the flat `rl.toml`, its validation, secrets and mapping onto `rl`.
export { HostedConfigError, invalidConfig } from './errors.js';
export { dottedLoc, formatIssues, issueLines } from './issues.js';
export {
  TRAJECTORY_STRATEGIES,
  hostedBufferSchema,
  hostedConfigSchema,
  hostedEnvSchema,
  hostedEvalEnvSchema,
  hostedEvalSchema,
  hostedSamplingSchema,
  hostedValSchema,
  hostedWandbSchema,
} from './schema.js';
export type { HostedConfig, HostedEnv, HostedEvalEnv, TrajectoryStrategy } from './schema.js';
export { checkHostedConfig, isHubEnvId } from './validate.js';
export type { HostedCheckOptions } from './validate.js';
export { displayConfigRelative, loadHostedConfig, parseHostedConfig, validateHostedConfig } from './load.js';
export type { LoadedHostedConfig, ParsedHostedConfig } from './load.js';
export { ENV_KEY, parseDotenv, unquote } from './dotenv.js';
export type { DotenvResult } from './dotenv.js';
export { checkWandbKey, collectSecrets, wandbEnabled } from './secrets.js';
export type { CollectedSecrets, SecretSources } from './secrets.js';
export { hostedToRl } from './mapping.js';
export type { RawTable, RlMappingOptions } from './mapping.js';
