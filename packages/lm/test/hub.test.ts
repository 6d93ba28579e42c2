// Hub downloads against a local HTTP server that answers in the hub's URL layout (revision API, resolve
// URLs, LFS files redirected to a "CDN" with X-Linked-Etag): the cache layout huggingface_hub uses, reuse
// of what is cached, offline mode, tokens (sent, never shown), error messages, interrupted downloads.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { isAbsolute, join, relative } from 'node:path';
import { test, type TestContext } from 'node:test';
import { inspect } from 'node:util';
import {
  type DownloadProgress,
  type Environment,
  HubError,
  resolveModelPath,
  snapshotDownload,
} from '../src/hub/index.js';

// ---------------------------------------------------------------------------------------------------------
// The fake hub

interface FakeFile {
  readonly path: string;
  readonly content: Buffer;
  /** Served like the hub serves LFS files: a redirect carrying X-Linked-Etag (the sha256) to a CDN URL. */
  readonly lfs?: boolean;
}

interface FakeRepo {
  readonly id: string;
  readonly type: 'model' | 'dataset';
  /** Branch name → commit sha. */
  readonly branches: Record<string, string>;
  /** Commit sha → files at that commit. */
  readonly commits: Record<string, readonly FakeFile[]>;
  /** When set, every request without `Authorization: Bearer <this>` is refused with 401. */
  readonly requiredToken?: string;
  /** Paths listed by the revision API but answered 404 by the resolve endpoint. */
  readonly missingFiles?: readonly string[];
}

interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly authorization: string | undefined;
  readonly range: string | undefined;
}

interface FakeHub {
  readonly endpoint: string;
  readonly requests: RecordedRequest[];
  /** Request paths whose next answer sends half the body and then drops the connection. */
  readonly interruptNext: Set<string>;
  /** CDN object ids whose answers carry different bytes of the same length. */
  readonly corrupt: Set<string>;
}

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');
/** The git blob id, which the hub sends as the ETag of files stored in git rather than LFS. */
const gitBlobSha = (bytes: Buffer): string =>
  createHash('sha1')
    .update(Buffer.concat([Buffer.from(`blob ${bytes.length}\0`), bytes]))
    .digest('hex');
const commitSha = (label: string): string => createHash('sha1').update(label).digest('hex');

/** Deterministic bytes, large enough to arrive in more than one chunk. */
function weights(seed: number, length: number): Buffer {
  const bytes = Buffer.alloc(length);
  for (let i = 0; i < length; i++) bytes[i] = (i * 31 + seed * 17) & 0xff;
  return bytes;
}

const MAIN = commitSha('main');
const DEV = commitSha('dev');
const WEIGHTS = weights(1, 200_000);
const MODEL_FILES: FakeFile[] = [
  { path: 'config.json', content: Buffer.from('{"hidden_size": 8}\n') },
  { path: 'tokenizer.json', content: Buffer.from('{"model": {"type": "BPE"}}\n') },
  { path: 'tokenizer_config.json', content: Buffer.from('{"eos_token": "<eos>"}\n') },
  { path: 'chat_template.jinja', content: Buffer.from('{{ messages }}') },
  { path: 'README.md', content: Buffer.from('# tiny model\n') },
  { path: 'nested/deep/notes.txt', content: Buffer.from('nested file\n') },
  { path: 'model.safetensors', content: WEIGHTS, lfs: true },
  { path: 'consolidated/model.safetensors', content: WEIGHTS, lfs: true },
  { path: 'pytorch_model.bin', content: weights(2, 5_000), lfs: true },
];
const TINY_MODEL: FakeRepo = {
  id: 'acme/tiny-model',
  type: 'model',
  branches: { main: MAIN, dev: DEV, 'refs/pr/1': DEV },
  commits: {
    [MAIN]: MODEL_FILES,
    // dev changes the config and keeps the weights, so its snapshot shares their blob.
    [DEV]: MODEL_FILES.map((file) =>
      file.path === 'config.json' ? { path: 'config.json', content: Buffer.from('{"hidden_size": 16}\n') } : file,
    ),
  },
};
const DATA_MAIN = commitSha('data');
const TINY_DATA: FakeRepo = {
  id: 'acme/tiny-data',
  type: 'dataset',
  branches: { main: DATA_MAIN },
  commits: {
    [DATA_MAIN]: [
      { path: 'data/train.jsonl', content: Buffer.from('{"prompt": "1+1"}\n') },
      { path: 'data/train.parquet', content: weights(3, 3_000), lfs: true },
    ],
  },
};
const TOKEN = 'hf_secretTOKENvalue123';
const GATED_MAIN = commitSha('gated');
const GATED: FakeRepo = {
  id: 'acme/gated',
  type: 'model',
  branches: { main: GATED_MAIN },
  commits: { [GATED_MAIN]: [{ path: 'config.json', content: Buffer.from('{}') }] },
  requiredToken: TOKEN,
};
const BROKEN_MAIN = commitSha('broken');
const BROKEN: FakeRepo = {
  id: 'acme/broken',
  type: 'model',
  branches: { main: BROKEN_MAIN },
  commits: {
    [BROKEN_MAIN]: [
      { path: 'config.json', content: Buffer.from('{}') },
      { path: 'ghost.json', content: Buffer.from('') },
    ],
  },
  missingFiles: ['ghost.json'],
};
const ALL_REPOS = [TINY_MODEL, TINY_DATA, GATED, BROKEN];

/** Starts the fake hub on 127.0.0.1 (a free port), closed when the test ends. */
async function startHub(t: TestContext, repos: readonly FakeRepo[] = ALL_REPOS): Promise<FakeHub> {
  const requests: RecordedRequest[] = [];
  const interruptNext = new Set<string>();
  const corrupt = new Set<string>();
  const objects = new Map<string, Buffer>();
  for (const repo of repos) {
    for (const files of Object.values(repo.commits)) {
      for (const file of files) if (file.lfs) objects.set(sha256(file.content), file.content);
    }
  }
  let endpoint = '';

  const send = (
    request: IncomingMessage,
    response: ServerResponse,
    status: number,
    headers: Record<string, string>,
    body: Buffer,
  ): void => {
    const path = request.url ?? '';
    if (interruptNext.delete(path)) {
      response.writeHead(status, { ...headers, 'Content-Length': String(body.length) });
      response.write(body.subarray(0, Math.floor(body.length / 2)), () => {
        setTimeout(() => response.socket?.destroy(), 20);
      });
      return;
    }
    response.writeHead(status, { ...headers, 'Content-Length': String(body.length) });
    response.end(body);
  };
  const fail = (response: ServerResponse, status: number, code: string, message: string): void => {
    response.writeHead(status, {
      'X-Error-Code': code,
      'X-Error-Message': message,
      'Content-Type': 'application/json',
    });
    response.end(JSON.stringify({ error: message }));
  };
  const findRepo = (type: string, id: string): FakeRepo | undefined =>
    repos.find((repo) => repo.id === id && `${repo.type}s` === type);
  const authorized = (repo: FakeRepo, request: IncomingMessage): boolean =>
    repo.requiredToken === undefined || request.headers.authorization === `Bearer ${repo.requiredToken}`;
  const commitOf = (repo: FakeRepo, revision: string): string | undefined =>
    repo.branches[revision] ?? (repo.commits[revision] === undefined ? undefined : revision);

  const server = createServer((request, response) => {
    const path = request.url ?? '';
    requests.push({
      method: request.method ?? '',
      path,
      authorization: request.headers.authorization,
      range: request.headers.range,
    });
    // A renamed repository: the hub answers its old name with a relative redirect to the new one.
    if (path.includes('/acme/old-name/')) {
      response.writeHead(307, { Location: path.replace('/acme/old-name/', '/acme/tiny-model/') });
      return response.end();
    }
    const api = /^\/api\/(models|datasets)\/([^/]+\/[^/]+)\/revision\/([^/]+)$/.exec(path);
    const resolve = /^\/(datasets\/)?([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(path);
    const cdn = /^\/cdn\/([0-9a-f]{64})$/.exec(path);
    if (api !== null) {
      const repo = findRepo(api[1] as string, api[2] as string);
      if (repo === undefined) return fail(response, 404, 'RepoNotFound', `Repository ${api[2]} not found`);
      if (!authorized(repo, request)) return fail(response, 401, 'GatedRepo', `Access to ${repo.id} is restricted`);
      const sha = commitOf(repo, decodeURIComponent(api[3] as string));
      if (sha === undefined) return fail(response, 404, 'RevisionNotFound', 'Invalid rev id');
      const siblings = (repo.commits[sha] ?? []).map((file) => ({ rfilename: file.path }));
      return send(
        request,
        response,
        200,
        { 'Content-Type': 'application/json' },
        Buffer.from(JSON.stringify({ id: repo.id, sha, siblings })),
      );
    }
    if (resolve !== null) {
      const repo = findRepo(resolve[1] === undefined ? 'models' : 'datasets', resolve[2] as string);
      if (repo === undefined) return fail(response, 404, 'RepoNotFound', 'Repository not found');
      if (!authorized(repo, request)) return fail(response, 401, 'GatedRepo', `Access to ${repo.id} is restricted`);
      const sha = commitOf(repo, decodeURIComponent(resolve[3] as string));
      if (sha === undefined) return fail(response, 404, 'RevisionNotFound', 'Invalid rev id');
      const filePath = (resolve[4] as string).split('/').map(decodeURIComponent).join('/');
      const file = repo.commits[sha]?.find((candidate) => candidate.path === filePath);
      if (file === undefined || repo.missingFiles?.includes(filePath)) {
        return fail(response, 404, 'EntryNotFound', `${filePath} does not exist on "${sha}"`);
      }
      if (file.lfs) {
        const oid = sha256(file.content);
        response.writeHead(302, {
          Location: `${endpoint}/cdn/${oid}`,
          'X-Linked-Etag': `"${oid}"`,
          'X-Linked-Size': String(file.content.length),
          'X-Repo-Commit': sha,
          ETag: `"${gitBlobSha(Buffer.from(`version https://git-lfs.github.com/spec/v1\noid sha256:${oid}\n`))}"`,
        });
        return response.end();
      }
      return send(
        request,
        response,
        200,
        { ETag: `W/"${gitBlobSha(file.content)}"`, 'X-Repo-Commit': sha },
        file.content,
      );
    }
    if (cdn !== null) {
      const oid = cdn[1] as string;
      const content = objects.get(oid);
      if (content === undefined) return fail(response, 404, 'NotFound', 'no such object');
      const body = corrupt.has(oid) ? Buffer.alloc(content.length, 7) : content;
      const range = /^bytes=(\d+)-$/.exec(request.headers.range ?? '');
      if (range !== null) {
        const start = Number(range[1]);
        if (start >= body.length) {
          response.writeHead(416, { 'Content-Range': `bytes */${body.length}` });
          return response.end();
        }
        return send(
          request,
          response,
          206,
          { 'Content-Range': `bytes ${start}-${body.length - 1}/${body.length}`, ETag: `"s3-${oid.slice(0, 8)}"` },
          body.subarray(start),
        );
      }
      return send(request, response, 200, { ETag: `"s3-${oid.slice(0, 8)}"` }, body);
    }
    fail(response, 404, 'NotFound', 'no route');
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t.after(
    () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  );
  return { endpoint, requests, interruptNext, corrupt };
}

/** A fresh HF_HOME, removed when the test ends. */
function freshHome(t: TestContext): string {
  const home = mkdtempSync(join(tmpdir(), 'prime-rl-hub-test-'));
  t.after(() => rmSync(home, { recursive: true, force: true }));
  return home;
}

function hubEnv(hub: FakeHub, home: string, extra: Environment = {}): Environment {
  return { HF_HOME: home, HF_ENDPOINT: hub.endpoint, ...extra };
}

const repoRoot = (home: string, folder = 'models--acme--tiny-model'): string => join(home, 'hub', folder);
const fileOf = (sha: string, path: string): Buffer => {
  const files = TINY_MODEL.commits[sha] ?? TINY_DATA.commits[sha] ?? [];
  const file = files.find((candidate) => candidate.path === path);
  assert.ok(file, `fixture has ${path}`);
  return file.content;
};
const cdnGets = (hub: FakeHub): RecordedRequest[] => hub.requests.filter((request) => request.path.startsWith('/cdn/'));
const resolveGets = (hub: FakeHub): RecordedRequest[] =>
  hub.requests.filter((request) => request.path.includes('/resolve/'));

/** Every file under `dir`, as paths relative to it with `/` separators. */
function listFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (sub: string): void => {
    for (const entry of readdirSync(join(dir, sub), { withFileTypes: true })) {
      const child = sub === '' ? entry.name : `${sub}/${entry.name}`;
      if (entry.isDirectory()) walk(child);
      else out.push(child);
    }
  };
  walk('');
  return out.sort();
}

/** Asserts an async call rejects with a HubError and returns it. */
async function hubFailure(promise: Promise<unknown>): Promise<HubError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof HubError, `expected a HubError, got ${inspect(error)}`);
    return error;
  }
  assert.fail('expected the call to fail');
}

// ---------------------------------------------------------------------------------------------------------
// Tests

test('snapshotDownload lays out blobs, refs and relative snapshot symlinks like huggingface_hub', async (t) => {
  const hub = await startHub(t);
  const home = freshHome(t);
  const snapshot = await snapshotDownload('acme/tiny-model', { env: hubEnv(hub, home) });

  const root = repoRoot(home);
  assert.equal(snapshot, join(root, 'snapshots', MAIN));
  assert.equal(readFileSync(join(root, 'refs', 'main'), 'utf8'), MAIN);
  assert.deepEqual(listFiles(snapshot), MODEL_FILES.map((file) => file.path).sort());

  const expectedBlobs = new Set(
    MODEL_FILES.map((file) => (file.lfs ? sha256(file.content) : gitBlobSha(file.content))),
  );
  assert.deepEqual(
    new Set(readdirSync(join(root, 'blobs'))),
    expectedBlobs,
    'one blob per distinct content, no .incomplete',
  );

  for (const file of MODEL_FILES) {
    const pointer = join(snapshot, file.path);
    assert.ok(lstatSync(pointer).isSymbolicLink(), `${file.path} is a symlink`);
    const target = readlinkSync(pointer);
    assert.ok(!isAbsolute(target), `${file.path} links relatively (${target})`);
    const blob = file.lfs ? sha256(file.content) : gitBlobSha(file.content);
    const depth = file.path.split('/').length - 1;
    assert.equal(target, join(...Array<string>(depth + 2).fill('..'), 'blobs', blob));
    assert.deepEqual(readFileSync(pointer), file.content, `${file.path} reads back its bytes`);
  }
  // The two identical LFS files share one blob, fetched from the CDN once.
  assert.equal(cdnGets(hub).filter((request) => request.path === `/cdn/${sha256(WEIGHTS)}`).length, 1);
});

test('revisions resolve by branch and by commit sha, and snapshots share blobs', async (t) => {
  const hub = await startHub(t);
  const home = freshHome(t);
  const env = hubEnv(hub, home);
  const main = await snapshotDownload('acme/tiny-model', { env });
  const cdnAfterMain = cdnGets(hub).length;

  const dev = await snapshotDownload('acme/tiny-model', { env, revision: 'dev' });
  assert.equal(dev, join(repoRoot(home), 'snapshots', DEV));
  assert.equal(readFileSync(join(repoRoot(home), 'refs', 'dev'), 'utf8'), DEV);
  assert.equal(readFileSync(join(dev, 'config.json'), 'utf8'), '{"hidden_size": 16}\n');
  assert.equal(readFileSync(join(main, 'config.json'), 'utf8'), '{"hidden_size": 8}\n');
  assert.deepEqual(readFileSync(join(dev, 'model.safetensors')), WEIGHTS);
  assert.equal(cdnGets(hub).length, cdnAfterMain, 'the weights blob is reused, not downloaded again');
  assert.ok(
    hub.requests.some((request) => request.path === `/acme/tiny-model/resolve/${DEV}/config.json`),
    'files are fetched by the resolved commit sha',
  );

  const bySha = await snapshotDownload('acme/tiny-model', { env, revision: MAIN });
  assert.equal(bySha, main);
  assert.ok(!existsSync(join(repoRoot(home), 'refs', MAIN)), 'a sha needs no ref');

  // A revision with slashes is one URL segment and a nested file under refs/, as in huggingface_hub.
  const pr = await snapshotDownload('acme/tiny-model', { env, revision: 'refs/pr/1' });
  assert.equal(pr, dev);
  assert.equal(readFileSync(join(repoRoot(home), 'refs', 'refs', 'pr', '1'), 'utf8'), DEV);
  assert.ok(hub.requests.some((request) => request.path === '/api/models/acme/tiny-model/revision/refs%2Fpr%2F1'));

  const unknown = await hubFailure(snapshotDownload('acme/tiny-model', { env, revision: 'nope' }));
  assert.equal(unknown.kind, 'not-found');
  assert.match(unknown.message, /model 'acme\/tiny-model' \(revision nope\): revision not found/);
});

test('allow and ignore patterns select files with fnmatch semantics', async (t) => {
  const hub = await startHub(t);
  const home = freshHome(t);
  const snapshot = await snapshotDownload('acme/tiny-model', {
    env: hubEnv(hub, home),
    allowPatterns: ['*.json', 'nested/'],
    ignorePatterns: ['tokenizer_*'],
  });
  assert.deepEqual(listFiles(snapshot), ['config.json', 'nested/deep/notes.txt', 'tokenizer.json']);
  assert.equal(cdnGets(hub).length, 0, 'no LFS file was selected');

  // A later call with other patterns fills in the same snapshot.
  await snapshotDownload('acme/tiny-model', { env: hubEnv(hub, home), allowPatterns: ['*.safetensors'] });
  assert.deepEqual(listFiles(snapshot), [
    'config.json',
    'consolidated/model.safetensors',
    'model.safetensors',
    'nested/deep/notes.txt',
    'tokenizer.json',
  ]);
});

test('a second download makes one request (the revision API) and downloads nothing', async (t) => {
  const hub = await startHub(t);
  const home = freshHome(t);
  const env = hubEnv(hub, home);
  const first = await snapshotDownload('acme/tiny-model', { env });
  const before = hub.requests.length;
  const second = await snapshotDownload('acme/tiny-model', { env });
  assert.equal(second, first);
  assert.deepEqual(
    hub.requests.slice(before).map((request) => request.path),
    ['/api/models/acme/tiny-model/revision/main'],
  );
});

test('a blob already in the cache is not downloaded again for a new snapshot file', async (t) => {
  const hub = await startHub(t);
  const home = freshHome(t);
  const env = hubEnv(hub, home);
  const snapshot = await snapshotDownload('acme/tiny-model', { env });
  rmSync(join(snapshot, 'model.safetensors'));
  const cdnBefore = cdnGets(hub).length;
  await snapshotDownload('acme/tiny-model', { env });
  assert.equal(cdnGets(hub).length, cdnBefore, 'the blob was linked, not fetched');
  assert.deepEqual(readFileSync(join(snapshot, 'model.safetensors')), WEIGHTS);
});

test('offline mode answers from refs/ without any request, and a miss says what is missing', async (t) => {
  const hub = await startHub(t);
  const home = freshHome(t);
  const online = await snapshotDownload('acme/tiny-model', { env: hubEnv(hub, home) });
  const before = hub.requests.length;

  for (const value of ['1', 'true', 'YES', 'on']) {
    const env = hubEnv(hub, home, { HF_HUB_OFFLINE: value });
    assert.equal(await snapshotDownload('acme/tiny-model', { env }), online);
  }
  assert.equal(await snapshotDownload('acme/tiny-model', { env: hubEnv(hub, home), offline: true }), online);
  assert.equal(
    await snapshotDownload('acme/tiny-model', { env: hubEnv(hub, home), offline: true, revision: MAIN }),
    online,
  );
  assert.equal(hub.requests.length, before, 'offline hits make no request');

  const emptyHome = freshHome(t);
  const miss = await hubFailure(
    snapshotDownload('acme/tiny-model', { env: hubEnv(hub, emptyHome, { HF_HUB_OFFLINE: '1' }) }),
  );
  assert.equal(miss.kind, 'offline-miss');
  assert.equal(
    miss.message,
    `model 'acme/tiny-model' (revision main) is not in the cache at ${join(emptyHome, 'hub', 'models--acme--tiny-model')}, and HF_HUB_OFFLINE=1 forbids downloading`,
  );
  const devMiss = await hubFailure(
    snapshotDownload('acme/tiny-model', { env: hubEnv(hub, home), offline: true, revision: 'dev' }),
  );
  assert.match(devMiss.message, /\(revision dev\) is not in the cache .* the offline option forbids downloading/);
  assert.equal(hub.requests.length, before, 'offline misses make no request');
});

test('the token is sent as a Bearer header, read from HF_TOKEN or the token file, and never shown', async (t) => {
  const hub = await startHub(t);
  const home = freshHome(t);
  await snapshotDownload('acme/gated', { env: hubEnv(hub, home, { HF_TOKEN: TOKEN }) });
  const hubRequests = hub.requests.filter((request) => !request.path.startsWith('/cdn/'));
  assert.ok(hubRequests.length >= 2);
  for (const request of hubRequests) assert.equal(request.authorization, `Bearer ${TOKEN}`);

  const fileHome = freshHome(t);
  writeFileSync(join(fileHome, 'token'), `${TOKEN}\n`);
  const snapshot = await snapshotDownload('acme/gated', { env: hubEnv(hub, fileHome) });
  assert.equal(readFileSync(join(snapshot, 'config.json'), 'utf8'), '{}');
  assert.equal(hub.requests.at(-1)?.authorization, `Bearer ${TOKEN}`);

  const noToken = freshHome(t);
  writeFileSync(join(noToken, 'token'), TOKEN);
  await hubFailure(snapshotDownload('acme/gated', { env: hubEnv(hub, noToken), token: false }));
  assert.equal(hub.requests.at(-1)?.authorization, undefined, 'token: false sends none');

  // A wrong token and an unreachable server: neither error may reveal the token anywhere.
  const wrongToken = 'hf_wrongTOKEN987654';
  const refused = await hubFailure(snapshotDownload('acme/gated', { env: hubEnv(hub, home), token: wrongToken }));
  assert.equal(refused.kind, 'unauthorized');
  assert.match(refused.message, /the token sent has no access/);
  const unreachable = await hubFailure(
    snapshotDownload('acme/gated', {
      env: hubEnv(hub, freshHome(t), { HF_TOKEN: TOKEN }),
      endpoint: 'http://127.0.0.1:9',
    }),
  );
  assert.equal(unreachable.kind, 'network');
  assert.match(
    unreachable.message,
    /could not reach http:\/\/127\.0\.0\.1:9\/api\/models\/acme\/gated\/revision\/main/,
  );
  for (const [error, secret] of [
    [refused, wrongToken],
    [unreachable, TOKEN],
  ] as const) {
    const everything = `${error.message}\n${error.stack ?? ''}\n${inspect(error, { depth: 10 })}\n${JSON.stringify(error)}`;
    assert.ok(!everything.includes(secret), `token absent from: ${error.message}`);
  }
});

test('401 says gated or private and how to authenticate; 404 says what was not found', async (t) => {
  const hub = await startHub(t);
  const home = freshHome(t);
  const env = hubEnv(hub, home);

  const gated = await hubFailure(snapshotDownload('acme/gated', { env }));
  assert.equal(gated.kind, 'unauthorized');
  assert.equal(gated.status, 401);
  assert.equal(gated.repoId, 'acme/gated');
  assert.match(gated.message, /model 'acme\/gated' \(revision main\)/);
  assert.match(gated.message, /gated or private/);
  assert.match(gated.message, /set HF_TOKEN or log in with `huggingface-cli login`/);

  const missingRepo = await hubFailure(snapshotDownload('acme/nothing-here', { env }));
  assert.equal(missingRepo.kind, 'not-found');
  assert.match(missingRepo.message, /model 'acme\/nothing-here' \(revision main\): repository not found \(HTTP 404/);

  const missingFile = await hubFailure(snapshotDownload('acme/broken', { env }));
  assert.equal(missingFile.kind, 'not-found');
  assert.equal(missingFile.file, 'ghost.json');
  assert.match(missingFile.message, /file 'ghost.json' of model 'acme\/broken' \(revision main\): file not found/);
  assert.ok(!existsSync(join(repoRoot(home, 'models--acme--broken'), 'refs', 'main')), 'no ref to a partial snapshot');
});

test('invalid repo ids are rejected before any request', async (t) => {
  const hub = await startHub(t);
  const env = hubEnv(hub, freshHome(t));
  for (const repoId of ['', '../x', 'a/b/c', 'org/../name', 'a--b/c', '-org/name', 'org/name.', 'org/na me', '/abs']) {
    const error = await hubFailure(snapshotDownload(repoId, { env }));
    assert.equal(error.kind, 'invalid-argument', repoId);
    assert.ok(error.message.startsWith(`invalid repo id '${repoId}'`), error.message);
  }
  const badRevision = await hubFailure(snapshotDownload('acme/tiny-model', { env, revision: '../../etc' }));
  assert.match(badRevision.message, /revision '..\/..\/etc' of 'acme\/tiny-model' is not a safe relative path/);
  assert.equal(hub.requests.length, 0);
});

test('an interrupted LFS download leaves no blob, and the retry resumes it', async (t) => {
  const hub = await startHub(t);
  const home = freshHome(t);
  const env = hubEnv(hub, home);
  const oid = sha256(WEIGHTS);
  hub.interruptNext.add(`/cdn/${oid}`);

  const interrupted = await hubFailure(snapshotDownload('acme/tiny-model', { env }));
  assert.equal(interrupted.kind, 'network');
  assert.match(
    interrupted.message,
    /download interrupted after \d+ of 200000 bytes from http:\/\/127\.0\.0\.1:\d+\/cdn\//,
  );
  assert.match(interrupted.message, /model\.safetensors' of model 'acme\/tiny-model' \(revision main\)/);
  const blobs = join(repoRoot(home), 'blobs');
  assert.ok(!existsSync(join(blobs, oid)), 'no blob from a broken download');
  assert.ok(!existsSync(join(repoRoot(home), 'refs', 'main')), 'no ref to an incomplete snapshot');
  const partial = lstatSync(join(blobs, `${oid}.incomplete`)).size;
  assert.ok(partial > 0 && partial < WEIGHTS.length, `partial file kept for resuming (${partial} bytes)`);

  const snapshot = await snapshotDownload('acme/tiny-model', { env });
  assert.deepEqual(readFileSync(join(snapshot, 'model.safetensors')), WEIGHTS);
  assert.deepEqual(readFileSync(join(snapshot, 'consolidated/model.safetensors')), WEIGHTS);
  assert.equal(cdnGets(hub).at(-1)?.range, `bytes=${partial}-`, 'the retry asked only for the missing bytes');
  assert.ok(!existsSync(join(blobs, `${oid}.incomplete`)));
});

test('an interrupted inline download leaves no blob, and the retry downloads it whole', async (t) => {
  const hub = await startHub(t);
  const home = freshHome(t);
  const env = hubEnv(hub, home);
  hub.interruptNext.add(`/acme/tiny-model/resolve/${MAIN}/README.md`);
  const interrupted = await hubFailure(snapshotDownload('acme/tiny-model', { env, allowPatterns: ['README.md'] }));
  assert.equal(interrupted.kind, 'network');
  assert.equal(interrupted.file, 'README.md');
  const blob = gitBlobSha(fileOf(MAIN, 'README.md'));
  assert.ok(!existsSync(join(repoRoot(home), 'blobs', blob)));

  const snapshot = await snapshotDownload('acme/tiny-model', { env, allowPatterns: ['README.md'] });
  assert.deepEqual(readFileSync(join(snapshot, 'README.md')), fileOf(MAIN, 'README.md'));
  assert.deepEqual(readdirSync(join(repoRoot(home), 'blobs')), [blob]);
});

test('LFS bytes that do not hash to their X-Linked-Etag are rejected and not cached', async (t) => {
  const hub = await startHub(t);
  const home = freshHome(t);
  const oid = sha256(WEIGHTS);
  hub.corrupt.add(oid);
  const error = await hubFailure(
    snapshotDownload('acme/tiny-model', { env: hubEnv(hub, home), allowPatterns: ['model.safetensors'] }),
  );
  assert.equal(error.kind, 'integrity');
  assert.match(error.message, /does not match its LFS id/);
  const blobs = readdirSync(join(repoRoot(home), 'blobs'));
  assert.deepEqual(blobs, [], 'neither blob nor .incomplete left');
});

test('dataset repositories use datasets--org--name and the /datasets/ URLs', async (t) => {
  const hub = await startHub(t);
  const home = freshHome(t);
  const snapshot = await snapshotDownload('acme/tiny-data', { env: hubEnv(hub, home), repoType: 'dataset' });
  const root = repoRoot(home, 'datasets--acme--tiny-data');
  assert.equal(snapshot, join(root, 'snapshots', DATA_MAIN));
  assert.equal(readFileSync(join(root, 'refs', 'main'), 'utf8'), DATA_MAIN);
  assert.deepEqual(readFileSync(join(snapshot, 'data/train.jsonl')), fileOf(DATA_MAIN, 'data/train.jsonl'));
  assert.deepEqual(readFileSync(join(snapshot, 'data/train.parquet')), fileOf(DATA_MAIN, 'data/train.parquet'));
  assert.equal(hub.requests[0]?.path, '/api/datasets/acme/tiny-data/revision/main');
  assert.ok(
    resolveGets(hub).every((request) => request.path.startsWith(`/datasets/acme/tiny-data/resolve/${DATA_MAIN}/`)),
  );

  const asModel = await hubFailure(snapshotDownload('acme/tiny-data', { env: hubEnv(hub, home) }));
  assert.equal(asModel.kind, 'not-found');
});

test('HF_HUB_CACHE and the cacheDir option choose the cache folder', async (t) => {
  const hub = await startHub(t);
  const home = freshHome(t);
  const cache = join(freshHome(t), 'elsewhere');
  const viaEnv = await snapshotDownload('acme/gated', {
    env: hubEnv(hub, home, { HF_HUB_CACHE: cache }),
    token: TOKEN,
  });
  assert.equal(viaEnv, join(cache, 'models--acme--gated', 'snapshots', GATED_MAIN));
  const option = join(freshHome(t), 'option');
  const viaOption = await snapshotDownload('acme/gated', { env: hubEnv(hub, home), token: TOKEN, cacheDir: option });
  assert.equal(viaOption, join(option, 'models--acme--gated', 'snapshots', GATED_MAIN));
});

test('when the hub cannot be reached, a cached snapshot of the revision is returned', async (t) => {
  const hub = await startHub(t);
  const home = freshHome(t);
  const online = await snapshotDownload('acme/tiny-model', { env: hubEnv(hub, home) });
  const env = { HF_HOME: home, HF_ENDPOINT: 'http://127.0.0.1:9' };
  assert.equal(await snapshotDownload('acme/tiny-model', { env }), online);
  const uncached = await hubFailure(snapshotDownload('acme/tiny-model', { env, revision: 'dev' }));
  assert.equal(uncached.kind, 'network');
});

test('onProgress reports each file up to its total', async (t) => {
  const hub = await startHub(t);
  const home = freshHome(t);
  const events: DownloadProgress[] = [];
  await snapshotDownload('acme/tiny-model', {
    env: hubEnv(hub, home),
    allowPatterns: ['model.safetensors', 'config.json'],
    onProgress: (progress) => events.push(progress),
  });
  const last = (file: string): DownloadProgress | undefined => events.filter((event) => event.file === file).at(-1);
  assert.deepEqual(last('model.safetensors'), { file: 'model.safetensors', bytes: 200_000, total: 200_000 });
  assert.deepEqual(last('config.json'), { file: 'config.json', bytes: 19, total: 19 });
  const weightEvents = events.filter((event) => event.file === 'model.safetensors');
  assert.ok(weightEvents.every((event, i) => i === 0 || event.bytes >= (weightEvents[i - 1]?.bytes ?? 0)));
});

test('resolveModelPath returns local directories as they are and downloads repo ids with model patterns', async (t) => {
  const hub = await startHub(t);
  const home = freshHome(t);
  const env = hubEnv(hub, home);

  const local = join(freshHome(t), 'my-model');
  mkdirSync(local);
  assert.equal(await resolveModelPath(local, { env }), local);
  assert.equal(await resolveModelPath(relative(process.cwd(), local), { env }), local);
  const tildeHome = freshHome(t);
  mkdirSync(join(tildeHome, 'models', 'm'), { recursive: true });
  assert.equal(
    await resolveModelPath('~/models/m', { env: { ...env, HOME: tildeHome } }),
    join(tildeHome, 'models', 'm'),
  );
  assert.equal(hub.requests.length, 0);

  const snapshot = await resolveModelPath('acme/tiny-model', { env });
  assert.equal(snapshot, join(repoRoot(home), 'snapshots', MAIN));
  assert.deepEqual(listFiles(snapshot), [
    'chat_template.jinja',
    'config.json',
    'consolidated/model.safetensors',
    'model.safetensors',
    'nested/deep/notes.txt',
    'tokenizer.json',
    'tokenizer_config.json',
  ]);
  const offline = await resolveModelPath('acme/tiny-model', { env: { ...env, HF_HUB_OFFLINE: '1' } });
  assert.equal(offline, snapshot);

  const before = hub.requests.length;
  for (const missing of ['./no-such-model', '/no/such/model', '~/no-such-model']) {
    const error = await hubFailure(resolveModelPath(missing, { env }));
    assert.match(error.message, /^no such model directory: /, missing);
  }
  const notRepo = await hubFailure(resolveModelPath('a/b/c', { env }));
  assert.match(notRepo.message, /neither an existing directory .* nor a hub repo id: invalid repo id 'a\/b\/c'/);
  const file = join(local, 'config.json');
  writeFileSync(file, '{}');
  assert.match((await hubFailure(resolveModelPath(file, { env }))).message, /is a file, not a model directory/);
  assert.equal(hub.requests.length, before, 'none of these asked the hub');
});

test('relative redirects (renamed repositories) are followed for the revision API and for files', async (t) => {
  const hub = await startHub(t);
  const home = freshHome(t);
  const snapshot = await snapshotDownload('acme/old-name', {
    env: hubEnv(hub, home),
    allowPatterns: ['config.json', 'model.safetensors'],
  });
  assert.equal(snapshot, join(home, 'hub', 'models--acme--old-name', 'snapshots', MAIN));
  assert.deepEqual(readFileSync(join(snapshot, 'model.safetensors')), WEIGHTS);
  assert.deepEqual(readFileSync(join(snapshot, 'config.json')), fileOf(MAIN, 'config.json'));
});

test('concurrent downloads of one repository in one process agree and download each blob once', async (t) => {
  const hub = await startHub(t);
  const home = freshHome(t);
  const env = hubEnv(hub, home);
  const snapshots = await Promise.all([
    snapshotDownload('acme/tiny-model', { env }),
    snapshotDownload('acme/tiny-model', { env }),
    resolveModelPath('acme/tiny-model', { env }),
  ]);
  assert.deepEqual(new Set(snapshots), new Set([join(repoRoot(home), 'snapshots', MAIN)]));
  for (const file of MODEL_FILES) assert.deepEqual(readFileSync(join(snapshots[0] as string, file.path)), file.content);
  assert.equal(cdnGets(hub).filter((request) => request.path === `/cdn/${sha256(WEIGHTS)}`).length, 1);
  assert.equal(readFileSync(join(repoRoot(home), 'refs', 'main'), 'utf8'), MAIN);
});
