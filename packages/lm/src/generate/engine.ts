// A step-driven generation engine with continuous batching: requests join a FIFO queue, are admitted
// into KV-cache slots as slots free up, and every call to `step()` runs ONE forward that prefills the
// newly admitted prompts and decodes one token for every running sequence. Requests join and leave
// between steps; an abort frees the slot at once. Each sequence has its own sampler (and seed), stop
// conditions and incremental detokenizer, so what else is in the batch changes its numbers at most by
// float rounding (a different matrix shape can sum in a different order).
//
// The engine is synchronous and single-threaded: a server drives it from its own loop and calls
// `submit`/`abort` between steps. `generate()` is the same engine run to completion.
import type { Tensor } from '@prime-rl/tensor';
import type { DecoderModel } from '../model/decoder.js';
import type { DecoderConfig } from '../model/config.js';
import { KVCache } from '../model/kv-cache.js';
import type { Tokenizer } from '../tokenizer/tokenizer.js';
import { IncrementalDecoder } from '../tokenizer/incremental-decoder.js';
import { Sampler, type TokenLogprob } from './sampler.js';
import { resolveSamplingParams, type SamplingParams } from './sampling-params.js';
import {
  StopMatcher,
  checkLength,
  checkStopToken,
  stopStringFinish,
  stopStringsAllowed,
  type Finish,
  type FinishReason,
  type StopReason,
} from './stop.js';

export interface GenerationRequest {
  promptIds: readonly number[];
  params?: Partial<SamplingParams>;
}

export interface GenerationResult {
  promptIds: number[];
  /** Generated token ids (including a final EOS or stop token). */
  tokenIds: number[];
  /** log p(token) after temperature, one per generated token. */
  logprobs: number[];
  /** With params.logprobs: the most likely tokens at each position. */
  topLogprobs: TokenLogprob[][] | null;
  /** Decoded output (empty without a tokenizer); cut before a matched stop string. */
  text: string;
  finishReason: FinishReason;
  stopReason: StopReason;
}

/** One generated token, as it is produced. */
export interface TokenEvent {
  tokenId: number;
  logprob: number;
  topLogprobs: TokenLogprob[] | null;
  /** Text that became final with this token (often '' while a character or stop string is pending). */
  text: string;
}

/** Where a request's output goes. `onFinish` is called exactly once, also for an abort. */
export interface SequenceSink {
  onToken?(event: TokenEvent): void;
  onFinish(result: GenerationResult): void;
}

export interface EngineOptions {
  /** Needed for text output and stop strings. */
  tokenizer?: Tokenizer;
  /** Sequences held at once: the KV-cache slots. */
  maxSeqs: number;
  /** Longest prompt + output (default: the model's max position embeddings). */
  maxModelLength?: number;
  /** Tokens each slot can hold (default maxModelLength); requests that could outgrow it are refused. */
  slotCapacity?: number;
  /** Tokens that end generation (default: the tokenizer's EOS). */
  eosTokenIds?: readonly number[];
  /**
   * Most tokens in one forward (vLLM's max_num_batched_tokens): prompts are admitted while their
   * tokens plus one per running sequence fit; a longer prompt is admitted alone. Default 2048.
   */
  maxBatchedTokens?: number;
}

export interface StepOptions {
  /** Admit waiting requests (false: only advance the running ones, e.g. while draining). Default true. */
  admit?: boolean;
}

/** What one step did. */
export interface StepReport {
  prefillTokens: number;
  decodeTokens: number;
  admitted: number;
  finished: number;
}

interface Waiting {
  id: number;
  params: SamplingParams;
  prompt: number[];
  sink: SequenceSink;
}

interface Running extends Waiting {
  slot: number;
  tokens: number[];
  logprobs: number[];
  top: TokenLogprob[][] | null;
  sampler: Sampler;
  decoder: IncrementalDecoder | null;
  stops: StopMatcher | null;
  text: string;
}

export class Engine {
  readonly maxModelLength: number;
  readonly maxSeqs: number;
  readonly slotCapacity: number;
  readonly maxBatchedTokens: number;
  private modelRef: DecoderModel;
  private readonly tokenizer: Tokenizer | undefined;
  private readonly eos: readonly number[];
  private readonly cache: KVCache;
  private readonly free: number[];
  private waiting: Waiting[] = [];
  private running: Running[] = [];
  private nextId = 0;
  private disposed = false;
  /** Set during step(): aborts asked for from a sink callback wait until the step is over. */
  private stepping = false;
  private deferredAborts: number[] = [];
  /** Ids of the sequences in the current step's forward. */
  private stepBatch = new Set<number>();

  constructor(model: DecoderModel, options: EngineOptions) {
    this.modelRef = model;
    this.tokenizer = options.tokenizer;
    this.maxModelLength = options.maxModelLength ?? model.config.maxPositionEmbeddings;
    this.slotCapacity = options.slotCapacity ?? this.maxModelLength;
    this.maxBatchedTokens = options.maxBatchedTokens ?? 2048;
    this.maxSeqs = options.maxSeqs;
    for (const [name, v] of [
      ['maxSeqs', this.maxSeqs],
      ['maxModelLength', this.maxModelLength],
      ['slotCapacity', this.slotCapacity],
      ['maxBatchedTokens', this.maxBatchedTokens],
    ] as const)
      if (!Number.isSafeInteger(v) || v < 1)
        throw new RangeError(`Engine: ${name} must be a positive integer, got ${v}`);
    this.eos = options.eosTokenIds ?? (this.tokenizer ? [this.tokenizer.eosTokenId] : []);
    this.cache = KVCache.forModel(model.config, this.maxSeqs, Math.min(this.slotCapacity, this.maxModelLength));
    this.free = Array.from({ length: this.maxSeqs }, (_, i) => this.maxSeqs - 1 - i);
  }

  get model(): DecoderModel {
    return this.modelRef;
  }

  /** Requests queued for a slot. */
  get numWaiting(): number {
    return this.waiting.length;
  }

  /** Sequences holding a slot. */
  get numRunning(): number {
    return this.running.length;
  }

  get hasWork(): boolean {
    return this.running.length > 0 || this.waiting.length > 0;
  }

  /** Bytes of the KV cache. */
  get cacheBytes(): number {
    return this.cache.bytes;
  }

  /** Fraction of the KV cache's token positions holding a running sequence's tokens. */
  get cacheUsage(): number {
    let used = 0;
    for (const s of this.running) used += s.prompt.length + s.tokens.length;
    return used / (this.maxSeqs * this.cache.capacity);
  }

  /**
   * Checks a request and queues it; returns its id (for `abort`). Throws a RangeError naming the
   * problem (empty prompt, ids outside the vocabulary, too long, bad sampling values); nothing is
   * queued then.
   */
  submit(request: GenerationRequest, sink: SequenceSink): number {
    if (this.disposed) throw new Error('Engine: used after dispose()');
    const params = resolveSamplingParams(request.params ?? {});
    const prompt = Array.from(request.promptIds);
    const vocab = this.modelRef.config.vocabSize;
    if (prompt.length === 0) throw new RangeError('the prompt is empty');
    for (const id of prompt)
      if (!Number.isInteger(id) || id < 0 || id >= vocab)
        throw new RangeError(`prompt token ${id} is outside the vocabulary [0, ${vocab})`);
    const limit = Math.min(this.maxModelLength, this.cache.capacity);
    if (prompt.length >= limit)
      throw new RangeError(
        `the prompt has ${prompt.length} tokens, leaving no room below the maximum model length ${limit}`,
      );
    if (params.stop.length > 0 && !this.tokenizer)
      throw new Error('stop strings need a tokenizer to decode the output');
    const id = this.nextId++;
    this.waiting.push({ id, params, prompt, sink });
    return id;
  }

  /** Ends a request now, waiting or running; its sink gets finish reason 'abort'. False if unknown. */
  abort(id: number): boolean {
    if (this.stepping) {
      if (!this.stepBatch.has(id) && !this.waiting.some((r) => r.id === id)) return false;
      this.deferredAborts.push(id);
      return true;
    }
    const w = this.waiting.findIndex((r) => r.id === id);
    if (w >= 0) {
      const [r] = this.waiting.splice(w, 1);
      r!.sink.onFinish(emptyResult(r!.prompt, 'abort'));
      return true;
    }
    const i = this.running.findIndex((r) => r.id === id);
    if (i < 0) return false;
    const [seq] = this.running.splice(i, 1);
    this.finish(seq!, { finishReason: 'abort', stopReason: null });
    return true;
  }

  /** Aborts everything, waiting and running. */
  abortAll(): number {
    const ids = [...this.running.map((r) => r.id), ...this.waiting.map((r) => r.id)];
    for (const id of ids) this.abort(id);
    return ids.length;
  }

  /**
   * Serves `model` from the next step on. Only allowed with no running sequence (their cached keys
   * and values came from the old weights); the new model must have the same shapes.
   */
  setModel(model: DecoderModel): void {
    if (this.running.length > 0)
      throw new Error(`Engine.setModel: ${this.running.length} sequences are running on the current weights`);
    assertSameShapes(this.modelRef.config, model.config);
    this.modelRef = model;
  }

  /** Admits waiting requests, runs one forward, samples one token per sequence. */
  step(options: StepOptions = {}): StepReport {
    if (this.disposed) throw new Error('Engine: used after dispose()');
    this.stepping = true;
    try {
      return this.runStep(options);
    } finally {
      this.stepping = false;
      this.stepBatch.clear();
      const aborts = this.deferredAborts;
      this.deferredAborts = [];
      for (const id of aborts) this.abort(id);
    }
  }

  private runStep(options: StepOptions): StepReport {
    const admitted: Running[] = [];
    let budget = this.maxBatchedTokens - this.running.length;
    if (options.admit !== false)
      while (this.free.length > 0 && this.waiting.length > 0) {
        const next = this.waiting[0]!;
        const alone = admitted.length === 0 && this.running.length === 0;
        if (next.prompt.length > budget && !alone) break;
        this.waiting.shift();
        budget -= next.prompt.length;
        admitted.push(this.start(next));
      }
    const report: StepReport = {
      prefillTokens: 0,
      decodeTokens: this.running.length,
      admitted: admitted.length,
      finished: 0,
    };
    const batch = [...admitted, ...this.running];
    if (batch.length === 0) return report;
    this.stepBatch = new Set(batch.map((s) => s.id));

    // One forward: every admitted prompt in full, then the last token of every running sequence.
    const ids: number[] = [];
    const slots: number[] = [];
    const positions: number[] = [];
    const rows: number[] = [];
    for (const seq of admitted) {
      seq.prompt.forEach((id, t) => {
        ids.push(id);
        slots.push(seq.slot);
        positions.push(t);
      });
      rows.push(ids.length - 1);
      report.prefillTokens += seq.prompt.length;
    }
    for (const seq of this.running) {
      ids.push(seq.tokens[seq.tokens.length - 1]!);
      slots.push(seq.slot);
      positions.push(seq.prompt.length + seq.tokens.length - 1);
      rows.push(ids.length - 1);
    }
    let logits: Tensor | null = null;
    let values: Float32Array;
    try {
      logits = this.modelRef.forwardCached(
        { ids: Int32Array.from(ids), slots: Int32Array.from(slots), positions: Int32Array.from(positions) },
        this.cache,
        rows.length === ids.length ? undefined : Int32Array.from(rows),
      );
      values = logits.toArray() as Float32Array;
    } catch (error) {
      // The admitted requests hold slots now: give them back as failures rather than leak them.
      for (const seq of admitted) this.finish(seq, { finishReason: 'abort', stopReason: null });
      throw error;
    } finally {
      logits?.dispose();
    }
    const vocab = this.modelRef.config.vocabSize;
    const still: Running[] = [];
    batch.forEach((seq, i) => {
      if (this.advance(seq, values.subarray(i * vocab, (i + 1) * vocab))) still.push(seq);
      else report.finished++;
    });
    this.running = still;
    return report;
  }

  /** Frees the KV cache; pending requests are aborted. The model is not disposed. */
  dispose(): void {
    if (this.disposed) return;
    this.abortAll();
    this.cache.dispose();
    this.disposed = true;
  }

  private start(r: Waiting): Running {
    const { tokenizer } = this;
    return {
      ...r,
      slot: this.free.pop()!,
      tokens: [],
      logprobs: [],
      top: r.params.logprobs !== null ? [] : null,
      sampler: new Sampler(r.params, {
        vocabSize: this.modelRef.config.vocabSize,
        eosTokenIds: this.eos,
        promptIds: r.prompt,
      }),
      decoder: tokenizer
        ? new IncrementalDecoder(tokenizer, { skipSpecialTokens: r.params.skipSpecialTokens, contextIds: r.prompt })
        : null,
      stops: r.params.stop.length > 0 ? new StopMatcher(r.params) : null,
      text: '',
    };
  }

  private finish(seq: Running, end: Finish): void {
    if (seq.decoder && end.finishReason !== 'abort') {
      const tail = seq.decoder.flush();
      if (seq.stops) {
        const match = seq.stops.feed(tail);
        seq.text += match.emit;
        if (!match.stopped) seq.text += seq.stops.flush();
      } else seq.text += tail;
    }
    this.free.push(seq.slot);
    seq.sink.onFinish({
      promptIds: seq.prompt,
      tokenIds: seq.tokens,
      logprobs: seq.logprobs,
      topLogprobs: seq.top,
      text: seq.text,
      finishReason: end.finishReason,
      stopReason: end.stopReason,
    });
  }

  /** Samples the next token of `seq` from its logits row; false when the sequence finished. */
  private advance(seq: Running, logits: Float32Array): boolean {
    const sampled = seq.sampler.sample(logits, seq.tokens);
    seq.tokens.push(sampled.token);
    seq.logprobs.push(sampled.logprob);
    const top = seq.top ? (sampled.topLogprobs ?? []) : null;
    if (seq.top) seq.top.push(top!);
    const count = seq.tokens.length;
    const byToken = checkStopToken(sampled.token, count, seq.params, this.eos);
    let piece = '';
    let stopped: Finish | null = null;
    if (seq.decoder) {
      const decoded = seq.decoder.push(sampled.token);
      if (seq.stops) {
        const match = seq.stops.feed(decoded, { canStop: stopStringsAllowed(count, seq.params) });
        piece = match.emit;
        if (match.stopped) stopped = stopStringFinish(match.matched!);
      } else piece = decoded;
      seq.text += piece;
    }
    seq.sink.onToken?.({ tokenId: sampled.token, logprob: sampled.logprob, topLogprobs: top, text: piece });
    const end =
      stopped ??
      byToken ??
      checkLength(count, seq.prompt.length + count, seq.params, Math.min(this.maxModelLength, this.cache.capacity));
    if (end) {
      this.finish(seq, end);
      return false;
    }
    return true;
  }
}

function emptyResult(prompt: number[], finishReason: FinishReason): GenerationResult {
  return { promptIds: prompt, tokenIds: [], logprobs: [], topLogprobs: null, text: '', finishReason, stopReason: null };
}

/** Throws unless two configs describe tensors of the same shapes (weights can be swapped). */
export function assertSameShapes(current: DecoderConfig, next: DecoderConfig): void {
  const keys: (keyof DecoderConfig)[] = [
    'architecture',
    'vocabSize',
    'hiddenSize',
    'intermediateSize',
    'numLayers',
    'numHeads',
    'numKvHeads',
    'headDim',
    'tieWordEmbeddings',
    'qkNorm',
    'qkvBias',
    'oBias',
    'mlpBias',
  ];
  const differ = keys.filter((k) => current[k] !== next[k]);
  if (differ.length > 0)
    throw new RangeError(
      `the new weights have a different architecture: ${differ
        .map((k) => `${k} ${String(current[k])} → ${String(next[k])}`)
        .join(', ')}`,
    );
}
