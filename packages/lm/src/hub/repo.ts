// Repository identity: which names the hub accepts (checked before any request or any path is built from
// them), and the names of files and revisions that are safe to turn into cache paths.
import { HubError } from './errors.js';

export type RepoType = 'model' | 'dataset';

/** A 40-hex-digit git commit id, which needs no resolution through refs/. */
export const COMMIT_SHA_PATTERN = /^[0-9a-f]{40}$/;

/** One part of a repo id: word characters, `.` and `-`, beginning and ending with a word character. */
const REPO_ID_PART = /^[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?$/;
const MAX_REPO_ID_LENGTH = 96;

/** `model 'org/name'` or `dataset 'org/name'`, the way errors refer to a repository. */
export function describeRepo(repoId: string, repoType: RepoType): string {
  return `${repoType} '${repoId}'`;
}

/** Throws unless `repoId` is `name` or `org/name` under the hub's own rules (huggingface_hub's validate_repo_id). */
export function validateRepoId(repoId: string): void {
  const reject = (why: string): never => {
    throw new HubError('invalid-argument', `invalid repo id '${repoId}': ${why}`, { repoId });
  };
  if (repoId === '') reject('it is empty; expected "org/name" or "name"');
  if (repoId.length > MAX_REPO_ID_LENGTH) reject(`it is longer than ${MAX_REPO_ID_LENGTH} characters`);
  const parts = repoId.split('/');
  if (parts.length > 2) reject('it has more than one "/"; expected "org/name" or "name"');
  if (repoId.includes('--') || repoId.includes('..')) reject('"--" and ".." are not allowed');
  for (const part of parts) {
    if (!REPO_ID_PART.test(part)) {
      reject(`"${part}" must be letters, digits, "_", "-" or ".", and must start and end with a letter, digit or "_"`);
    }
  }
}

/**
 * Throws unless `path` is a relative path inside the repository: the revision API's file list and the
 * caller's revision names become cache paths, and a `..` segment or absolute path must never escape the cache.
 */
export function validateRelativePath(path: string, what: string, repoId: string): void {
  const segments = path.split('/');
  const unsafe =
    path === '' ||
    path.includes('\\') ||
    path.includes('\0') ||
    path.startsWith('/') ||
    segments.some((segment) => segment === '' || segment === '.' || segment === '..');
  if (unsafe) {
    throw new HubError('invalid-argument', `${what} '${path}' of '${repoId}' is not a safe relative path`, {
      repoId,
    });
  }
}
