// The hub cache layout shared with huggingface_hub, so a cache either tool filled serves the other:
//
//   <cache>/models--{org}--{name}/            (datasets--{org}--{name} for datasets)
//     blobs/{etag}                            file contents, named by the server's ETag (LFS: sha256)
//     refs/{revision}                         the commit sha a branch or tag pointed to when last fetched
//     snapshots/{sha}/{path}                  relative symlinks to ../../blobs/{etag} (copies where symlinks fail)
import { randomUUID } from 'node:crypto';
import { copyFile, mkdir, readFile, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { COMMIT_SHA_PATTERN, type RepoType } from './repo.js';

/** `models--org--name`, `models--name`, `datasets--org--name`: the folder of one repository in the cache. */
export function repoFolderName(repoId: string, repoType: RepoType): string {
  return [`${repoType}s`, ...repoId.split('/')].join('--');
}

/** The paths of one repository's cache folder. */
export class RepoCache {
  readonly root: string;

  constructor(cacheDir: string, repoId: string, repoType: RepoType) {
    this.root = join(cacheDir, repoFolderName(repoId, repoType));
  }

  blobPath(etag: string): string {
    return join(this.root, 'blobs', etag);
  }

  /** Revisions like `refs/pr/1` become nested files, as in huggingface_hub. */
  refPath(revision: string): string {
    return join(this.root, 'refs', ...revision.split('/'));
  }

  snapshotDir(commitSha: string): string {
    return join(this.root, 'snapshots', commitSha);
  }

  snapshotFilePath(commitSha: string, repoPath: string): string {
    return join(this.snapshotDir(commitSha), ...repoPath.split('/'));
  }

  /** The commit a revision names in the cache: itself when it is a sha, else what refs/ recorded. */
  async cachedCommit(revision: string): Promise<string | undefined> {
    if (COMMIT_SHA_PATTERN.test(revision)) return revision;
    try {
      const sha = (await readFile(this.refPath(revision), 'utf8')).trim();
      return COMMIT_SHA_PATTERN.test(sha) ? sha : undefined;
    } catch {
      return undefined;
    }
  }

  /** The snapshot folder for a revision when the cache has one, without any network request. */
  async cachedSnapshot(revision: string): Promise<string | undefined> {
    const sha = await this.cachedCommit(revision);
    if (sha === undefined) return undefined;
    const dir = this.snapshotDir(sha);
    return (await isDirectory(dir)) ? dir : undefined;
  }

  /** Records which commit a branch or tag resolved to; a sha needs no ref. Written whole, then renamed in. */
  async writeRef(revision: string, commitSha: string): Promise<void> {
    if (revision === commitSha) return;
    const path = this.refPath(revision);
    await mkdir(dirname(path), { recursive: true });
    // Unique per writer: concurrent downloads of one repository may record the same ref at once.
    const temporary = `${path}.${process.pid}.${randomUUID()}.tmp`;
    await writeFile(temporary, commitSha);
    await rename(temporary, path);
  }
}

export async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/** Whether `path` resolves to a readable file (a symlink must reach its blob). */
export async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/**
 * Puts the blob at `pointerPath` in a snapshot: a relative symlink (so the cache can be moved as a whole),
 * or a copy where the filesystem or platform refuses symlinks. Anything already there is replaced.
 */
export async function linkSnapshotFile(blobPath: string, pointerPath: string): Promise<void> {
  await mkdir(dirname(pointerPath), { recursive: true });
  const target = relative(dirname(pointerPath), blobPath);
  // Removed first (and again if a concurrent writer got in between): copying onto an existing symlink
  // would write through it into the blob.
  for (let attempt = 0; ; attempt++) {
    await rm(pointerPath, { force: true });
    try {
      await symlink(target, pointerPath);
      return;
    } catch (error) {
      if (errorCode(error) === 'EEXIST' && attempt < 2) continue;
      if (errorCode(error) === 'EEXIST') throw error;
      break;
    }
  }
  await copyFile(blobPath, pointerPath);
}

function errorCode(error: unknown): string | undefined {
  return error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}
