// When generation ends, and why: stop strings matched on incrementally decoded text, stop tokens (EOS,
// stop_token_ids) and length limits, reported the way vLLM reports finish_reason and stop_reason.
import type { SamplingParams } from './sampling-params.js';

/**
 * 'stop': EOS, a stop token id or a stop string; 'length': max_tokens or the context length; 'abort':
 * cancelled (client gone, server shutting down).
 */
export type FinishReason = 'stop' | 'length' | 'abort';

/** vLLM's stop_reason: the matched stop string or stop token id; null for EOS and for length. */
export type StopReason = string | number | null;

export interface Finish {
  finishReason: FinishReason;
  stopReason: StopReason;
}

export interface StopMatch {
  /** Text that is final and can be shown: no stop string can still start in it. */
  emit: string;
  stopped: boolean;
  /** The stop string that ended generation. */
  matched?: string;
}

/**
 * Finds stop strings in text that arrives in pieces. It holds back the longest tail that could still
 * grow into a stop string and emits the rest. On a match the output ends where the stop string begins
 * (or, with includeStopStrInOutput, where it ends) and later input is ignored.
 *
 * When several stop strings occur, the one that completes first wins (ties: the longer one, which starts
 * earlier), so the result is the same however the text was split into pieces.
 */
export class StopMatcher {
  private readonly stops: readonly string[];
  private readonly includeStopStrInOutput: boolean;
  private readonly longestStop: number;
  private pending = '';
  private matchedStop: string | undefined;

  constructor(params: Pick<SamplingParams, 'stop' | 'includeStopStrInOutput'>) {
    for (const stop of params.stop) {
      if (stop.length === 0) throw new RangeError('stop cannot contain an empty string');
    }
    this.stops = [...params.stop];
    this.includeStopStrInOutput = params.includeStopStrInOutput;
    this.longestStop = Math.max(0, ...this.stops.map((stop) => stop.length));
  }

  get stopped(): boolean {
    return this.matchedStop !== undefined;
  }

  get matched(): string | undefined {
    return this.matchedStop;
  }

  /**
   * Adds newly decoded text. With canStop false (vLLM checks stop strings only once more than min_tokens
   * tokens were generated) a stop string that completes in this text is ignored, though one that starts
   * here and completes in a later piece still counts.
   */
  feed(newText: string, options: { canStop?: boolean } = {}): StopMatch {
    if (this.matchedStop !== undefined) return { emit: '', stopped: true, matched: this.matchedStop };
    const text = this.pending + newText;
    if (options.canStop ?? true) {
      const match = this.firstCompletedStop(text, this.pending.length);
      if (match !== null) {
        this.matchedStop = match.stop;
        this.pending = '';
        const end = this.includeStopStrInOutput ? match.start + match.stop.length : match.start;
        return { emit: text.slice(0, end), stopped: true, matched: match.stop };
      }
    }
    const heldBack = this.partialStopLength(text);
    this.pending = text.slice(text.length - heldBack);
    return { emit: text.slice(0, text.length - heldBack), stopped: false };
  }

  /** At the end of generation: the held-back text, which no stop string completed. */
  flush(): string {
    const rest = this.pending;
    this.pending = '';
    return rest;
  }

  /** The earliest-completing stop string that ends after `newFrom`, i.e. in the new text. */
  private firstCompletedStop(text: string, newFrom: number): { stop: string; start: number } | null {
    let best: { stop: string; start: number } | null = null;
    for (const stop of this.stops) {
      const start = text.indexOf(stop, Math.max(0, newFrom - stop.length + 1));
      if (start < 0) continue;
      const end = start + stop.length;
      const bestEnd = best === null ? Infinity : best.start + best.stop.length;
      if (end < bestEnd || (end === bestEnd && best !== null && start < best.start)) best = { stop, start };
    }
    return best;
  }

  /** Length of the longest tail of text that is a proper prefix of some stop string. */
  private partialStopLength(text: string): number {
    for (let length = Math.min(text.length, this.longestStop - 1); length > 0; length--) {
      const tail = text.slice(text.length - length);
      if (this.stops.some((stop) => stop.length > length && stop.startsWith(tail))) return length;
    }
    return 0;
  }
}

/**
 * Whether the token just sampled ends generation. generatedCount counts the generated tokens including
 * this one; as in vLLM, nothing stops generation until more than minTokens tokens were generated (the
 * sampler masks EOS and stop ids before that). EOS stops unless ignoreEos (stopReason null); a stop token
 * id always stops (stopReason the id).
 */
export function checkStopToken(
  token: number,
  generatedCount: number,
  params: Pick<SamplingParams, 'minTokens' | 'ignoreEos' | 'stopTokenIds'>,
  eosTokenIds: readonly number[],
): Finish | null {
  if (generatedCount <= params.minTokens) return null;
  if (!params.ignoreEos && eosTokenIds.includes(token)) return { finishReason: 'stop', stopReason: null };
  if (params.stopTokenIds.includes(token)) return { finishReason: 'stop', stopReason: token };
  return null;
}

/** Whether stop strings may end generation yet: only once more than minTokens tokens were generated. */
export function stopStringsAllowed(generatedCount: number, params: Pick<SamplingParams, 'minTokens'>): boolean {
  return generatedCount > params.minTokens;
}

/**
 * Whether generation must end for length: maxTokens generated, or the sequence (prompt + generated) fills
 * the context so that no further position exists. Check stop tokens first: a sequence whose last allowed
 * token is EOS finished with 'stop'.
 */
export function checkLength(
  generatedCount: number,
  sequenceLength: number,
  params: Pick<SamplingParams, 'maxTokens'>,
  maxModelLength: number,
): Finish | null {
  if (params.maxTokens !== null && generatedCount >= params.maxTokens)
    return { finishReason: 'length', stopReason: null };
  if (sequenceLength >= maxModelLength) return { finishReason: 'length', stopReason: null };
  return null;
}

/** The finish for a stop string the StopMatcher matched. */
export function stopStringFinish(matched: string): Finish {
  return { finishReason: 'stop', stopReason: matched };
}
