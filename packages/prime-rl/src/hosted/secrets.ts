// Collecting the secrets of a hosted run (config.md §4.3 step 7, hosted CLI spec C.4 step 2–3).
// Later sources override earlier ones: config env files → --env-file files → -e values.
// Values never appear in messages; only names do.
import { readFileSync, statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { ENV_KEY, parseDotenv, unquote } from './dotenv.js';
import { HostedConfigError } from './errors.js';
import { displayConfigRelative } from './load.js';
import type { HostedConfig } from './schema.js';

export interface SecretSources {
  /** The config path as the user gave it (labels messages). */
  configPath: string;
  /** Absolute directory of the config file. */
  configDir: string;
  /** The config's `env_file` + `env_files` entries, as written (relative to `configDir`). */
  configEnvFiles?: readonly string[];
  /** `--env-file` paths, relative to `cwd`, in order. */
  envFiles?: readonly string[];
  /** `-e` values, in order: `KEY=VALUE`, `KEY` (copied from `env`) or the path of a `.env` file. */
  envVars?: readonly string[];
  /** The CLI's own environment, for bare `-e KEY`. */
  env?: Readonly<Record<string, string | undefined>>;
  cwd?: string;
}

export interface CollectedSecrets {
  /** Name → value, in first-set order. */
  secrets: Map<string, string>;
  warnings: string[];
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function readEnvFile(abs: string, label: string, into: Map<string, string>, warnings: string[]): void {
  let text: string;
  try {
    text = readFileSync(abs, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new HostedConfigError(`Error: Env file not found: ${label}`);
    throw new HostedConfigError(`Error: Cannot read env file ${label}: ${code ?? 'unknown error'}`);
  }
  const parsed = parseDotenv(text, label);
  warnings.push(...parsed.warnings);
  for (const [k, v] of parsed.values) into.set(k, v);
}

const NAME_RULE = 'must start with a letter or underscore and contain only letters, digits and underscores';

/** Gather every secret; throws {@link HostedConfigError} for a missing file, unset variable or bad name. */
export function collectSecrets(src: SecretSources): CollectedSecrets {
  const cwd = src.cwd ?? process.cwd();
  const env = src.env ?? process.env;
  const secrets = new Map<string, string>();
  const warnings: string[] = [];

  for (const entry of src.configEnvFiles ?? []) {
    const abs = isAbsolute(entry) ? entry : resolve(src.configDir, entry);
    readEnvFile(abs, displayConfigRelative(src.configPath, entry), secrets, warnings);
  }
  for (const file of src.envFiles ?? []) {
    readEnvFile(resolve(cwd, file), file, secrets, warnings);
  }
  for (const arg of src.envVars ?? []) {
    const abs = resolve(cwd, arg);
    if (isFile(abs)) {
      readEnvFile(abs, arg, secrets, warnings);
      continue;
    }
    const eq = arg.indexOf('=');
    if (eq >= 0) {
      const key = arg.slice(0, eq).trim();
      if (!ENV_KEY.test(key)) {
        throw new HostedConfigError(`Error: Invalid environment variable name '${key}' in -e: ${NAME_RULE}.`);
      }
      secrets.set(key, unquote(arg.slice(eq + 1)));
      continue;
    }
    if (ENV_KEY.test(arg)) {
      const value = env[arg];
      if (value === undefined) {
        throw new HostedConfigError(
          `Error: Environment variable '${arg}' is not set. Either set it or use ${arg}=VALUE syntax.`,
        );
      }
      secrets.set(arg, value);
      continue;
    }
    if (/[/\\]|^\.|\.env$/.test(arg)) throw new HostedConfigError(`Error: Env file not found: ${arg}`);
    // Not shown: a mistyped argument here is often a pasted secret.
    throw new HostedConfigError(
      'Error: -e expects KEY, KEY=VALUE or the path of an existing .env file; one -e argument is none of these ' +
        '(it is not repeated here in case it is a secret).',
    );
  }
  return { secrets, warnings };
}

/** True when the config turns W&B logging on (a project or an entity is set). */
export function wandbEnabled(config: HostedConfig): boolean {
  return config.wandb !== undefined && (config.wandb.project !== undefined || config.wandb.entity !== undefined);
}

/** W&B logging needs `WANDB_API_KEY` among the secrets (a non-empty value). */
export function checkWandbKey(config: HostedConfig, secrets: ReadonlyMap<string, string>): void {
  if (!wandbEnabled(config)) return;
  const key = secrets.get('WANDB_API_KEY');
  if (key !== undefined && key !== '') return;
  throw new HostedConfigError([
    'Error: WANDB_API_KEY is required when W&B monitoring is configured.',
    'Provide it via:',
    '  - env_files in your config: env_files = ["secrets.env"]',
    '  - CLI flag: --env-file secrets.env',
    '  - CLI flag: -e WANDB_API_KEY=your-key',
    '  - Environment variable: export WANDB_API_KEY=... && prime rl run ... -e WANDB_API_KEY',
  ]);
}
