// One repository file into a snapshot, the way huggingface_hub's hf_hub_download does it: nothing to do if
// the snapshot already has it; otherwise ask the hub which blob it is (its etag), download that blob
// only if the cache lacks it, and link it into the snapshot.
import {
  type DownloadProgress,
  downloadBlob,
  type FileMetadata,
  isRedirectStatus,
  parseByteCount,
} from './blob-download.js';
import { isFile, linkSnapshotFile, type RepoCache } from './cache.js';
import { HubError } from './errors.js';
import { describeTarget, hubFetch, httpError, type HubRequestContext } from './http.js';
import { resolveFileUrl } from './urls.js';

export interface RepoFileJob {
  readonly repo: RepoCache;
  readonly commitSha: string;
  readonly context: HubRequestContext & { readonly file: string };
  readonly onProgress?: ((progress: DownloadProgress) => void) | undefined;
}

const MAX_RELATIVE_REDIRECTS = 10;

/** Blob downloads under way in this process, so two files with the same contents download it once. */
const blobsInFlight = new Map<string, Promise<void>>();

/** `W/"abc"` → `abc`, as huggingface_hub normalizes etags. */
function normalizeEtag(etag: string): string {
  return etag.trim().replace(/^W\//, '').replace(/^"/, '').replace(/"$/, '');
}

/** A Location without a scheme or host: the hub's redirects for renamed repositories, which it follows itself. */
function isRelativeLocation(location: string): boolean {
  return !/^[a-z][a-z0-9+.-]*:/i.test(location) && !location.startsWith('//');
}

/**
 * The hub's answer for the file after following its relative redirects: a 2xx carrying the body, or an
 * absolute redirect (LFS files) whose headers describe the file and whose Location holds the bytes.
 */
async function openFileAnswer(job: RepoFileJob): Promise<{ response: Response; url: string }> {
  const { context } = job;
  let url = resolveFileUrl(context.endpoint, context.repoId, context.repoType, job.commitSha, context.file);
  for (let hops = 0; ; hops++) {
    const response = await hubFetch(url, { redirect: 'manual', headers: { 'Accept-Encoding': 'identity' } }, context);
    if (response.ok) return { response, url };
    if (!isRedirectStatus(response.status)) throw await httpError(response, url, context);
    const location = response.headers.get('location');
    if (location === null || location === '') {
      await response.body?.cancel().catch(() => undefined);
      throw new HubError(
        'integrity',
        `${describeTarget(context)}: HTTP ${response.status} from ${url} without a Location`,
        {
          repoId: context.repoId,
          revision: context.revision,
          file: context.file,
          url,
          status: response.status,
        },
      );
    }
    if (!isRelativeLocation(location)) return { response, url };
    await response.body?.cancel().catch(() => undefined);
    if (hops >= MAX_RELATIVE_REDIRECTS) {
      throw new HubError(
        'http',
        `${describeTarget(context)}: more than ${MAX_RELATIVE_REDIRECTS} redirects from ${url}`,
        {
          repoId: context.repoId,
          revision: context.revision,
          file: context.file,
          url,
        },
      );
    }
    url = new URL(location, url).href;
  }
}

function readMetadata(response: Response, url: string, job: RepoFileJob): FileMetadata {
  const { context } = job;
  const fail = (message: string): never => {
    throw new HubError('integrity', `${describeTarget(context)}: ${message} (from ${url})`, {
      repoId: context.repoId,
      revision: context.revision,
      file: context.file,
      url,
    });
  };
  const linkedEtag = response.headers.get('x-linked-etag');
  const etag = normalizeEtag(linkedEtag ?? response.headers.get('etag') ?? '');
  // The etag becomes a file name in blobs/, so anything that could name another path is refused.
  if (etag === '') fail('the server sent no ETag or X-Linked-Etag, so the file cannot be cached');
  if (!/^[A-Za-z0-9._+=-]+$/.test(etag) || /^\.+$/.test(etag)) fail(`the ETag '${etag}' is not usable as a blob name`);
  const commit = response.headers.get('x-repo-commit');
  if (commit !== null && commit.trim() !== job.commitSha) {
    fail(`the server answered for commit ${commit.trim()} instead of ${job.commitSha}`);
  }
  const linkedSize = parseByteCount(response.headers.get('x-linked-size'));
  const encoding = response.headers.get('content-encoding');
  const inlineSize =
    response.ok && (encoding === null || encoding.trim().toLowerCase() === 'identity')
      ? parseByteCount(response.headers.get('content-length'))
      : undefined;
  return { etag, linked: linkedEtag !== null, size: linkedSize ?? inlineSize };
}

export async function fetchRepoFile(job: RepoFileJob): Promise<void> {
  const pointerPath = job.repo.snapshotFilePath(job.commitSha, job.context.file);
  if (await isFile(pointerPath)) return;
  const { response, url } = await openFileAnswer(job);
  let metadata: FileMetadata;
  try {
    metadata = readMetadata(response, url, job);
  } catch (error) {
    await response.body?.cancel().catch(() => undefined);
    throw error;
  }
  const blobPath = job.repo.blobPath(metadata.etag);
  if (await isFile(blobPath)) {
    await response.body?.cancel().catch(() => undefined);
  } else {
    const inFlight = blobsInFlight.get(blobPath);
    if (inFlight !== undefined) {
      await response.body?.cancel().catch(() => undefined);
      await inFlight;
    } else {
      const download = downloadBlob({
        blobPath,
        response,
        url,
        metadata,
        context: job.context,
        onProgress: job.onProgress,
      });
      blobsInFlight.set(blobPath, download);
      try {
        await download;
      } finally {
        blobsInFlight.delete(blobPath);
      }
    }
  }
  await linkSnapshotFile(blobPath, pointerPath);
}
