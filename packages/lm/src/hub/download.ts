// snapshotDownload: a whole repository revision (or the files matching patterns) into the hub cache,
// reusing whatever the cache already holds, and answering from the cache alone when offline.
import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { DownloadProgress } from './blob-download.js';
import { RepoCache } from './cache.js';
import { type Environment, readHubEnvironment } from './env.js';
import { HubError } from './errors.js';
import { fetchRepoFile } from './file-download.js';
import { filterPaths } from './glob.js';
import { type HubRequestContext, isTransientFailure } from './http.js';
import { describeRepo, type RepoType, validateRelativePath, validateRepoId } from './repo.js';
import { fetchRevisionInfo } from './revision-info.js';

export interface SnapshotDownloadOptions {
  /** Branch, tag or commit sha; default `main`. */
  readonly revision?: string;
  /** Default `model`. */
  readonly repoType?: RepoType;
  /** fnmatch patterns; only files matching at least one are downloaded (default: all). */
  readonly allowPatterns?: readonly string[];
  /** fnmatch patterns; files matching any are skipped. */
  readonly ignorePatterns?: readonly string[];
  /** The hub cache directory; default `HF_HUB_CACHE`. */
  readonly cacheDir?: string;
  /** A token to send; default `HF_TOKEN` or the saved token file; `false` (or '') sends none. */
  readonly token?: string | false;
  /** The hub's address; default `HF_ENDPOINT`. */
  readonly endpoint?: string;
  /** Answer from the cache only; default `HF_HUB_OFFLINE`. */
  readonly offline?: boolean;
  /** Where the HF_* variables are read from; default `process.env`. */
  readonly env?: Environment;
  /** Called as each file's bytes arrive. */
  readonly onProgress?: (progress: DownloadProgress) => void;
}

/** Files downloaded at once, as huggingface_hub's snapshot_download does by default. */
const PARALLEL_DOWNLOADS = 8;

/** The settings one call runs with: options first, then the environment. */
interface ResolvedSettings {
  readonly repoType: RepoType;
  readonly revision: string;
  readonly cacheDir: string;
  readonly endpoint: string;
  readonly token: string | undefined;
  readonly offline: boolean;
  /** How offline mode was asked for, to name it in the error. */
  readonly offlineSource: string;
}

function resolveSettings(options: SnapshotDownloadOptions): ResolvedSettings {
  const hub = readHubEnvironment(options.env ?? process.env);
  return {
    repoType: options.repoType ?? 'model',
    revision: options.revision ?? 'main',
    cacheDir: options.cacheDir === undefined ? hub.cacheDir : resolve(options.cacheDir),
    endpoint: (options.endpoint ?? hub.endpoint).replace(/\/+$/, ''),
    token: options.token === false || options.token === '' ? undefined : (options.token ?? hub.token),
    offline: options.offline ?? hub.offline,
    offlineSource: options.offline === undefined ? 'HF_HUB_OFFLINE=1' : 'the offline option',
  };
}

/** Runs `work` on every item, at most `limit` at a time; after a failure starts no more, and rethrows the first. */
async function forEachLimited<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (failure === undefined && next < items.length) {
      const item = items[next++] as T;
      try {
        await work(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure !== undefined) throw failure.error;
}

/**
 * Downloads a repository revision into the hub cache (huggingface_hub's layout, shared with its tools) and
 * returns the snapshot directory, `<cache>/models--org--name/snapshots/<sha>`. Files the snapshot already
 * has are not requested again and blobs the cache already has are not downloaded again. Offline, the
 * revision is resolved through `refs/` without any request; when the hub cannot be reached (or fails with
 * a server error) a cached snapshot of the revision is returned instead, as huggingface_hub does.
 */
export async function snapshotDownload(repoId: string, options: SnapshotDownloadOptions = {}): Promise<string> {
  validateRepoId(repoId);
  const settings = resolveSettings(options);
  const { repoType, revision } = settings;
  validateRelativePath(revision, 'revision', repoId);
  const repo = new RepoCache(settings.cacheDir, repoId, repoType);

  if (settings.offline) {
    const cached = await repo.cachedSnapshot(revision);
    if (cached !== undefined) return cached;
    throw new HubError(
      'offline-miss',
      `${describeRepo(repoId, repoType)} (revision ${revision}) is not in the cache at ${repo.root}, and ${settings.offlineSource} forbids downloading`,
      { repoId, revision },
    );
  }

  const context: HubRequestContext = {
    repoId,
    repoType,
    revision,
    endpoint: settings.endpoint,
    token: settings.token,
  };
  let info;
  try {
    info = await fetchRevisionInfo(context);
  } catch (error) {
    if (isTransientFailure(error)) {
      const cached = await repo.cachedSnapshot(revision);
      if (cached !== undefined) return cached;
    }
    throw error;
  }

  const files = filterPaths(info.files, options.allowPatterns, options.ignorePatterns);
  for (const file of files) validateRelativePath(file, 'file', repoId);
  await forEachLimited(files, PARALLEL_DOWNLOADS, (file) =>
    fetchRepoFile({ repo, commitSha: info.sha, context: { ...context, file }, onProgress: options.onProgress }),
  );
  const snapshotDir = repo.snapshotDir(info.sha);
  // Made even when no file matched, so the returned directory always exists.
  await mkdir(snapshotDir, { recursive: true });
  // Written last: a ref only ever points at a snapshot whose selected files all arrived.
  await repo.writeRef(revision, info.sha);
  return snapshotDir;
}
