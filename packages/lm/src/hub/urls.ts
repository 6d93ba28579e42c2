// The hub's URL layout (huggingface_hub's hf_hub_url and repo_info): datasets live under a `datasets/`
// prefix, revisions are encoded as one path segment, file paths keep their slashes.
import { quoteUrlPart } from './http.js';
import type { RepoType } from './repo.js';

/** `{endpoint}/api/models/{repo}/revision/{revision}`: the commit sha and file list of a revision. */
export function revisionInfoUrl(endpoint: string, repoId: string, repoType: RepoType, revision: string): string {
  return `${endpoint}/api/${repoType}s/${repoId}/revision/${quoteUrlPart(revision, false)}`;
}

/** `{endpoint}/{repo}/resolve/{revision}/{path}` (datasets: `{endpoint}/datasets/{repo}/resolve/...`). */
export function resolveFileUrl(
  endpoint: string,
  repoId: string,
  repoType: RepoType,
  revision: string,
  path: string,
): string {
  const prefix = repoType === 'dataset' ? 'datasets/' : '';
  return `${endpoint}/${prefix}${repoId}/resolve/${quoteUrlPart(revision, false)}/${quoteUrlPart(path, true)}`;
}
