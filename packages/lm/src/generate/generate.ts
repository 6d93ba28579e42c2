// Batch generation: the continuous-batching Engine run until every request is done. Results are in
// request order; every request is checked before any work starts.
import type { DecoderModel } from '../model/decoder.js';
import type { Tokenizer } from '../tokenizer/tokenizer.js';
import { Engine, type GenerationRequest, type GenerationResult } from './engine.js';

export type { GenerationRequest, GenerationResult } from './engine.js';

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

/** Generates a completion for every request; results are in request order. */
export function generate(
  model: DecoderModel,
  requests: readonly GenerationRequest[],
  options: GenerateOptions = {},
): GenerationResult[] {
  if (requests.length === 0) return [];
  const maxModelLength = options.maxModelLength ?? model.config.maxPositionEmbeddings;
  // Slots only need to hold the longest request this batch can produce.
  let longest = 1;
  for (const r of requests) longest = Math.max(longest, r.promptIds.length + (r.params?.maxTokens ?? maxModelLength));
  const engine = new Engine(model, {
    maxSeqs: Math.max(1, Math.min(options.maxBatch ?? requests.length, requests.length)),
    maxModelLength,
    slotCapacity: Math.min(maxModelLength, longest),
    maxBatchedTokens: Number.MAX_SAFE_INTEGER,
    ...(options.tokenizer ? { tokenizer: options.tokenizer } : {}),
    ...(options.eosTokenIds ? { eosTokenIds: options.eosTokenIds } : {}),
  });
  const results: GenerationResult[] = new Array(requests.length);
  try {
    requests.forEach((request, index) => {
      try {
        engine.submit(request, {
          onToken: options.onToken ? (e) => options.onToken!(index, e.tokenId, e.logprob) : undefined,
          onFinish: (result) => (results[index] = result),
        });
      } catch (error) {
        if (error instanceof Error) error.message = `request ${index}: ${error.message}`;
        throw error;
      }
    });
    while (engine.hasWork) engine.step();
  } finally {
    engine.dispose();
  }
  return results;
}
