// A revision's commit sha and file list, from the hub's revision API.
import { HubError } from './errors.js';
import { hubFetch, httpError, type HubRequestContext, networkError } from './http.js';
import { COMMIT_SHA_PATTERN } from './repo.js';
import { revisionInfoUrl } from './urls.js';

export interface RevisionInfo {
  /** The full commit sha the revision resolved to. */
  readonly sha: string;
  /** Every file path in the repository at that commit. */
  readonly files: readonly string[];
}

function parseRevisionInfo(body: unknown): RevisionInfo | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { sha, siblings } = body as { sha?: unknown; siblings?: unknown };
  if (typeof sha !== 'string' || !COMMIT_SHA_PATTERN.test(sha) || !Array.isArray(siblings)) return undefined;
  const files: string[] = [];
  for (const sibling of siblings as unknown[]) {
    const name =
      typeof sibling === 'object' && sibling !== null ? (sibling as { rfilename?: unknown }).rfilename : undefined;
    if (typeof name !== 'string') return undefined;
    files.push(name);
  }
  return { sha, files };
}

export async function fetchRevisionInfo(context: HubRequestContext): Promise<RevisionInfo> {
  const url = revisionInfoUrl(context.endpoint, context.repoId, context.repoType, context.revision);
  // Renamed repositories answer with a redirect to the new name, which fetch follows.
  const response = await hubFetch(url, { redirect: 'follow', headers: { Accept: 'application/json' } }, context);
  if (!response.ok) throw await httpError(response, url, context);
  let body: unknown;
  try {
    body = await response.json();
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw networkError(url, error, context, 'could not read the answer from');
    throw new HubError('integrity', `the revision API at ${url} did not answer with JSON`, {
      repoId: context.repoId,
      revision: context.revision,
      url,
      cause: error,
    });
  }
  const info = parseRevisionInfo(body);
  if (info === undefined) {
    throw new HubError(
      'integrity',
      `the revision API at ${url} answered without a 40-hex "sha" and a "siblings" list of { rfilename }`,
      { repoId: context.repoId, revision: context.revision, url },
    );
  }
  return info;
}
