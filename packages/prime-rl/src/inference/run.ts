// The `inference` entrypoint (spec config.md §3.5, rl.md §14): an OpenAI-compatible server for one
// model on our own engine. `parallel.dp` engine workers (child processes) share one port; the KV cache
// of each is sized from `gpu_memory_utilization` read as a fraction of this machine's memory.
import { availableParallelism, totalmem } from 'node:os';
import { isIP } from 'node:net';
import { join, resolve } from 'node:path';
import { Tokenizer, decoderParameterShapes, fromHfConfig, readJsonFile } from '@prime-rl/lm';
import type { InferenceConfig } from '../config/inference.js';
import { Logger } from '../train/logger.js';
import { resolveModelDir } from '../model-dir.js';
import { EnginePool } from './engine-pool.js';
import { InferenceServer } from './server.js';
import type { WorkerInit } from './protocol.js';

/** Engine settings that `vllm_extra` may carry (vLLM's names); anything else is refused. */
export const ENGINE_EXTRA_KEYS = {
  max_num_seqs: 'sequences decoded at once per worker (KV-cache slots), default 256',
  max_num_batched_tokens: 'most tokens in one engine step (prefill budget), default 2048',
  num_threads: 'CPU threads per engine worker, default: the CPU count / parallel.dp',
} as const;

/** Environment variables read for the API key (the first one set wins); never written anywhere. */
export const API_KEY_VARS = ['INFERENCE_API_KEY', 'VLLM_API_KEY'] as const;

export interface InferenceRunOptions {
  cwd?: string;
  /** Terminal stream for log lines (default stderr). */
  stream?: NodeJS.WritableStream;
  /** Overrides server.port (0 picks a free port; for tests). */
  port?: number;
  /** Environment to read the API key from (default process.env). */
  env?: NodeJS.ProcessEnv;
}

export interface RunningInference {
  url: string;
  server: InferenceServer;
  pool: EnginePool;
  /** Resolves when the server stopped (close() or a worker failure); the value is the exit code. */
  stopped: Promise<number>;
  close(): Promise<void>;
}

export class InferenceConfigError extends Error {}

function positiveInt(extra: Record<string, unknown>, key: keyof typeof ENGINE_EXTRA_KEYS, fallback: number): number {
  const v = extra[key];
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1)
    throw new InferenceConfigError(`vllm_extra.${key} must be a positive integer, got ${JSON.stringify(v)}`);
  return v;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

export async function startInference(
  config: InferenceConfig,
  options: InferenceRunOptions = {},
): Promise<RunningInference> {
  const cwd = options.cwd ?? process.cwd();
  const env = options.env ?? process.env;
  const outputDir = resolve(cwd, config.output_dir);
  const logger = new Logger({
    name: 'inference',
    level: 'info',
    dir: join(outputDir, 'logs'),
    ...(options.stream ? { stream: options.stream } : {}),
  });

  // ---- settings this engine can honour
  const extra = config.vllm_extra as Record<string, unknown>;
  const unknown = Object.keys(extra).filter((k) => !(k in ENGINE_EXTRA_KEYS));
  if (unknown.length > 0)
    throw new InferenceConfigError(
      `vllm_extra: unknown engine argument(s) ${unknown.join(', ')}; this engine understands ` +
        Object.entries(ENGINE_EXTRA_KEYS)
          .map(([k, v]) => `${k} (${v})`)
          .join(', '),
    );
  if (config.model.dtype === 'float16' || config.model.dtype === 'bfloat16')
    throw new InferenceConfigError(
      `model.dtype = ${config.model.dtype}: the CPU engine computes in float32; use 'auto' or 'float32'`,
    );
  if (config.model.enable_auto_tool_choice && config.model.tool_call_parser !== 'hermes')
    throw new InferenceConfigError(
      `model.tool_call_parser = '${config.model.tool_call_parser}': this server parses 'hermes' tool calls only`,
    );
  const host = config.server.host ?? '127.0.0.1';
  const apiKey = API_KEY_VARS.map((v) => env[v]).find((v) => v !== undefined && v.length > 0) ?? null;
  if (!LOOPBACK.has(host) && apiKey === null)
    throw new InferenceConfigError(
      `server.host = ${host} makes the server reachable from other machines; set an API key in ${API_KEY_VARS[0]} first`,
    );
  if (host !== 'localhost' && isIP(host) === 0 && host !== '0.0.0.0')
    throw new InferenceConfigError(`server.host = ${host} is not an IP address`);

  // ---- model
  const modelDir = await resolveModelDir(config.model.name, cwd);
  const modelConfig = fromHfConfig(await readJsonFile(join(modelDir, 'config.json')), join(modelDir, 'config.json'));
  const tokenizer = await Tokenizer.fromDir(modelDir);
  const maxPositions = modelConfig.maxPositionEmbeddings;
  const maxModelLength = config.model.max_model_len ?? maxPositions;
  if (maxModelLength > maxPositions)
    throw new InferenceConfigError(
      `model.max_model_len = ${maxModelLength} exceeds the model's max_position_embeddings (${maxPositions})`,
    );

  // ---- KV-cache budget per worker: gpu_memory_utilization × memory / dp, less the weights.
  const dp = config.parallel.dp;
  const c = modelConfig;
  const bytesPerToken = 2 * c.numLayers * c.numKvHeads * c.headDim * 4;
  const bytesPerSlot = bytesPerToken * maxModelLength;
  let weightElements = 0;
  for (const shape of decoderParameterShapes(c).values()) weightElements += shape.reduce((n, d) => n * d, 1);
  const budget = (config.gpu_memory_utilization * totalmem()) / dp - weightElements * 4;
  const fitting = Math.floor(budget / bytesPerSlot);
  const maxSeqs = Math.min(positiveInt(extra, 'max_num_seqs', 256), fitting);
  if (maxSeqs < 1)
    throw new InferenceConfigError(
      `gpu_memory_utilization = ${config.gpu_memory_utilization} leaves ${(budget / 2 ** 20).toFixed(0)} MiB per worker ` +
        `for the KV cache, less than one sequence of model.max_model_len = ${maxModelLength} tokens ` +
        `(${(bytesPerSlot / 2 ** 20).toFixed(1)} MiB); raise gpu_memory_utilization or lower model.max_model_len`,
    );
  const maxBatchedTokens = positiveInt(extra, 'max_num_batched_tokens', 2048);
  const threads = positiveInt(extra, 'num_threads', Math.max(1, Math.floor(availableParallelism() / dp)));

  const inits: WorkerInit[] = Array.from({ length: dp }, (_, rank) => ({
    rank,
    modelDir,
    maxModelLength,
    maxSeqs,
    maxBatchedTokens,
    threads,
    seed: config.seed,
  }));
  let stop: (code: number) => void = () => {};
  const stopped = new Promise<number>((r) => (stop = r));
  let server: InferenceServer | null = null;
  const pool = await EnginePool.start(inits, (message) => {
    logger.error(message);
    void (server?.close() ?? Promise.resolve()).then(() => stop(1));
  });
  server = new InferenceServer({
    pool,
    modelRoot: modelDir,
    apiKey,
    context: {
      servedModelName: config.model.name,
      tokenizer,
      maxModelLength,
      vocabSize: modelConfig.vocabSize,
      enableAutoToolChoice: config.model.enable_auto_tool_choice,
      toolCallParser: config.model.tool_call_parser,
    },
    log: (level, message) => logger[level](message),
  });
  let address;
  try {
    address = await server.listen(options.port ?? config.server.port, host);
  } catch (error) {
    await pool.close();
    const why = error instanceof Error ? error.message : String(error);
    throw new InferenceConfigError(`cannot listen on ${host}:${options.port ?? config.server.port}: ${why}`);
  }
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${shownHost}:${address.port}`;
  const info = pool.info();
  logger.info(
    `serving ${config.model.name} on ${url}/v1 (dp ${dp}, ${info.maxSeqs} sequences × ${maxModelLength} tokens, ` +
      `KV cache ${(info.cacheBytes / 2 ** 20).toFixed(0)} MiB and ${threads} threads per worker` +
      `${apiKey ? ', API key required' : ''})`,
  );
  let closing: Promise<void> | null = null;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      await server!.close();
      await pool.close();
      logger.info('stopped');
      stop(0);
    })());
  return { url, server, pool, stopped, close };
}

/** Runs the server until SIGINT/SIGTERM or a worker failure; returns the exit code. */
export async function runInference(config: InferenceConfig, options: InferenceRunOptions = {}): Promise<number> {
  let running: RunningInference;
  try {
    running = await startInference(config, options);
  } catch (error) {
    if (error instanceof InferenceConfigError) {
      process.stderr.write(`inference: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
  const onSignal = (): void => void running.close();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const code = await running.stopped;
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  return code;
}
