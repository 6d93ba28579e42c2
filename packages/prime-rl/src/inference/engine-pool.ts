// The front end's side of the engine workers: forks one child process per data-parallel rank, routes
// each request to the rank with the fewest requests in flight, relays token events back to the
// request's handlers, and broadcasts admin commands (weight updates, pause/resume) to every rank.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { GenerationResult, SamplingParams, TokenLogprob } from '@prime-rl/lm';
import type { AdminOp, FromWorker, PauseMode, ToWorker, WorkerInit, WorkerInfo, WorkerStats } from './protocol.js';

export interface RequestHandlers {
  onTokens(tokens: { tokenId: number; logprob: number; top: TokenLogprob[] | null; text: string }[]): void;
  onFinish(result: GenerationResult): void;
  /** The worker refused the request (a bad request that got past the front end's checks). */
  onError(message: string): void;
}

export class AdminError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** What the HTTP front end needs from its engines (EnginePool; a scripted stand-in in unit tests). */
export interface Engines {
  readonly size: number;
  readonly inFlight: number;
  stats(): WorkerStats[];
  submit(promptIds: number[], params: Partial<SamplingParams>, handlers: RequestHandlers): () => void;
  admin(op: AdminOp, args?: { weightDir?: string | null; mode?: PauseMode }): Promise<void>;
}

interface Rank {
  child: ChildProcess;
  info: WorkerInfo | null;
  stats: WorkerStats;
  inFlight: number;
}

const WORKER_SCRIPT = fileURLToPath(new URL('./worker.js', import.meta.url));

export class EnginePool implements Engines {
  private readonly ranks: Rank[] = [];
  private readonly requests = new Map<number, { rank: number; handlers: RequestHandlers }>();
  private readonly admins = new Map<number, { remaining: number; errors: AdminError[]; done: () => void }>();
  private nextId = 1;
  private closing = false;

  private constructor(private readonly onFatal: (message: string) => void) {}

  /** Forks `dp` workers and resolves once every one has loaded its model. */
  static async start(inits: WorkerInit[], onFatal: (message: string) => void): Promise<EnginePool> {
    const pool = new EnginePool(onFatal);
    await Promise.all(inits.map((init) => pool.spawn(init)));
    return pool;
  }

  private spawn(init: WorkerInit): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = fork(WORKER_SCRIPT, [], {
        serialization: 'advanced',
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      const rank: Rank = {
        child,
        info: null,
        stats: {
          running: 0,
          waiting: 0,
          cacheUsage: 0,
          promptTokens: 0,
          generationTokens: 0,
          steps: 0,
          residentBytes: 0,
          liveTensors: 0,
          pooledBytes: 0,
        },
        inFlight: 0,
      };
      this.ranks[init.rank] = rank;
      child.on('message', (msg: FromWorker) => {
        if (msg.t === 'ready') {
          rank.info = msg.info;
          resolve();
        } else if (msg.t === 'fatal') {
          if (rank.info === null) reject(new Error(`engine worker ${init.rank}: ${msg.error}`));
          else this.onFatal(`engine worker ${init.rank} failed: ${msg.error}`);
        } else this.onWorkerMessage(init.rank, msg);
      });
      child.on('exit', (code, signal) => {
        if (this.closing) return;
        const why = `engine worker ${init.rank} exited (${signal ?? `code ${code}`})`;
        if (rank.info === null) reject(new Error(why));
        else this.onFatal(why);
      });
      child.send({ t: 'init', init } satisfies ToWorker);
    });
  }

  get size(): number {
    return this.ranks.length;
  }

  info(rank = 0): WorkerInfo {
    return this.ranks[rank]!.info!;
  }

  /** Requests submitted and not yet finished, all ranks. */
  get inFlight(): number {
    return this.requests.size;
  }

  stats(): WorkerStats[] {
    return this.ranks.map((r) => r.stats);
  }

  /** Queues a request on the least busy rank; returns a function that aborts it. */
  submit(promptIds: number[], params: Partial<SamplingParams>, handlers: RequestHandlers): () => void {
    let best = 0;
    for (let r = 1; r < this.ranks.length; r++) if (this.ranks[r]!.inFlight < this.ranks[best]!.inFlight) best = r;
    const id = this.nextId++;
    this.requests.set(id, { rank: best, handlers });
    this.ranks[best]!.inFlight++;
    this.send(best, { t: 'submit', id, promptIds, params });
    return () => {
      if (this.requests.has(id)) this.send(best, { t: 'abort', id });
    };
  }

  /** Runs an admin command on every rank; rejects with the first rank's error. */
  admin(op: AdminOp, args: { weightDir?: string | null; mode?: PauseMode } = {}): Promise<void> {
    const rid = this.nextId++;
    return new Promise<void>((resolve, reject) => {
      this.admins.set(rid, {
        remaining: this.ranks.length,
        errors: [],
        done: () => {
          const entry = this.admins.get(rid)!;
          this.admins.delete(rid);
          if (entry.errors.length > 0) reject(entry.errors[0]);
          else resolve();
        },
      });
      for (let r = 0; r < this.ranks.length; r++) this.send(r, { t: 'admin', rid, op, ...args });
    });
  }

  private onWorkerMessage(rank: number, msg: FromWorker): void {
    if (msg.t === 'events') {
      this.ranks[rank]!.stats = msg.stats;
      for (const ev of msg.events) {
        const req = this.requests.get(ev.id);
        if (!req) continue;
        if ('tokens' in ev)
          req.handlers.onTokens(ev.tokens.map(([tokenId, logprob, top, text]) => ({ tokenId, logprob, top, text })));
        else {
          this.requests.delete(ev.id);
          this.ranks[rank]!.inFlight--;
          if ('finish' in ev) req.handlers.onFinish(ev.finish);
          else req.handlers.onError(ev.error);
        }
      }
    } else if (msg.t === 'admin_done') {
      const entry = this.admins.get(msg.rid);
      if (!entry) return;
      if (!msg.ok) entry.errors.push(new AdminError(msg.status, msg.error));
      if (--entry.remaining === 0) entry.done();
    }
  }

  private send(rank: number, msg: ToWorker): void {
    const child = this.ranks[rank]!.child;
    if (child.connected) child.send(msg);
  }

  /** Stops the workers (in-flight requests are dropped). */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(
      this.ranks.map(
        (r) =>
          new Promise<void>((resolve) => {
            if (r.child.exitCode !== null || r.child.signalCode !== null) return resolve();
            const timer = setTimeout(() => r.child.kill('SIGKILL'), 5000);
            r.child.once('exit', () => {
              clearTimeout(timer);
              resolve();
            });
            if (r.child.connected) r.child.send({ t: 'shutdown' } satisfies ToWorker);
            else r.child.kill('SIGTERM');
          }),
      ),
    );
  }
}
