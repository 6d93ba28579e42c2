// The llama.cpp anchor's own process (started by llamacpp.ts with UV_THREADPOOL_SIZE=1): node-llama-cpp on
// a GGUF file, one context with one sequence per prompt. JSON lines on stdin:
//   {"gguf", "threads", "batch", "contextSize", "batchSize"}  -> {"name"} or {"missing"}
//   {"prompts": [[ids]...], "maxNew": N}                         -> {"tokenTimes", "start", "tokens"}
// Each sequence is fed its prompt's token ids and decodes greedily (EOS ignored); node-llama-cpp evaluates
// the queued tokens of all sequences in one batch per step.
import { createInterface } from 'node:readline';
import { LLAMA_CPP_INSTALL } from './llamacpp.js';

// The few parts of node-llama-cpp's API used here (it is an optional install, so no compile-time types).
interface Sequence {
  evaluate(tokens: number[], options: { temperature: number; yieldEogToken: boolean }): AsyncGenerator<number>;
  clearHistory(): Promise<void>;
}
interface Context {
  getSequence(): Sequence;
  dispose(): Promise<void>;
}
interface Model {
  createContext(options: Record<string, unknown>): Promise<Context>;
  dispose(): Promise<void>;
}
interface Llama {
  loadModel(options: { modelPath: string; gpuLayers?: number }): Promise<Model>;
  llamaCppRelease: { repo: string; release: string };
}

export interface WorkerSetup {
  gguf: string;
  threads: number;
  batch: number;
  /** Per sequence. */
  contextSize: number;
  batchSize: number;
}

export interface WorkerRun {
  start: number;
  tokenTimes: number[][];
  tokens: number[][];
}

async function setUp(setup: WorkerSetup): Promise<{ name: string; sequences: Sequence[] } | { missing: string }> {
  const specifier = 'node-llama-cpp';
  let mod: { getLlama(options: Record<string, unknown>): Promise<Llama> };
  try {
    mod = (await import(specifier)) as typeof mod;
  } catch {
    return { missing: `not installed (${LLAMA_CPP_INSTALL})` };
  }
  let llama: Llama;
  try {
    llama = await mod.getLlama({
      gpu: false,
      build: 'never',
      logLevel: 'error',
      progressLogs: false,
      maxThreads: setup.threads,
    });
  } catch (error) {
    return { missing: `node-llama-cpp has no working CPU binary here: ${(error as Error).message}` };
  }
  const model = await llama.loadModel({ modelPath: setup.gguf, gpuLayers: 0 });
  const context = await model.createContext({
    sequences: setup.batch,
    contextSize: setup.contextSize,
    batchSize: setup.batchSize,
    threads: { ideal: setup.threads, min: setup.threads },
  });
  const name = `llama.cpp ${llama.llamaCppRelease.release}`;
  return { name, sequences: Array.from({ length: setup.batch }, () => context.getSequence()) };
}

async function run(sequences: Sequence[], prompts: number[][], maxNew: number): Promise<WorkerRun> {
  await Promise.all(sequences.map((s) => s.clearHistory()));
  const tokenTimes: number[][] = prompts.map(() => []);
  const tokens: number[][] = prompts.map(() => []);
  const start = performance.now();
  await Promise.all(
    prompts.map(async (prompt, i) => {
      for await (const token of sequences[i]!.evaluate(prompt, { temperature: 0, yieldEogToken: true })) {
        tokenTimes[i]!.push(performance.now());
        tokens[i]!.push(token);
        if (tokens[i]!.length >= maxNew) break;
      }
    }),
  );
  return { start, tokenTimes, tokens };
}

async function main(): Promise<void> {
  const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  const first = await lines.next();
  if (first.done) return;
  const ready = await setUp(JSON.parse(first.value) as WorkerSetup);
  process.stdout.write(`${JSON.stringify('missing' in ready ? ready : { name: ready.name })}\n`);
  if ('missing' in ready) return;
  for (let line = await lines.next(); !line.done; line = await lines.next()) {
    const request = JSON.parse(line.value) as { prompts: number[][]; maxNew: number };
    process.stdout.write(`${JSON.stringify(await run(ready.sequences, request.prompts, request.maxNew))}\n`);
  }
  // node-llama-cpp's native handles would keep the process alive.
  process.exit(0);
}

await main();
