// One error type for everything the hub client can refuse or fail at, carrying what was asked for (repo,
// revision, file, URL) so the message and the fields both say what went wrong and where.

/** Why a hub operation failed, for callers that react differently to each. */
export type HubErrorKind =
  | 'invalid-argument' // a repo id, revision or path rejected before any request
  | 'unauthorized' // 401/403: gated, private, or (for the hub's anonymous answers) nonexistent
  | 'not-found' // 404: repository, revision or file
  | 'offline-miss' // offline mode and the cache does not have it
  | 'network' // the server could not be reached or the connection broke
  | 'http' // any other unsuccessful HTTP status
  | 'integrity'; // the bytes or headers received do not match what the server promised

export interface HubErrorDetails {
  readonly repoId?: string;
  readonly revision?: string;
  readonly file?: string;
  readonly url?: string;
  readonly status?: number;
  readonly cause?: unknown;
}

export class HubError extends Error {
  override readonly name = 'HubError';
  readonly kind: HubErrorKind;
  readonly repoId: string | undefined;
  readonly revision: string | undefined;
  readonly file: string | undefined;
  readonly url: string | undefined;
  readonly status: number | undefined;

  constructor(kind: HubErrorKind, message: string, details: HubErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.kind = kind;
    this.repoId = details.repoId;
    this.revision = details.revision;
    this.file = details.file;
    this.url = details.url;
    this.status = details.status;
  }
}

/**
 * Replaces every occurrence of the token in text that came from elsewhere (a server's error message, a
 * lower-level exception) so a secret can never reach a log through an error we build.
 */
export function redactToken(text: string, token: string | undefined): string {
  return token === undefined || token === '' ? text : text.split(token).join('***');
}
