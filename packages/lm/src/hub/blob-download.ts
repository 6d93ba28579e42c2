// Streams one file's bytes into `blobs/{etag}`: written to `{etag}.incomplete` first and renamed only once
// the byte count (and, for LFS files, the sha256 the etag names) checks out, so an interrupted or corrupt
// download never leaves a blob behind. A leftover `.incomplete` is resumed with a Range request.
import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { HubError } from './errors.js';
import { describeTarget, hubFetch, httpError, networkError, type HubRequestContext } from './http.js';

/** Progress of one file's download, reported after each chunk written. */
export interface DownloadProgress {
  /** The file's path inside the repository. */
  readonly file: string;
  /** Bytes of the file on disk so far (a resumed download starts at what was already there). */
  readonly bytes: number;
  /** The file's size, when the server said. */
  readonly total: number | undefined;
}

/** What the hub's answer for a file said about it. */
export interface FileMetadata {
  /** The blob name: `X-Linked-Etag` (LFS: the content's sha256) or else `ETag`, without `W/` and quotes. */
  readonly etag: string;
  /** Whether the etag came from `X-Linked-Etag`, i.e. is an LFS object id. */
  readonly linked: boolean;
  /** `X-Linked-Size` or the Content-Length of an uncompressed inline body. */
  readonly size: number | undefined;
}

export interface BlobDownload {
  readonly blobPath: string;
  /** The hub's answer for the file: either the body itself (2xx) or a redirect to where the bytes are. */
  readonly response: Response;
  readonly url: string;
  readonly metadata: FileMetadata;
  readonly context: HubRequestContext & { readonly file: string };
  readonly onProgress?: ((progress: DownloadProgress) => void) | undefined;
}

const LFS_OID_PATTERN = /^[0-9a-f]{64}$/;

export function isRedirectStatus(status: number): boolean {
  return status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
}

/** A byte count header, or undefined when absent or not a non-negative integer. */
export function parseByteCount(value: string | null): number | undefined {
  if (value === null || !/^\d+$/.test(value.trim())) return undefined;
  return Number(value.trim());
}

/** Content-Length, unless the body is compressed (fetch decompresses it, so the count would not match). */
function uncompressedLength(response: Response): number | undefined {
  const encoding = response.headers.get('content-encoding');
  if (encoding !== null && encoding.trim().toLowerCase() !== 'identity') return undefined;
  return parseByteCount(response.headers.get('content-length'));
}

async function sizeOnDisk(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch {
    return 0;
  }
}

async function hashFile(path: string, hash: Hash): Promise<void> {
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
}

function integrityError(message: string, job: BlobDownload, url: string): HubError {
  const { context } = job;
  return new HubError('integrity', `${describeTarget(context)}: ${message} (from ${url})`, {
    repoId: context.repoId,
    revision: context.revision,
    file: context.file,
    url,
  });
}

/** The body to write and where in the file it starts: the inline body, or the redirect target (resumed if possible). */
async function openBody(
  job: BlobDownload,
  incompletePath: string,
): Promise<{ response: Response; url: string; offset: number }> {
  const { response, url, context } = job;
  if (!isRedirectStatus(response.status)) return { response, url, offset: 0 };
  await response.body?.cancel().catch(() => undefined);
  const location = new URL(response.headers.get('location') ?? '', url).href;
  let partial = await sizeOnDisk(incompletePath);
  if (job.metadata.size !== undefined && partial > job.metadata.size) partial = 0;
  const request = (from: number): Promise<Response> =>
    hubFetch(
      location,
      {
        redirect: 'follow',
        headers: { 'Accept-Encoding': 'identity', ...(from > 0 ? { Range: `bytes=${from}-` } : {}) },
      },
      context,
    );
  let download = await request(partial);
  if (download.status === 416 && partial > 0) {
    // The leftover is already complete or the file changed: start over.
    await download.body?.cancel().catch(() => undefined);
    partial = 0;
    download = await request(0);
  }
  if (!download.ok) throw await httpError(download, location, context);
  if (download.status !== 206) return { response: download, url: location, offset: 0 };
  const rangeStart = /^bytes (\d+)-/.exec(download.headers.get('content-range') ?? '')?.[1];
  if (rangeStart === undefined || Number(rangeStart) !== partial) {
    await download.body?.cancel().catch(() => undefined);
    await rm(incompletePath, { force: true });
    throw integrityError(`asked for bytes from ${partial} but the server sent a different range`, job, location);
  }
  return { response: download, url: location, offset: partial };
}

export async function downloadBlob(job: BlobDownload): Promise<void> {
  const { blobPath, metadata, context, onProgress } = job;
  const incompletePath = `${blobPath}.incomplete`;
  await mkdir(dirname(blobPath), { recursive: true });
  const { response, url, offset } = await openBody(job, incompletePath);
  const remaining = uncompressedLength(response);
  const total = metadata.size ?? (remaining === undefined ? undefined : offset + remaining);
  const hash = metadata.linked && LFS_OID_PATTERN.test(metadata.etag) ? createHash('sha256') : undefined;
  if (hash !== undefined && offset > 0) await hashFile(incompletePath, hash);

  let bytes = offset;
  const file = await open(incompletePath, offset > 0 ? 'a' : 'w');
  try {
    if (response.body !== null) {
      for await (const chunk of response.body) {
        await file.write(chunk);
        hash?.update(chunk);
        bytes += chunk.length;
        onProgress?.({ file: context.file, bytes, total });
      }
    }
  } catch (error) {
    // The partial file stays as `.incomplete` for the next attempt to resume; no blob is created.
    throw networkError(url, error, context, `download interrupted after ${bytes} of ${total ?? 'unknown'} bytes from`);
  } finally {
    await file.close();
  }
  if (bytes === offset) onProgress?.({ file: context.file, bytes, total });

  if (total !== undefined && bytes < total) {
    throw networkError(
      url,
      new Error('the server ended the response early'),
      context,
      `download stopped after ${bytes} of ${total} bytes from`,
    );
  }
  if (total !== undefined && bytes > total) {
    await rm(incompletePath, { force: true });
    throw integrityError(`received ${bytes} bytes but expected ${total}`, job, url);
  }
  if (hash !== undefined) {
    const digest = hash.digest('hex');
    if (digest !== metadata.etag) {
      await rm(incompletePath, { force: true });
      throw integrityError(`content sha256 ${digest} does not match its LFS id ${metadata.etag}`, job, url);
    }
  }
  await rename(incompletePath, blobPath);
}
