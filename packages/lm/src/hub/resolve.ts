// resolveModelPath: a model named either by a local directory or by a hub repo id, as a local directory.
import { stat } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { snapshotDownload, type SnapshotDownloadOptions } from './download.js';
import { expandHome } from './env.js';
import { HubError } from './errors.js';
import { validateRepoId } from './repo.js';

/** The files a model needs to load: config, weights, tokenizer and chat template. */
export const MODEL_FILE_PATTERNS: readonly string[] = [
  '*.json',
  '*.safetensors',
  '*.jinja',
  'tokenizer*',
  '*.txt',
  '*.model',
];

/** Strings that can only mean a filesystem path, never a repo id. */
function looksLikePath(nameOrPath: string): boolean {
  return nameOrPath.startsWith('.') || nameOrPath.startsWith('~') || isAbsolute(nameOrPath);
}

async function statOrUndefined(path: string): Promise<Awaited<ReturnType<typeof stat>> | undefined> {
  try {
    return await stat(path);
  } catch {
    return undefined;
  }
}

/**
 * An existing local directory as an absolute path; otherwise the name as a hub repo id, downloaded (or found
 * in the cache) with the model file patterns unless `allowPatterns` says otherwise, and its snapshot directory.
 */
export async function resolveModelPath(nameOrPath: string, options: SnapshotDownloadOptions = {}): Promise<string> {
  const env = options.env ?? process.env;
  const localPath = expandHome(nameOrPath, env);
  const local = await statOrUndefined(localPath);
  if (local?.isDirectory()) return localPath;
  if (local !== undefined) {
    throw new HubError(
      'invalid-argument',
      `model path '${nameOrPath}' (${localPath}) is a file, not a model directory`,
    );
  }
  if (looksLikePath(nameOrPath)) {
    throw new HubError('invalid-argument', `no such model directory: '${nameOrPath}' (${localPath}) does not exist`);
  }
  try {
    validateRepoId(nameOrPath);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new HubError(
      'invalid-argument',
      `model '${nameOrPath}' is neither an existing directory (${localPath}) nor a hub repo id: ${why}`,
      { repoId: nameOrPath, cause: error },
    );
  }
  return snapshotDownload(nameOrPath, { ...options, allowPatterns: options.allowPatterns ?? MODEL_FILE_PATTERNS });
}
