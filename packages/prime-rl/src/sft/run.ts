// The `sft` trainer (spec config.md §3.7, rl.md §7.7): supervised fine-tuning of a Hugging Face
// model on chat data, with packing, gradient accumulation, checkpoints and resume, metrics to
// metrics.jsonl and the final weights in Hugging Face layout under weights/step_N.
import { copyFile, mkdir, readdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import * as T from '@prime-rl/tensor';
import type { Tensor } from '@prime-rl/tensor';
import {
  Tokenizer,
  attachLora,
  loadPretrained,
  saveAdapter,
  savePretrained,
  snapshotDownload,
  tokenizeConversation,
  type DecoderModel,
} from '@prime-rl/lm';
import type { SftConfig } from '../config/sft.js';
import { createSftDataLoader, type MicroBatch, type SftDataLoaderState } from './data/index.js';
import { buildOptimizer, buildScheduler } from '../train/optimizer.js';
import {
  loadCheckpoint,
  pruneCheckpoints,
  resolveResumeStep,
  saveCheckpoint,
  type Progress,
} from '../train/checkpoint.js';
import { MetricsFile, type Metrics } from '../train/metrics.js';
import { Logger } from '../train/logger.js';
import { resolveModelDir } from '../model-dir.js';
import { formatStepLine, summarize } from '../train/report.js';

export interface SftRunOptions {
  /** Base for relative paths in the config (default: the working directory). */
  cwd?: string;
  /** Terminal stream for progress lines (default stderr). */
  stream?: NodeJS.WritableStream;
}

export interface SftResult {
  steps: number;
  /** Directory of the final weights (Hugging Face layout). */
  weightsDir: string | null;
  /** Mean loss of the last step. */
  finalLoss: number;
  /** Tokens per second of every step run in this process. */
  throughput: number[];
}

/** Loss over one micro-batch, summed over trained tokens and divided by the step's trained-token count. */
function microBatchLoss(model: DecoderModel, mb: MicroBatch, stepLossTokens: number, recompute: number | false) {
  const shape = [mb.rows, mb.seqLen];
  const ids = T.tensor(mb.inputIds, shape);
  const hidden = model.hidden(ids, {
    positions: T.tensor(mb.positions, shape),
    segments: T.tensor(mb.segments, shape),
    recompute,
  });
  const { logprobs } = T.tokenLogprobs(hidden, model.lmHead, T.tensor(mb.targets, shape));
  const masked = T.mul(logprobs, T.tensor(mb.lossMask, shape));
  return T.affine(T.sum(masked), -1 / Math.max(1, stepLossTokens));
}

export async function runSft(config: SftConfig, options: SftRunOptions = {}): Promise<SftResult> {
  const cwd = options.cwd ?? process.cwd();
  const outputDir = resolve(cwd, config.output_dir);
  await mkdir(outputDir, { recursive: true });
  const log = new Logger({
    name: 'sft',
    level: config.log.level,
    dir: config.log.file ? join(outputDir, 'logs') : null,
    ...(options.stream ? { stream: options.stream } : {}),
  });

  // ---- model and tokenizer
  const modelName = config.model.name;
  const modelDir = await resolveModelDir(modelName, cwd);
  const { model, hfConfig, generationConfig } = await loadPretrained(modelDir, {
    numLayers: config.model.debug.num_layers,
    randomInit: config.model.debug.random_init,
  });
  const tokenizer = config.data.type === 'sft' ? await Tokenizer.fromDir(modelDir) : null;
  const loraSettings = config.model.experimental.lora;
  const lora = loraSettings
    ? attachLora(model, {
        rank: loraSettings.rank,
        alpha: loraSettings.alpha,
        dropout: loraSettings.dropout,
        targetModules: loraSettings.target_modules,
        modulesToSave: loraSettings.modules_to_save,
      })
    : null;
  const trainable = lora ? lora.params : new Map<string, Tensor>([...model.params].filter(([, p]) => p.requiresGrad));
  const parameterCount = [...trainable.values()].reduce((n, p) => n + p.size, 0);
  log.info(
    `Model ${modelName} (${model.config.architecture}, ${model.config.numLayers} layers, ` +
      `${(model.parameterCount() / 1e6).toFixed(2)}M parameters, ${(parameterCount / 1e6).toFixed(2)}M trainable)` +
      (config.model.debug.random_init ? ' with random weights' : '') +
      (lora
        ? `, LoRA rank ${lora.config.rank} alpha ${lora.config.alpha} on ${lora.modules.targets.length} modules`
        : ''),
  );

  // ---- optimizer, schedule, resume
  const maxSteps = config.max_steps;
  const optimizer = buildOptimizer(config.optim, trainable);
  const scheduler = buildScheduler(config.scheduler, config.optim.lr, maxSteps);
  const progress: Progress = { step: 0, totalTokens: 0, totalSamples: 0 };
  let loaderState: SftDataLoaderState | null = null;
  const ckpt = config.ckpt;
  if (ckpt && ckpt.resume_step !== null) {
    const step = await resolveResumeStep(outputDir, ckpt.resume_step);
    const { state } = await loadCheckpoint(outputDir, step, trainable, optimizer);
    if (!ckpt.skip_progress) Object.assign(progress, state.progress);
    else progress.step = step;
    if (!ckpt.skip_scheduler) scheduler.loadStateDict(state.scheduler);
    if (!ckpt.skip_dataloader) loaderState = state.dataloader as SftDataLoaderState;
    log.info(`Resumed from ${join(outputDir, 'checkpoints', `step_${step}`)} (next step ${progress.step + 1})`);
  }

  // ---- data
  const loader = await createSftDataLoader(config.data, {
    ...(tokenizer
      ? {
          tokenizer: (messages, mask, templateOptions) =>
            tokenizeConversation(tokenizer, messages, mask, templateOptions),
        }
      : {}),
    vocabSize: model.config.vocabSize,
    padTokenId: 0,
    cwd,
    state: loaderState,
    // Without max_steps, one pass over the data; with it, epochs repeat until max_steps.
    ...(maxSteps === null ? { maxEpochs: 1 } : {}),
    resolveDatasetDir: (name) => snapshotDownload(name, { repoType: 'dataset' }),
  });
  for (const source of loader.sources)
    log.info(`Data ${source.label}: ${source.rows} rows from ${source.files.join(', ')}`);
  log.info(
    `Training ${maxSteps === null ? 'until the data is exhausted' : `to step ${maxSteps}`}: ` +
      `${config.data.batch_size} rows × ${config.data.seq_len} tokens per step, ` +
      `micro-batches of ${config.data.micro_batch_size}, ${config.optim.type} lr ${config.optim.lr}, ` +
      `${T.backendName()} backend, ${T.kernels().threads()} threads`,
  );

  const metrics = new MetricsFile(join(outputDir, 'metrics.jsonl'));
  const recompute = config.model.ac === null ? false : config.model.ac.freq;
  const throughput: number[] = [];
  let finalLoss = NaN;
  const saveState = () => ({ progress: { ...progress }, scheduler: scheduler.stateDict(), dataloader: loader.state() });

  while (maxSteps === null || progress.step < maxSteps) {
    const started = performance.now();
    const batch = loader.next();
    if (batch.microBatches.length === 0) break; // data exhausted
    const step = progress.step + 1;
    const lossTokens = batch.stats.lossTokens;
    const lr = scheduler.lr();
    optimizer.lr = lr;
    let lossSum = 0;
    let nanCount = 0;
    for (const mb of batch.microBatches) {
      const value = T.tidy(() => {
        const loss = microBatchLoss(model, mb, lossTokens, recompute);
        const v = loss.item();
        if (Number.isFinite(v)) loss.backward();
        return v;
      });
      if (Number.isFinite(value)) lossSum += value;
      else nanCount++;
    }
    const gradNorm =
      config.optim.max_norm > 0
        ? T.clipGradNorm(trainable.values(), config.optim.max_norm)
        : T.gradNorm(trainable.values());
    optimizer.step();
    optimizer.zeroGrad();
    scheduler.step();
    const seconds = (performance.now() - started) / 1000;
    progress.step = step;
    progress.totalTokens += batch.stats.tokens;
    progress.totalSamples += batch.stats.samples;
    const tokensPerSecond = batch.stats.tokens / seconds;
    throughput.push(tokensPerSecond);
    finalLoss = lossSum;
    const stepMetrics: Metrics = {
      'loss/mean': lossSum,
      'loss/perplexity': Math.exp(Math.min(lossSum, 20)),
      'loss/nan_count': nanCount,
      'optim/lr': lr,
      'optim/grad_norm': gradNorm,
      'perf/throughput': tokensPerSecond,
      'time/step': seconds,
      'progress/epoch': batch.epoch,
      'progress/samples': batch.stats.samples,
      'progress/tokens': batch.stats.tokens,
      'progress/loss_tokens': lossTokens,
      'progress/total_samples': progress.totalSamples,
      'progress/total_tokens': progress.totalTokens,
      'data/truncated_samples': batch.stats.truncatedSamples,
      'data/dropped_samples': batch.stats.droppedSamples,
    };
    for (const [label, source] of Object.entries(batch.stats.sources)) {
      stepMetrics[`progress/${label}/ratio_samples`] = source.samples / Math.max(1, batch.stats.samples);
      stepMetrics[`progress/${label}/ratio_tokens`] = source.tokens / Math.max(1, batch.stats.tokens);
    }
    await metrics.write(step, stepMetrics);
    log.info(
      formatStepLine(step, maxSteps, {
        seconds,
        loss: lossSum,
        gradNorm,
        lr,
        tokensPerSecond,
        extra: `Epoch ${batch.epoch}`,
      }),
    );

    const isLast = maxSteps !== null && step >= maxSteps;
    if (ckpt && ckpt.interval !== null && step % ckpt.interval === 0 && !isLast) {
      const dir = await saveCheckpoint(outputDir, step, trainable, optimizer, saveState());
      await pruneCheckpoints(outputDir, ckpt.keep_last, ckpt.keep_interval);
      log.info(`Saved checkpoint ${dir}`);
    }
    if (config.weights.interval !== null && step % config.weights.interval === 0 && !isLast) await saveWeights(step);
  }

  async function saveWeights(step: number): Promise<string> {
    const dir = join(outputDir, 'weights', `step_${step}`);
    // With LoRA the published weights are the base with the adapters merged in (what inference serves).
    const merged = lora?.mergedParams();
    try {
      await savePretrained(model, dir, {
        baseConfig: hfConfig,
        generationConfig,
        ...(merged ? { params: merged } : {}),
      });
    } finally {
      if (merged) lora!.disposeMergedParams(merged);
    }
    if (lora && config.weights.save_adapter_separately)
      await saveAdapter(lora, join(dir, 'adapter'), { baseModelName: modelName });
    if (tokenizer) await tokenizer.save(dir);
    else await copyTokenizerFiles(modelDir, dir);
    // STABLE marks a complete directory (readers wait for it; spec rl.md §9.1).
    await writeFile(join(dir, 'STABLE'), '');
    log.info(`Saved weights ${dir}`);
    return dir;
  }

  let weightsDir: string | null = null;
  if (progress.step > 0 && !config.bench) {
    if (ckpt) {
      const dir = await saveCheckpoint(outputDir, progress.step, trainable, optimizer, saveState());
      await pruneCheckpoints(outputDir, ckpt.keep_last, ckpt.keep_interval);
      log.info(`Saved checkpoint ${dir}`);
    }
    weightsDir = await saveWeights(progress.step);
  }
  if (config.bench) {
    const measured = throughput.slice(1);
    log.info(`Benchmark (${measured.length} steps after 1 warm-up): throughput ${summarize(measured)} tokens/s`);
  }
  model.dispose();
  return { steps: progress.step, weightsDir, finalLoss, throughput };
}

/** Copies tokenizer files from the model directory when the run had no tokenizer loaded (fake data). */
async function copyTokenizerFiles(from: string, to: string): Promise<void> {
  for (const name of await readdir(from))
    if (/^(tokenizer.*\.json|special_tokens_map\.json|chat_template\.jinja|vocab\.json|merges\.txt)$/.test(name))
      await copyFile(join(from, name), join(to, name));
}
