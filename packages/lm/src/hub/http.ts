// Requests to the hub: the token goes only to the hub's own origin, a connection that fails becomes an
// error naming the URL (never the token), and an unsuccessful status becomes an error that says what to
// do about it (log in for gated/private repos, check the name for missing ones).
import { HubError, redactToken } from './errors.js';
import { describeRepo, type RepoType } from './repo.js';

/** What a request is for, so every error can name the repository, revision and file. */
export interface HubRequestContext {
  readonly repoId: string;
  readonly repoType: RepoType;
  readonly revision: string;
  readonly endpoint: string;
  readonly token: string | undefined;
  readonly file?: string;
}

/** `file 'a/b.json' of model 'org/name' (revision main)`, or without the file part for repo-level requests. */
export function describeTarget(context: HubRequestContext): string {
  const repo = `${describeRepo(context.repoId, context.repoType)} (revision ${context.revision})`;
  return context.file === undefined ? repo : `file '${context.file}' of ${repo}`;
}

/** Percent-encodes like Python's urllib.parse.quote: unreserved characters stay, and `/` too unless told. */
export function quoteUrlPart(text: string, keepSlashes: boolean): string {
  const encoded = encodeURIComponent(text).replace(
    /[!'()*]/g,
    (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return keepSlashes ? encoded.replace(/%2F/g, '/') : encoded;
}

/** The message of an exception and of its causes, which is where Node's fetch puts "ECONNREFUSED" and friends. */
function describeFailure(error: unknown): string {
  const messages: string[] = [];
  for (let current: unknown = error; current !== undefined && messages.length < 4;) {
    if (current instanceof Error) {
      messages.push(current.message);
      current = current.cause;
    } else {
      messages.push(String(current));
      current = undefined;
    }
  }
  return messages.join(': ');
}

function sameOrigin(url: string, endpoint: string): boolean {
  try {
    return new URL(url).origin === new URL(endpoint).origin;
  } catch {
    return false;
  }
}

/**
 * fetch with the hub's headers. Authorization is attached only for the endpoint's own origin: pre-signed
 * download URLs on a CDN need none, and a token must not travel to hosts that did not ask for it.
 */
export async function hubFetch(
  url: string,
  init: { readonly redirect: 'manual' | 'follow'; readonly headers?: Record<string, string> },
  context: HubRequestContext,
): Promise<Response> {
  const headers: Record<string, string> = { 'User-Agent': 'prime-rl-ts/hub', ...init.headers };
  if (context.token !== undefined && sameOrigin(url, context.endpoint)) {
    headers.Authorization = `Bearer ${context.token}`;
  }
  try {
    return await fetch(url, { redirect: init.redirect, headers });
  } catch (error) {
    throw networkError(url, error, context);
  }
}

export function networkError(
  url: string,
  error: unknown,
  context: HubRequestContext,
  doing = 'could not reach',
): HubError {
  const why = redactToken(describeFailure(error), context.token);
  return new HubError('network', `${doing} ${url} for ${describeTarget(context)}: ${why}`, {
    repoId: context.repoId,
    revision: context.revision,
    file: context.file,
    url,
  });
}

/** An error for an unsuccessful response, with advice that fits the status; the body is discarded. */
export async function httpError(response: Response, url: string, context: HubRequestContext): Promise<HubError> {
  await response.body?.cancel().catch(() => undefined);
  const status = response.status;
  const target = describeTarget(context);
  const code = response.headers.get('x-error-code') ?? '';
  const serverMessage = redactToken(response.headers.get('x-error-message') ?? '', context.token);
  const serverSays = serverMessage === '' ? '' : ` The hub says: ${serverMessage}`;
  const details = { repoId: context.repoId, revision: context.revision, file: context.file, url, status };
  // A refusal from elsewhere (an expired CDN link) is not about the token, so it gets the generic message.
  if ((status === 401 || status === 403) && sameOrigin(url, context.endpoint)) {
    const advice =
      context.token === undefined
        ? 'no token was sent: set HF_TOKEN or log in with `huggingface-cli login`'
        : 'the token sent has no access to it: check HF_TOKEN or `huggingface-cli login`, and for a gated repository accept its terms on its page';
    // The hub answers 401 for nonexistent repositories too, so as not to reveal which private ones exist.
    return new HubError(
      'unauthorized',
      `access to ${target} was refused (HTTP ${status}) at ${url}: the repository is gated or private (or does not exist), and ${advice}.${serverSays}`,
      details,
    );
  }
  if (status === 404) {
    const missing =
      code === 'RepoNotFound'
        ? 'repository not found'
        : code === 'RevisionNotFound'
          ? 'revision not found'
          : code === 'EntryNotFound'
            ? 'file not found'
            : 'repository, revision or file not found';
    return new HubError('not-found', `${target}: ${missing} (HTTP 404 at ${url}).${serverSays}`, details);
  }
  const statusText = response.statusText === '' ? '' : ` ${response.statusText}`;
  return new HubError('http', `${target}: HTTP ${status}${statusText} from ${url}.${serverSays}`, details);
}

/** Failures worth answering from the cache instead: the server could not be reached or is struggling. */
export function isTransientFailure(error: unknown): boolean {
  return (
    error instanceof HubError &&
    (error.kind === 'network' || (error.status !== undefined && (error.status >= 500 || error.status === 429)))
  );
}
