// The llama.cpp anchor: node-llama-cpp (prebuilt CPU binaries from npm) on the f32 GGUF our exporter
// wrote, in its own Node process (llamacpp-worker.ts), with llama.cpp's defaults (f16 KV cache, flash
// attention where it chooses to). Two things about node-llama-cpp on a small (2-core) machine, measured:
// - with libuv's default four pool threads, consecutive decodes run on different pool threads, whose ggml
//   workers then spin at barriers side by side; the worker process therefore runs with UV_THREADPOOL_SIZE=1.
// - llama.cpp starts fresh ggml worker threads for every decode call (node-llama-cpp attaches no persistent
//   thread pool); with two threads on two cores they often end up spinning on one core, and a decode step
//   of the tiny model takes 10–20 ms instead of 0.3 ms. index.ts therefore also runs llama.cpp on one
//   thread and reports the better configuration.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { JsonLinesChild } from './child.js';
import type { BenchModel } from './models.js';
import type { WorkerRun, WorkerSetup } from './llamacpp-worker.js';
import { figureOf, type Runner, type Workload } from './workload.js';

export const NODE_LLAMA_CPP_VERSION = '3.22.1';
export const LLAMA_CPP_INSTALL = `npm i --no-save --omit=optional node-llama-cpp@${NODE_LLAMA_CPP_VERSION} @node-llama-cpp/linux-x64@${NODE_LLAMA_CPP_VERSION}`;

const WORKER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'llamacpp-worker.js');

/** A worker process with the model loaded and one sequence per prompt, or why llama.cpp cannot run. */
export async function openLlamaCppRunner(
  bench: BenchModel,
  w: Workload,
  threads: number,
): Promise<{ name: string; details: string; runner: Runner } | { missing: string }> {
  const child = new JsonLinesChild('the llama.cpp worker', process.execPath, [WORKER], {
    ...process.env,
    UV_THREADPOOL_SIZE: '1',
  });
  const setup: WorkerSetup = {
    gguf: bench.gguf,
    threads,
    batch: w.batch,
    // Per sequence (llama.cpp pads it to a multiple of 256).
    contextSize: Math.ceil((w.promptLength + w.maxNew) / 256) * 256,
    // Every prompt prefilled in one batch, as ours does.
    batchSize: Math.max(512, w.batch * w.promptLength),
  };
  let ready: { name: string } | { missing: string };
  try {
    ready = await child.request<{ name: string } | { missing: string }>(setup);
  } catch (error) {
    await child.close();
    return { missing: (error as Error).message };
  }
  if ('missing' in ready) {
    await child.close();
    return ready;
  }
  return {
    name: ready.name,
    details: `node-llama-cpp ${NODE_LLAMA_CPP_VERSION}, CPU`,
    runner: {
      async run(prompts, maxNew) {
        const run = await child.request<WorkerRun>({ prompts, maxNew });
        return { figure: figureOf(w, run, maxNew), tokens: run.tokens };
      },
      close: () => child.close(),
    },
  };
}
