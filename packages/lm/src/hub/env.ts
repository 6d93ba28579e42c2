// Where the Hugging Face cache lives, which server to ask, and with which token: the same environment
// variables and defaults as huggingface_hub, read at call time from an explicit `env` so callers (and
// tests) never have to mutate process.env.
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** A process environment: `process.env` or a plain object standing in for it. */
export type Environment = Readonly<Record<string, string | undefined>>;

export interface HubEnvironment {
  /** `HF_HOME`: the root of everything huggingface_hub stores locally. */
  readonly home: string;
  /** `HF_HUB_CACHE`: the directory holding `models--org--name` and `datasets--org--name` folders. */
  readonly cacheDir: string;
  /** `HF_ENDPOINT` without a trailing slash. */
  readonly endpoint: string;
  /** `HF_TOKEN`, else the token file (`HF_TOKEN_PATH`, default `$HF_HOME/token`); undefined when neither has one. */
  readonly token: string | undefined;
  /** `HF_HUB_OFFLINE` set to a true value: never touch the network. */
  readonly offline: boolean;
}

export const DEFAULT_ENDPOINT = 'https://huggingface.co';

/** The values huggingface_hub accepts as "true" for boolean variables, compared case-insensitively. */
const TRUE_VALUES = new Set(['1', 'on', 'yes', 'true']);

export function isTrueEnvValue(value: string | undefined): boolean {
  return value !== undefined && TRUE_VALUES.has(value.trim().toLowerCase());
}

/** Unset and empty mean the same thing: an exported-but-empty variable should not become a path like ''. */
function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

/** Expands a leading `~` against the environment's home directory, then makes the path absolute. */
export function expandHome(path: string, env: Environment = process.env): string {
  if (path === '~' || path.startsWith('~/') || path.startsWith('~\\')) {
    const home = nonEmpty(env.HOME) ?? nonEmpty(env.USERPROFILE) ?? homedir();
    return resolve(home, path.slice(2));
  }
  return resolve(path);
}

/** The token file's contents, trimmed; undefined when it is missing, unreadable or blank. */
function readTokenFile(path: string): string | undefined {
  try {
    return nonEmpty(readFileSync(path, 'utf8').trim());
  } catch {
    return undefined;
  }
}

export function readHubEnvironment(env: Environment = process.env): HubEnvironment {
  const xdgCache = nonEmpty(env.XDG_CACHE_HOME) ?? '~/.cache';
  const home = expandHome(nonEmpty(env.HF_HOME) ?? join(xdgCache, 'huggingface'), env);
  // HUGGINGFACE_HUB_CACHE and HUGGING_FACE_HUB_TOKEN are the legacy names huggingface_hub still honours.
  const cacheVariable = nonEmpty(env.HF_HUB_CACHE) ?? nonEmpty(env.HUGGINGFACE_HUB_CACHE);
  const cacheDir = cacheVariable === undefined ? join(home, 'hub') : expandHome(cacheVariable, env);
  const endpoint = (nonEmpty(env.HF_ENDPOINT) ?? DEFAULT_ENDPOINT).trim().replace(/\/+$/, '');
  const tokenPath = expandHome(nonEmpty(env.HF_TOKEN_PATH) ?? join(home, 'token'), env);
  const token =
    nonEmpty(env.HF_TOKEN?.trim()) ?? nonEmpty(env.HUGGING_FACE_HUB_TOKEN?.trim()) ?? readTokenFile(tokenPath);
  return { home, cacheDir, endpoint, token, offline: isTrueEnvValue(env.HF_HUB_OFFLINE) };
}
