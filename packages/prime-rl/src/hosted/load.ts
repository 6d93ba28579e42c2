// Reading a hosted `rl.toml`: file → TOML → schema → checks (config.md §4.3 steps 1–6).
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { HostedConfigError, invalidConfig } from './errors.js';
import { formatIssues } from './issues.js';
import { hostedConfigSchema, type HostedConfig } from './schema.js';
import { checkHostedConfig, type HostedCheckOptions } from './validate.js';

export interface ParsedHostedConfig {
  config: HostedConfig;
  /** Warnings to show (without the `Warning: ` prefix); they never change the exit code. */
  warnings: string[];
  /** The config's `.env` files as written: `env_file` entries first, then `env_files`. */
  envFiles: string[];
}

export interface LoadedHostedConfig extends ParsedHostedConfig {
  /** The path as the user gave it (used in messages). */
  path: string;
  /** Absolute directory of the config file: `env_files` entries are relative to it. */
  dir: string;
}

/** Steps 1b–6: parse TOML text and validate it. `path` only labels messages. */
export function parseHostedConfig(text: string, path: string, opts: HostedCheckOptions = {}): ParsedHostedConfig {
  let raw: unknown;
  try {
    raw = parseToml(text);
  } catch (e) {
    const detail = e instanceof Error ? e.message.trim() : String(e);
    throw new HostedConfigError(`Error: Invalid TOML in ${path}: ${detail}`);
  }
  return validateHostedConfig(raw, path, opts);
}

/** Steps 2–6 on an already-parsed table (a TOML document or an equivalent JSON object). */
export function validateHostedConfig(raw: unknown, path: string, opts: HostedCheckOptions = {}): ParsedHostedConfig {
  const parsed = hostedConfigSchema.safeParse(raw, { reportInput: true });
  if (!parsed.success) throw invalidConfig(path, formatIssues(parsed.error.issues));
  const config = parsed.data;
  const warnings: string[] = [];
  if (config.env_file !== undefined) warnings.push(`'env_file' is deprecated, use 'env_files' instead.`);
  warnings.push(...checkHostedConfig(config, path, opts));
  return { config, warnings, envFiles: [...(config.env_file ?? []), ...(config.env_files ?? [])] };
}

/** Step 1: read the file (relative paths against `cwd`), then {@link parseHostedConfig}. */
export function loadHostedConfig(path: string, opts: HostedCheckOptions & { cwd?: string } = {}): LoadedHostedConfig {
  const abs = resolve(opts.cwd ?? process.cwd(), path);
  let text: string;
  try {
    text = readFileSync(abs, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new HostedConfigError(`Error: Config file not found: ${path}`);
    if (code === 'EISDIR') throw new HostedConfigError(`Error: Config path is a directory, not a file: ${path}`);
    throw new HostedConfigError(`Error: Cannot read config file ${path}: ${code ?? String(e)}`);
  }
  return { ...parseHostedConfig(text, path, opts), path, dir: dirname(abs) };
}

/** A config `env_files` entry as shown to the user: relative to the config path as given. */
export function displayConfigRelative(configPath: string, entry: string): string {
  return isAbsolute(entry) ? entry : join(dirname(configPath), entry);
}
