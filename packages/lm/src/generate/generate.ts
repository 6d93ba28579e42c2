// Batched generation with a KV cache: requests are admitted into cache slots as slots free up,
// prompts of any lengths are prefilled together in one forward, and every running sequence then
// decodes one token per forward. Each request has its own sampler (and seed), stop conditions and
// incremental detokenizer, so a sequence's tokens do not depend on what else is in the batch.
import type { Tensor } from '@prime-rl/tensor';
import type { DecoderModel } from '../model/decoder.js';
import { KVCache } from '../model/kv-cache.js';
import type { Tokenizer } from '../tokenizer/tokenizer.js';
import { IncrementalDecoder } from '../tokenizer/incremental-decoder.js';
import { Sampler, type TokenLogprob } from './sampler.js';
import { resolveSamplingParams, validateSamplingParams, type SamplingParams } from './sampling-params.js';
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

export interface GenerateOptions {
  /** Needed for text output and stop strings. */
  tokenizer?: Tokenizer;
  /** Sequences decoded at once (cache slots); default: all requests. */
  maxBatch?: number;
  /** Longest prompt + output (default: the model's max position embeddings). */
  maxModelLength?: number;
  /** Tokens that end generation (default: the tokenizer's EOS). */
  eosTokenIds?: readonly number[];
  /** Called for every generated token, in order per request. */
  onToken?: (request: number, token: number, logprob: number) => void;
}

interface Running {
  index: number;
  slot: number;
  params: SamplingParams;
  prompt: number[];
  tokens: number[];
  logprobs: number[];
  top: TokenLogprob[][] | null;
  sampler: Sampler;
  decoder: IncrementalDecoder | null;
  stops: StopMatcher | null;
  text: string;
}

/** Generates a completion for every request; results are in request order. */
export function generate(
  model: DecoderModel,
  requests: readonly GenerationRequest[],
  options: GenerateOptions = {},
): GenerationResult[] {
  const { tokenizer } = options;
  const maxModelLength = options.maxModelLength ?? model.config.maxPositionEmbeddings;
  const eos = options.eosTokenIds ?? (tokenizer ? [tokenizer.eosTokenId] : []);
  const vocab = model.config.vocabSize;
  const prepared = requests.map((request, index) => {
    const params = resolveSamplingParams(request.params ?? {});
    validateSamplingParams(params);
    const prompt = [...request.promptIds];
    if (prompt.length === 0) throw new RangeError(`request ${index}: the prompt is empty`);
    for (const id of prompt)
      if (!Number.isInteger(id) || id < 0 || id >= vocab)
        throw new RangeError(`request ${index}: prompt token ${id} is outside the vocabulary [0, ${vocab})`);
    if (prompt.length >= maxModelLength)
      throw new RangeError(
        `request ${index}: the prompt has ${prompt.length} tokens, leaving no room below the maximum model length ${maxModelLength}`,
      );
    if (params.stop.length > 0 && !tokenizer)
      throw new Error(`request ${index}: stop strings need a tokenizer to decode the output`);
    return { index, params, prompt };
  });
  const results: (GenerationResult | undefined)[] = new Array(requests.length);
  if (prepared.length === 0) return [];

  const slots = Math.max(1, Math.min(options.maxBatch ?? prepared.length, prepared.length));
  const capacity = Math.min(
    maxModelLength,
    Math.max(...prepared.map((r) => r.prompt.length + (r.params.maxTokens ?? maxModelLength))),
  );
  const cache = KVCache.forModel(model.config, slots, capacity);
  const free = Array.from({ length: slots }, (_, i) => slots - 1 - i);
  const waiting = [...prepared];
  let running: Running[] = [];

  const finish = (seq: Running, end: Finish): void => {
    if (seq.decoder) {
      const tail = seq.decoder.flush();
      if (seq.stops) {
        const match = seq.stops.feed(tail);
        seq.text += match.emit;
        if (!match.stopped) seq.text += seq.stops.flush();
      } else seq.text += tail;
    }
    results[seq.index] = {
      promptIds: seq.prompt,
      tokenIds: seq.tokens,
      logprobs: seq.logprobs,
      topLogprobs: seq.top,
      text: seq.text,
      finishReason: end.finishReason,
      stopReason: end.stopReason,
    };
    free.push(seq.slot);
  };

  /** Samples the next token of `seq` from its logits row; returns false when the sequence finished. */
  const advance = (seq: Running, logits: Float32Array): boolean => {
    const sampled = seq.sampler.sample(logits, seq.tokens);
    seq.tokens.push(sampled.token);
    seq.logprobs.push(sampled.logprob);
    if (seq.top) seq.top.push(sampled.topLogprobs ?? []);
    options.onToken?.(seq.index, sampled.token, sampled.logprob);
    const count = seq.tokens.length;
    const byToken = checkStopToken(sampled.token, count, seq.params, eos);
    if (seq.decoder) {
      const piece = seq.decoder.push(sampled.token);
      if (seq.stops) {
        const match = seq.stops.feed(piece, { canStop: stopStringsAllowed(count, seq.params) });
        seq.text += match.emit;
        if (match.stopped) {
          finish(seq, stopStringFinish(match.matched!));
          return false;
        }
      } else seq.text += piece;
    }
    const end = byToken ?? checkLength(count, seq.prompt.length + count, seq.params, maxModelLength);
    if (end) {
      finish(seq, end);
      return false;
    }
    return true;
  };

  const rowsOf = (logits: Tensor): Float32Array => logits.toArray() as Float32Array;

  try {
    while (running.length > 0 || waiting.length > 0) {
      // Admit waiting requests into free slots and prefill their prompts in one forward.
      const admitted: Running[] = [];
      while (free.length > 0 && waiting.length > 0) {
        const r = waiting.shift()!;
        admitted.push({
          index: r.index,
          slot: free.pop()!,
          params: r.params,
          prompt: r.prompt,
          tokens: [],
          logprobs: [],
          top: r.params.logprobs !== null ? [] : null,
          sampler: new Sampler(r.params, { vocabSize: vocab, eosTokenIds: eos, promptIds: r.prompt }),
          decoder: tokenizer
            ? new IncrementalDecoder(tokenizer, { skipSpecialTokens: r.params.skipSpecialTokens, contextIds: r.prompt })
            : null,
          stops: r.params.stop.length > 0 ? new StopMatcher(r.params) : null,
          text: '',
        });
      }
      const sampleFrom: [Running, Float32Array][] = [];
      if (admitted.length > 0) {
        const ids: number[] = [];
        const slotIds: number[] = [];
        const positions: number[] = [];
        const last: number[] = [];
        for (const seq of admitted) {
          seq.prompt.forEach((id, t) => {
            ids.push(id);
            slotIds.push(seq.slot);
            positions.push(t);
          });
          last.push(ids.length - 1);
        }
        const logits = model.forwardCached(
          { ids: Int32Array.from(ids), slots: Int32Array.from(slotIds), positions: Int32Array.from(positions) },
          cache,
          Int32Array.from(last),
        );
        const rows = rowsOf(logits);
        logits.dispose();
        admitted.forEach((seq, i) => sampleFrom.push([seq, rows.subarray(i * vocab, (i + 1) * vocab)]));
      }
      // Decode one token for every sequence that was already running.
      if (running.length > 0) {
        const logits = model.forwardCached(
          {
            ids: Int32Array.from(running.map((s) => s.tokens[s.tokens.length - 1]!)),
            slots: Int32Array.from(running.map((s) => s.slot)),
            positions: Int32Array.from(running.map((s) => s.prompt.length + s.tokens.length - 1)),
          },
          cache,
        );
        const rows = rowsOf(logits);
        logits.dispose();
        running.forEach((seq, i) => sampleFrom.push([seq, rows.subarray(i * vocab, (i + 1) * vocab)]));
      }
      running = sampleFrom.filter(([seq, logits]) => advance(seq, logits)).map(([seq]) => seq);
    }
  } finally {
    cache.dispose();
  }
  return results as GenerationResult[];
}
