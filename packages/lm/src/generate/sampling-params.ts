// Per-request sampling parameters with vLLM's defaults and range checks. Field names are camelCase; the
// HTTP layer maps the OpenAI/vLLM snake_case names, and error messages use those names because that is
// how the user wrote them.

export interface SamplingParams {
  /** Divides the logits; 0 (anything below 1e-5, as in vLLM) means greedy decoding. */
  temperature: number;
  /** Nucleus sampling: keep the smallest set of most likely tokens whose probability sums to at least topP. */
  topP: number;
  /** Keep only the topK most likely tokens; 0 or -1 turns it off. */
  topK: number;
  /** Drop tokens whose probability is below minP times the most likely token's. */
  minP: number;
  /** > 1 discourages tokens already in the prompt or the output; 1 is off. */
  repetitionPenalty: number;
  /** Subtracted once from the logit of every token already generated. */
  presencePenalty: number;
  /** Subtracted from a token's logit once per time it was generated. */
  frequencyPenalty: number;
  /** Seeds this request's own random stream; null draws one from the process-wide generator. */
  seed: number | null;
  /** Most tokens to generate; null means until the context length. */
  maxTokens: number | null;
  /** EOS and stopTokenIds cannot be sampled before this many tokens were generated. */
  minTokens: number;
  /** Generation stops when the output text contains one of these. */
  stop: string[];
  /** Generation stops when one of these tokens is sampled. */
  stopTokenIds: number[];
  /** Keep generating after EOS. */
  ignoreEos: boolean;
  /** Keep the matched stop string at the end of the output text. */
  includeStopStrInOutput: boolean;
  /** How many of the most likely tokens' log-probabilities to return per position; null returns none. */
  logprobs: number | null;
  /** Leave special tokens out of the decoded text. */
  skipSpecialTokens: boolean;
}

export const defaultSamplingParams: Readonly<SamplingParams> = Object.freeze({
  temperature: 1.0,
  topP: 1.0,
  topK: 0,
  minP: 0,
  repetitionPenalty: 1.0,
  presencePenalty: 0,
  frequencyPenalty: 0,
  seed: null,
  maxTokens: null,
  minTokens: 0,
  stop: [],
  stopTokenIds: [],
  ignoreEos: false,
  includeStopStrInOutput: false,
  logprobs: null,
  skipSpecialTokens: true,
});

/** Below this temperature vLLM samples greedily (its _SAMPLING_EPS). */
export const GREEDY_TEMPERATURE_THRESHOLD = 1e-5;

export function isGreedy(params: Pick<SamplingParams, 'temperature'>): boolean {
  return params.temperature < GREEDY_TEMPERATURE_THRESHOLD;
}

/**
 * Fills in defaults for the fields left out (or undefined), copies the arrays so that later edits to the
 * caller's object do not leak in, and validates the result.
 */
export function resolveSamplingParams(partial: Partial<SamplingParams> = {}): SamplingParams {
  const resolved: SamplingParams = { ...defaultSamplingParams, stop: [], stopTokenIds: [] };
  for (const key of Object.keys(partial) as (keyof SamplingParams)[]) {
    const value = partial[key];
    if (value !== undefined) (resolved as unknown as Record<string, unknown>)[key] = value;
  }
  resolved.stop = [...resolved.stop];
  resolved.stopTokenIds = [...resolved.stopTokenIds];
  validateSamplingParams(resolved);
  return resolved;
}

/** Throws a RangeError naming the offending field in snake_case, e.g. `top_p must be in (0, 1], got 1.5`. */
export function validateSamplingParams(params: SamplingParams): void {
  requireFinite('temperature', params.temperature);
  if (params.temperature < 0) fail(`temperature must be non-negative, got ${params.temperature}`);

  requireFinite('top_p', params.topP);
  if (!(params.topP > 0 && params.topP <= 1)) fail(`top_p must be in (0, 1], got ${params.topP}`);

  requireInteger('top_k', params.topK);
  if (params.topK < -1) fail(`top_k must be 0 or -1 (disabled), or at least 1, got ${params.topK}`);

  requireFinite('min_p', params.minP);
  if (!(params.minP >= 0 && params.minP <= 1)) fail(`min_p must be in [0, 1], got ${params.minP}`);

  requireFinite('repetition_penalty', params.repetitionPenalty);
  if (!(params.repetitionPenalty > 0)) {
    fail(`repetition_penalty must be greater than zero, got ${params.repetitionPenalty}`);
  }

  for (const [name, value] of [
    ['presence_penalty', params.presencePenalty],
    ['frequency_penalty', params.frequencyPenalty],
  ] as const) {
    requireFinite(name, value);
    if (!(value >= -2 && value <= 2)) fail(`${name} must be in [-2, 2], got ${value}`);
  }

  if (params.seed !== null) requireInteger('seed', params.seed);

  if (params.maxTokens !== null) {
    requireInteger('max_tokens', params.maxTokens);
    if (params.maxTokens < 1) fail(`max_tokens must be at least 1, got ${params.maxTokens}`);
  }

  requireInteger('min_tokens', params.minTokens);
  if (params.minTokens < 0) fail(`min_tokens must be greater than or equal to 0, got ${params.minTokens}`);
  if (params.maxTokens !== null && params.minTokens > params.maxTokens) {
    fail(`min_tokens must be less than or equal to max_tokens=${params.maxTokens}, got ${params.minTokens}`);
  }

  if (!Array.isArray(params.stop)) fail(`stop must be a list of strings`);
  for (const stop of params.stop) {
    if (typeof stop !== 'string') fail(`stop must be a list of strings, got ${JSON.stringify(stop)}`);
    if (stop.length === 0) fail('stop cannot contain an empty string');
  }

  if (!Array.isArray(params.stopTokenIds)) fail(`stop_token_ids must be a list of token ids`);
  for (const id of params.stopTokenIds) {
    requireInteger('stop_token_ids', id);
    if (id < 0) fail(`stop_token_ids must be non-negative, got ${id}`);
  }

  if (params.logprobs !== null) {
    requireInteger('logprobs', params.logprobs);
    if (params.logprobs < 0) fail(`logprobs must be non-negative, got ${params.logprobs}`);
  }
}

function requireFinite(name: string, value: number): void {
  if (typeof value !== 'number' || !Number.isFinite(value)) fail(`${name} must be a finite number, got ${value}`);
}

function requireInteger(name: string, value: number): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) fail(`${name} must be an integer, got ${value}`);
}

function fail(message: string): never {
  throw new RangeError(message);
}
