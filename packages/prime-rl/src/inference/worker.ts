// One engine worker: a child process that holds a model and its KV cache and runs the continuous-
// batching loop. It takes requests and admin commands from the front end between steps and sends
// each step's tokens back in one message.
//
// Weight updates never mix policies within a sequence: a pending update stops admitting, lets the
// running sequences finish on the old weights, swaps, then admits again. Pause modes follow vLLM:
// `keep` freezes running sequences (their KV stays), `wait` lets them finish, `abort` ends them.
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import * as T from '@prime-rl/tensor';
import { Engine, Tokenizer, loadPretrained, type DecoderModel } from '@prime-rl/lm';
import type { AdminOp, FromWorker, PauseMode, ToWorker, TokenTuple, WorkerEvent, WorkerInit } from './protocol.js';

/** Free tensor buffers a worker keeps for reuse: a few steps' activations, which scale with the model. */
const poolBytesFor = (weightBytes: number): number => Math.max(64 * 2 ** 20, 4 * weightBytes);

interface PendingAdmin {
  rid: number;
  op: AdminOp;
  weightDir: string | null;
}

class Worker {
  private engine!: Engine;
  private tokenizer!: Tokenizer;
  private readonly byFrontId = new Map<number, number>();
  private events: WorkerEvent[] = [];
  private tokenBuffers = new Map<number, TokenTuple[]>();
  private paused: PauseMode | null = null;
  private readonly admin: PendingAdmin[] = [];
  private wake: (() => void) | null = null;
  private stopping = false;
  private promptTokens = 0;
  private generationTokens = 0;
  private steps = 0;

  constructor(private readonly init: WorkerInit) {}

  async start(): Promise<void> {
    const { init } = this;
    T.useBackend('cpu');
    T.setThreads(init.threads);
    if (init.seed !== null) T.manualSeed(init.seed + init.rank);
    const { model } = await loadPretrained(init.modelDir);
    // Every step has another token count, so buffer lengths keep changing: keep the pool small.
    T.pool.setLimit(poolBytesFor(model.parameterCount() * 4));
    this.tokenizer = await Tokenizer.fromDir(init.modelDir);
    this.engine = new Engine(model, {
      tokenizer: this.tokenizer,
      maxSeqs: init.maxSeqs,
      maxModelLength: init.maxModelLength,
      maxBatchedTokens: init.maxBatchedTokens,
    });
    send({
      t: 'ready',
      info: {
        maxSeqs: init.maxSeqs,
        cacheBytes: this.engine.cacheBytes,
        threads: init.threads,
        weightBytes: model.parameterCount() * 4,
      },
    });
  }

  onMessage(msg: ToWorker): void {
    switch (msg.t) {
      case 'submit': {
        try {
          const frontId = msg.id;
          const engineId = this.engine.submit(
            { promptIds: msg.promptIds, params: msg.params },
            {
              onToken: (e) => {
                let buf = this.tokenBuffers.get(frontId);
                if (!buf) this.tokenBuffers.set(frontId, (buf = []));
                buf.push([e.tokenId, e.logprob, e.topLogprobs, e.text]);
              },
              onFinish: (result) => {
                this.flushTokens(frontId);
                this.byFrontId.delete(frontId);
                this.events.push({ id: frontId, finish: result });
              },
            },
          );
          this.byFrontId.set(frontId, engineId);
          this.promptTokens += msg.promptIds.length;
        } catch (error) {
          this.events.push({ id: msg.id, error: error instanceof Error ? error.message : String(error) });
        }
        break;
      }
      case 'abort': {
        const engineId = this.byFrontId.get(msg.id);
        if (engineId !== undefined) this.engine.abort(engineId);
        break;
      }
      case 'admin':
        this.onAdmin(msg.rid, msg.op, msg.weightDir ?? null, msg.mode ?? 'abort');
        break;
      case 'shutdown':
        this.stopping = true;
        break;
      case 'init':
        break;
    }
    this.flush();
    this.wake?.();
  }

  private onAdmin(rid: number, op: AdminOp, weightDir: string | null, mode: PauseMode): void {
    if (op === 'resume') {
      this.paused = null;
      send({ t: 'admin_done', rid, ok: true });
      return;
    }
    if (op === 'pause') {
      this.paused = mode;
      if (mode === 'abort') this.engine.abortAll();
      // `wait` answers once the running sequences are done (see loop); the others at once.
      if (mode === 'wait') this.admin.push({ rid, op, weightDir: null });
      else send({ t: 'admin_done', rid, ok: true });
      return;
    }
    if (this.paused === 'keep' && this.engine.numRunning > 0) {
      send({
        t: 'admin_done',
        rid,
        ok: false,
        status: 409,
        error:
          `${this.engine.numRunning} sequences are frozen by pause (mode=keep) with keys and values from the ` +
          'current weights; swapping now would mix two policies in one sequence. Resume first, or pause with ' +
          'mode=wait or mode=abort.',
      });
      return;
    }
    this.admin.push({ rid, op, weightDir });
  }

  /** Runs pending admin work that needs an idle engine. */
  private async runAdmin(): Promise<void> {
    while (this.admin.length > 0 && this.engine.numRunning === 0) {
      const job = this.admin.shift()!;
      if (job.op === 'pause') {
        send({ t: 'admin_done', rid: job.rid, ok: true });
        continue;
      }
      const dir = job.op === 'reload_weights' ? this.init.modelDir : job.weightDir!;
      try {
        const old = this.engine.model;
        const next = await loadWeights(dir);
        try {
          this.engine.setModel(next);
        } catch (error) {
          next.dispose();
          throw error;
        }
        old.dispose();
        send({ t: 'admin_done', rid: job.rid, ok: true, detail: dir });
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        send({ t: 'admin_done', rid: job.rid, ok: false, status: 400, error: message });
      }
    }
  }

  async loop(): Promise<void> {
    while (!this.stopping) {
      const updating = this.admin.length > 0;
      const canAdmit = this.paused === null && !updating;
      const canDecode = this.paused !== 'keep';
      const work = (canDecode && this.engine.numRunning > 0) || (canAdmit && this.engine.numWaiting > 0);
      if (work) {
        try {
          const report = this.engine.step({ admit: canAdmit });
          this.steps++;
          this.generationTokens += report.decodeTokens + report.admitted;
        } catch (error) {
          // An engine failure is a bug, not a bad request: report it and stop, the front end exits.
          send({ t: 'fatal', error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
          process.exit(1);
        }
        this.flush();
        await new Promise<void>((resolve) => setImmediate(resolve));
        continue;
      }
      if (this.admin.length > 0 && this.engine.numRunning === 0) {
        await this.runAdmin();
        this.flush();
        continue;
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = null;
    }
    this.engine.dispose();
  }

  private flushTokens(id: number): void {
    const buf = this.tokenBuffers.get(id);
    if (buf && buf.length > 0) this.events.push({ id, tokens: buf });
    this.tokenBuffers.delete(id);
  }

  private flush(): void {
    for (const id of [...this.tokenBuffers.keys()]) this.flushTokens(id);
    if (this.events.length === 0) return;
    const events = this.events;
    this.events = [];
    send({
      t: 'events',
      events,
      stats: {
        running: this.engine.numRunning,
        waiting: this.engine.numWaiting,
        cacheUsage: this.engine.cacheUsage,
        promptTokens: this.promptTokens,
        generationTokens: this.generationTokens,
        steps: this.steps,
        residentBytes: process.memoryUsage.rss(),
        liveTensors: T.liveTensors().tensors,
        pooledBytes: T.pool.bytesPooled,
      },
    });
  }
}

async function loadWeights(dir: string): Promise<DecoderModel> {
  const isDir = await stat(dir).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!isDir) throw new Error(`weight_dir ${dir} is not a directory`);
  const hasConfig = await stat(join(dir, 'config.json')).then(
    () => true,
    () => false,
  );
  if (!hasConfig) throw new Error(`weight_dir ${dir} has no config.json (expected a Hugging Face model directory)`);
  return (await loadPretrained(dir)).model;
}

function send(msg: FromWorker): void {
  process.send?.(msg);
}

let worker: Worker | null = null;
process.on('message', (msg: ToWorker) => {
  if (msg.t === 'init') {
    worker = new Worker(msg.init);
    worker.start().then(
      () => worker!.loop().then(() => process.exit(0)),
      (error: unknown) => {
        send({ t: 'fatal', error: error instanceof Error ? error.message : String(error) });
        process.exit(1);
      },
    );
    return;
  }
  worker?.onMessage(msg);
});
// The front end is gone: nothing left to serve.
process.on('disconnect', () => process.exit(0));
// Ctrl-C reaches the whole process group: the front end decides when workers stop (it sends shutdown).
process.on('SIGINT', () => {});
