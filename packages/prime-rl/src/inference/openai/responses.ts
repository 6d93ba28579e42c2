// Response bodies and stream chunks in the OpenAI shape, with vLLM's extras: `stop_reason`, token ids
// (`prompt_token_ids`, `token_ids` with return_token_ids) and `token_id:<id>` token strings with
// return_tokens_as_token_ids.
import { randomBytes } from 'node:crypto';
import type { GenerationResult, TokenLogprob, Tokenizer } from '@prime-rl/lm';
import type { GenerationJob } from './requests.js';
import type { ParsedToolCall } from '../tool-calls.js';

/** JSON has no -Infinity: vLLM reports impossible tokens with this. */
const MIN_LOGPROB = -9999.0;

export function responseId(prefix: 'chatcmpl' | 'cmpl'): string {
  return `${prefix}-${randomBytes(16).toString('hex')}`;
}

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

const finite = (lp: number): number => (Number.isFinite(lp) ? lp : MIN_LOGPROB);

/** Token strings for logprobs, decoded once per id. */
export class TokenTexts {
  private readonly cache = new Map<number, string>();
  constructor(private readonly tokenizer: Tokenizer) {}

  text(id: number, asIds: boolean): string {
    if (asIds) return `token_id:${id}`;
    let t = this.cache.get(id);
    if (t === undefined) this.cache.set(id, (t = this.tokenizer.decode([id])));
    return t;
  }
}

export interface TokenOut {
  tokenId: number;
  logprob: number;
  top: TokenLogprob[] | null;
}

/** `choices[i].logprobs.content` entries of the chat API. */
export function chatLogprobs(tokens: TokenOut[], job: GenerationJob, texts: TokenTexts) {
  return tokens.map((t) => {
    const token = texts.text(t.tokenId, job.tokensAsIds);
    return {
      token,
      logprob: finite(t.logprob),
      bytes: [...Buffer.from(token, 'utf8')],
      top_logprobs: (t.top ?? []).map((e) => {
        const s = texts.text(e.token, job.tokensAsIds);
        return { token: s, logprob: finite(e.logprob), bytes: [...Buffer.from(s, 'utf8')] };
      }),
    };
  });
}

/** The legacy completions API's logprobs object; text offsets count from `offset`. */
export function completionLogprobs(tokens: TokenOut[], job: GenerationJob, texts: TokenTexts, offset: number) {
  const strings = tokens.map((t) => texts.text(t.tokenId, job.tokensAsIds));
  const textOffset: number[] = [];
  let at = offset;
  for (const s of strings) {
    textOffset.push(at);
    at += s.length;
  }
  return {
    tokens: strings,
    token_logprobs: tokens.map((t) => finite(t.logprob)),
    top_logprobs: tokens.map((t) =>
      Object.fromEntries((t.top ?? []).map((e) => [texts.text(e.token, job.tokensAsIds), finite(e.logprob)])),
    ),
    text_offset: textOffset,
  };
}

export function tokensOf(result: GenerationResult): TokenOut[] {
  return result.tokenIds.map((tokenId, i) => ({
    tokenId,
    logprob: result.logprobs[i]!,
    top: result.topLogprobs ? (result.topLogprobs[i] ?? []) : null,
  }));
}

export function usage(promptTokens: number, completionTokens: number) {
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
}

export function toolCallsDelta(calls: ParsedToolCall[]) {
  return calls.map((c, index) => ({ index, ...c }));
}
