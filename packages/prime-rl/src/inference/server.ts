// The OpenAI-compatible HTTP front end: routes, request checking, streaming (server-sent events),
// client disconnects, admin routes and Prometheus metrics. Generation runs in the engine workers
// (engine-pool.ts); this process only tokenizes prompts and shapes responses, so it stays responsive
// while the workers compute.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { timingSafeEqual } from 'node:crypto';
import type { GenerationResult } from '@prime-rl/lm';
import { AdminError, type Engines } from './engine-pool.js';
import { ApiError, badRequest } from './openai/errors.js';
import {
  parseChatRequest,
  parseCompletionRequest,
  type GenerationJob,
  type ServingContext,
} from './openai/requests.js';
import {
  TokenTexts,
  chatLogprobs,
  completionLogprobs,
  nowSeconds,
  responseId,
  toolCallsDelta,
  tokensOf,
  usage,
  type TokenOut,
} from './openai/responses.js';
import { parseHermesToolCalls, streamableContentLength } from './tool-calls.js';
import { ServerMetrics } from './metrics.js';
import type { PauseMode } from './protocol.js';

/** Largest request body accepted. */
const MAX_BODY_BYTES = 32 * 1024 * 1024;

export interface ServerOptions {
  pool: Engines;
  context: ServingContext;
  /** Where the model was loaded from (shown by /v1/models). */
  modelRoot: string;
  /** When set, every route but /health needs `Authorization: Bearer <key>`. */
  apiKey?: string | null;
  log?: (level: 'debug' | 'info' | 'warn', message: string) => void;
}

type Route = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void>;

export class InferenceServer {
  readonly metrics = new ServerMetrics();
  private readonly http: Server;
  private readonly texts: TokenTexts;
  private readonly routes: Record<string, Record<string, Route>>;

  constructor(private readonly options: ServerOptions) {
    this.texts = new TokenTexts(options.context.tokenizer);
    this.routes = {
      '/health': { GET: async (_q, res) => json(res, 200, { status: 'ok' }) },
      '/liveness': { GET: async (_q, res) => json(res, 200, { status: 'ok' }) },
      '/v1/models': { GET: async (_q, res) => json(res, 200, this.models()) },
      '/metrics': {
        GET: async (_q, res) => {
          res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
          res.end(this.metrics.render(this.options.pool.stats(), this.options.pool.size, this.options.pool.inFlight));
        },
      },
      '/v1/chat/completions': { POST: (q, res) => this.generation(q, res, 'chat') },
      '/v1/completions': { POST: (q, res) => this.generation(q, res, 'completion') },
      '/update_weights': {
        POST: async (q, res) => {
          const body = await readJson(q);
          const dir = (body as { weight_dir?: unknown }).weight_dir;
          if (typeof dir !== 'string' || dir.length === 0)
            throw badRequest('weight_dir must be the path of a Hugging Face model directory', 'weight_dir');
          await this.admin(() => this.options.pool.admin('update_weights', { weightDir: dir }));
          this.log('info', `weights updated from ${dir}`);
          json(res, 200, { status: 'ok' });
        },
      },
      '/reload_weights': {
        POST: async (q, res) => {
          await readJson(q, true);
          await this.admin(() => this.options.pool.admin('reload_weights'));
          this.log('info', 'weights reset to the base model');
          json(res, 200, { status: 'ok' });
        },
      },
      '/pause': {
        POST: async (_q, res, url) => {
          const mode = url.searchParams.get('mode') ?? 'abort';
          if (mode !== 'keep' && mode !== 'wait' && mode !== 'abort')
            throw badRequest(`mode must be keep, wait or abort, got '${mode}'`, 'mode');
          await this.admin(() => this.options.pool.admin('pause', { mode: mode as PauseMode }));
          this.paused = true;
          json(res, 200, { status: 'paused' });
        },
      },
      '/resume': {
        POST: async (_q, res) => {
          await this.admin(() => this.options.pool.admin('resume'));
          this.paused = false;
          json(res, 200, { status: 'resumed' });
        },
      },
      '/is_paused': { GET: async (_q, res) => json(res, 200, { is_paused: this.paused }) },
    };
    this.http = createServer((req, res) => void this.handle(req, res));
    // Generation on a CPU can take minutes; the client decides when to give up.
    this.http.requestTimeout = 0;
    this.http.keepAliveTimeout = 65_000;
  }

  private paused = false;

  listen(port: number, host: string): Promise<AddressInfo> {
    return new Promise((resolve, reject) => {
      this.http.once('error', reject);
      this.http.listen(port, host, () => {
        this.http.off('error', reject);
        resolve(this.http.address() as AddressInfo);
      });
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.http.close(() => resolve());
      this.http.closeAllConnections();
    });
  }

  private log(level: 'debug' | 'info' | 'warn', message: string): void {
    this.options.log?.(level, message);
  }

  private models() {
    const { context, modelRoot } = this.options;
    return {
      object: 'list',
      data: [
        {
          id: context.servedModelName,
          object: 'model',
          created: nowSeconds(),
          owned_by: 'prime-rl',
          root: modelRoot,
          parent: null,
          max_model_len: context.maxModelLength,
        },
      ],
    };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = url.pathname.replace(/\/+$/, '') || '/';
    const started = Date.now();
    try {
      const methods = this.routes[path];
      if (!methods) throw new ApiError(404, `no route ${req.method} ${path}`);
      const route = methods[req.method ?? 'GET'];
      if (!route)
        throw new ApiError(
          405,
          `${path} accepts ${Object.keys(methods).join(', ')}, not ${req.method}`,
          null,
          'invalid_request_error',
        );
      if (path !== '/health') this.authorize(req);
      await route(req, res, url);
      this.metrics.request(path, res.statusCode);
    } catch (error) {
      const api =
        error instanceof ApiError
          ? error
          : new ApiError(500, `internal error: ${error instanceof Error ? error.message : String(error)}`);
      if (api.status >= 500) this.log('warn', `${req.method} ${path}: ${api.message}`);
      else this.log('debug', `${req.method} ${path}: ${api.status} ${api.message}`);
      this.metrics.request(path, api.status);
      if (!res.headersSent) json(res, api.status, api.body());
      else if (!res.writableEnded) {
        // Mid-stream: the status line is gone, so report the error as an event and end the stream.
        res.write(`data: ${JSON.stringify(api.body())}\n\n`);
        res.end();
      }
    } finally {
      this.log('debug', `${req.method} ${path} ${res.statusCode} ${Date.now() - started} ms`);
    }
  }

  private authorize(req: IncomingMessage): void {
    const key = this.options.apiKey;
    if (!key) return;
    const header = req.headers.authorization ?? '';
    const given = Buffer.from(header.startsWith('Bearer ') ? header.slice(7) : '');
    const expected = Buffer.from(key);
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      throw new ApiError(
        401,
        'a valid API key is required (Authorization: Bearer <key>)',
        null,
        'authentication_error',
      );
  }

  private async admin(run: () => Promise<void>): Promise<void> {
    try {
      await run();
    } catch (error) {
      if (error instanceof AdminError) throw new ApiError(error.status, error.message);
      throw error;
    }
  }

  /** Chat or completion: parse, run n × prompts sequences, answer whole or streamed. */
  private async generation(req: IncomingMessage, res: ServerResponse, kind: 'chat' | 'completion'): Promise<void> {
    const body = await readJson(req);
    const job =
      kind === 'chat'
        ? parseChatRequest(body, this.options.context)
        : parseCompletionRequest(body, this.options.context);
    const run = new JobRun(job, this.options.pool, this.texts, res, this.metrics);
    await run.done;
  }
}

/** One request's sequences: submitted together, aborted together when the client goes away. */
class JobRun {
  readonly done: Promise<void>;
  private readonly id: string;
  private readonly created = nowSeconds();
  private readonly aborts: (() => void)[] = [];
  private readonly results: (GenerationResult | null)[];
  private readonly streamed: { text: string; sent: number; started: boolean }[];
  private finished = 0;
  private closed = false;

  constructor(
    private readonly job: GenerationJob,
    pool: Engines,
    private readonly texts: TokenTexts,
    private readonly res: ServerResponse,
    private readonly metrics: ServerMetrics,
  ) {
    this.id = responseId(job.kind === 'chat' ? 'chatcmpl' : 'cmpl');
    const total = job.prompts.length * job.n;
    this.results = new Array(total).fill(null);
    this.streamed = Array.from({ length: total }, () => ({ text: '', sent: 0, started: false }));
    this.done = new Promise<void>((resolve, reject) => {
      res.on('close', () => {
        if (this.finished < total) {
          this.closed = true;
          this.metrics.disconnects++;
          for (const abort of this.aborts) abort();
          resolve();
        }
      });
      if (job.stream) {
        res.writeHead(200, {
          'content-type': 'text/event-stream',
          'cache-control': 'no-cache',
          connection: 'keep-alive',
        });
        res.flushHeaders();
      }
      job.prompts.forEach((prompt, p) => {
        for (let i = 0; i < job.n; i++) {
          const index = p * job.n + i;
          // n > 1 with a seed: each choice gets its own stream (seed + i) so choices differ yet repeat.
          const params =
            job.params.seed !== undefined && job.params.seed !== null && i > 0
              ? { ...job.params, seed: job.params.seed + i }
              : job.params;
          this.aborts.push(
            pool.submit(prompt, params, {
              onTokens: (tokens) => {
                if (job.stream && !this.closed) this.streamTokens(index, tokens);
              },
              onFinish: (result) => {
                this.results[index] = result;
                this.finished++;
                this.metrics.finished(result);
                if (this.closed) return;
                if (job.stream) this.streamFinish(index, result);
                if (this.finished === total) {
                  if (job.stream) this.endStream();
                  else json(res, 200, this.job.kind === 'chat' ? this.chatBody() : this.completionBody());
                  resolve();
                }
              },
              onError: (message) => {
                if (this.closed) return;
                this.closed = true;
                for (const abort of this.aborts) abort();
                reject(badRequest(message));
              },
            }),
          );
        }
      });
    });
  }

  private chatBody() {
    const job = this.job;
    const choices = this.results.map((r, index) => {
      const result = r!;
      const parsed = job.parseToolCalls ? parseHermesToolCalls(result.text) : { content: result.text, toolCalls: [] };
      const toolCalled = parsed.toolCalls.length > 0;
      return {
        index,
        message: {
          role: 'assistant',
          content: toolCalled ? parsed.content : result.text,
          reasoning_content: null,
          tool_calls: toolCalled ? parsed.toolCalls : [],
        },
        logprobs: job.wantLogprobs ? { content: chatLogprobs(tokensOf(result), job, this.texts) } : null,
        finish_reason: toolCalled && result.finishReason === 'stop' ? 'tool_calls' : result.finishReason,
        stop_reason: result.stopReason,
        ...(job.returnTokenIds ? { token_ids: result.tokenIds } : {}),
      };
    });
    return {
      id: this.id,
      object: 'chat.completion',
      created: this.created,
      model: job.model,
      choices,
      usage: this.usage(),
      ...(job.returnTokenIds ? { prompt_token_ids: job.prompts[0] } : {}),
    };
  }

  private completionBody() {
    const job = this.job;
    const choices = this.results.map((r, index) => {
      const result = r!;
      const p = Math.floor(index / job.n);
      const prefix = job.echo ? job.promptTexts[p]! : '';
      return {
        index,
        text: prefix + result.text,
        logprobs: job.wantLogprobs ? completionLogprobs(tokensOf(result), job, this.texts, prefix.length) : null,
        finish_reason: result.finishReason,
        stop_reason: result.stopReason,
        ...(job.returnTokenIds ? { prompt_token_ids: job.prompts[p], token_ids: result.tokenIds } : {}),
      };
    });
    return {
      id: this.id,
      object: 'text_completion',
      created: this.created,
      model: job.model,
      choices,
      usage: this.usage(),
    };
  }

  private usage() {
    const prompt = this.job.prompts.reduce((n, p) => n + p.length, 0) * this.job.n;
    const completion = this.results.reduce((n, r) => n + (r?.tokenIds.length ?? 0), 0);
    return usage(prompt, completion);
  }

  private send(chunk: unknown): void {
    this.res.write(`data: ${JSON.stringify(chunk)}\n\n`);
  }

  private chunk(choices: unknown[], extra: Record<string, unknown> = {}) {
    return {
      id: this.id,
      object: this.job.kind === 'chat' ? 'chat.completion.chunk' : 'text_completion',
      created: this.created,
      model: this.job.model,
      choices,
      ...extra,
    };
  }

  private streamTokens(index: number, tokens: (TokenOut & { text: string })[]): void {
    const job = this.job;
    const state = this.streamed[index]!;
    for (const t of tokens) state.text += t.text;
    const limit = job.parseToolCalls ? streamableContentLength(state.text) : state.text.length;
    const delta = state.text.slice(state.sent, Math.max(limit, state.sent));
    state.sent = Math.max(limit, state.sent);
    const outs: TokenOut[] = tokens.map((t) => ({ tokenId: t.tokenId, logprob: t.logprob, top: t.top }));
    if (job.kind === 'chat') {
      const first = !state.started;
      state.started = true;
      this.send(
        this.chunk(
          [
            {
              index,
              delta: first ? { role: 'assistant', content: delta } : { content: delta },
              logprobs: job.wantLogprobs ? { content: chatLogprobs(outs, job, this.texts) } : null,
              finish_reason: null,
              ...(job.returnTokenIds ? { token_ids: outs.map((o) => o.tokenId) } : {}),
            },
          ],
          first && job.returnTokenIds ? { prompt_token_ids: job.prompts[0] } : {},
        ),
      );
    } else {
      const p = Math.floor(index / job.n);
      const prefix = job.echo && !state.started ? job.promptTexts[p]! : '';
      state.started = true;
      this.send(
        this.chunk([
          {
            index,
            text: prefix + delta,
            logprobs: job.wantLogprobs ? completionLogprobs(outs, job, this.texts, state.sent - delta.length) : null,
            finish_reason: null,
            ...(job.returnTokenIds ? { token_ids: outs.map((o) => o.tokenId) } : {}),
          },
        ]),
      );
    }
  }

  private streamFinish(index: number, result: GenerationResult): void {
    const job = this.job;
    const state = this.streamed[index]!;
    // The final text may hold a tail the detokenizer or stop matcher released only at the end.
    const rest = result.text.slice(state.sent);
    state.sent = result.text.length;
    if (job.kind === 'chat') {
      const parsed = job.parseToolCalls ? parseHermesToolCalls(result.text) : null;
      const toolCalled = parsed !== null && parsed.toolCalls.length > 0;
      const delta: Record<string, unknown> = {};
      if (!state.started) delta.role = 'assistant';
      if (toolCalled) delta.tool_calls = toolCallsDelta(parsed.toolCalls);
      else if (rest.length > 0 || !state.started) delta.content = rest;
      state.started = true;
      this.send(
        this.chunk([
          {
            index,
            delta,
            logprobs: null,
            finish_reason: toolCalled && result.finishReason === 'stop' ? 'tool_calls' : result.finishReason,
            stop_reason: result.stopReason,
          },
        ]),
      );
    } else {
      this.send(
        this.chunk([
          { index, text: rest, logprobs: null, finish_reason: result.finishReason, stop_reason: result.stopReason },
        ]),
      );
    }
  }

  private endStream(): void {
    if (this.job.includeUsage) this.send(this.chunk([], { usage: this.usage() }));
    this.res.write('data: [DONE]\n\n');
    this.res.end();
  }
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Reads a JSON body; `allowEmpty` treats an empty body as {}. */
async function readJson(req: IncomingMessage, allowEmpty = false): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new ApiError(413, `the request body is larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim().length === 0) {
    if (allowEmpty) return {};
    throw badRequest('the request body is empty; expected a JSON object');
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw badRequest(`the request body is not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
}
