// Streaming detokenization: text for a growing list of generated token ids, emitted as soon as it is
// final. Same scheme as vLLM's detokenizer and text-generation-inference: keep two offsets into the
// ids, decode only the short window from `prefixOffset`, and emit what the window adds beyond the text
// of [prefixOffset, readOffset). Decoding the window together with a little already-emitted context
// keeps decoders that look at neighbours right (a SentencePiece "▁" turns into a space only after
// other text), while the cost per step stays independent of the generation's length.
import type { Tokenizer } from './tokenizer.js';

export interface IncrementalDecoderOptions {
  skipSpecialTokens?: boolean;
  /** Ids already in the sequence (the prompt): used as decoding context, never emitted. */
  contextIds?: readonly number[];
}

// Context tokens decoded before the first new one (vLLM's INITIAL_INCREMENTAL_DETOKENIZATION_OFFSET).
const INITIAL_CONTEXT_TOKENS = 5;
// An incomplete UTF-8 character is at most 3 bytes, so valid text keeps the window from moving for at
// most 3 tokens, more only across tokens that decode to nothing. Past this many, the trailing U+FFFD
// comes from invalid bytes that no later token completes: move on rather than let the window grow.
const MAX_HELD_TOKENS = 16;
const REPLACEMENT_CHARACTER = '\uFFFD';
const TRAILING_REPLACEMENTS = /\uFFFD+$/u;

export class IncrementalDecoder {
  private readonly tokenizer: Tokenizer;
  private readonly skipSpecialTokens: boolean;
  /** Context ids followed by generated ids. */
  private readonly ids: number[];
  private readonly contextLength: number;
  /** Start of the decoding window: context that is decoded again but not emitted. */
  private prefixOffset: number;
  /** End of the ids whose text has been emitted in full. */
  private readOffset: number;
  /** decode(ids[prefixOffset, readOffset)), cached until the offsets move. */
  private prefixText: string;
  /** Characters already emitted past prefixText while the window's end was an incomplete character. */
  private emittedInWindow = 0;
  private emitted = '';

  constructor(tokenizer: Tokenizer, { skipSpecialTokens = false, contextIds = [] }: IncrementalDecoderOptions = {}) {
    this.tokenizer = tokenizer;
    this.skipSpecialTokens = skipSpecialTokens;
    this.ids = [...contextIds];
    this.contextLength = contextIds.length;
    this.readOffset = this.ids.length;
    this.prefixOffset = Math.max(this.readOffset - INITIAL_CONTEXT_TOKENS, 0);
    this.prefixText = this.decodeRange(this.prefixOffset, this.readOffset);
  }

  /** All text emitted so far (by push and flush). */
  get text(): string {
    return this.emitted;
  }

  /** Ids fed by push so far (a copy; the context ids are not included). */
  get generatedIds(): number[] {
    return this.ids.slice(this.contextLength);
  }

  /**
   * Appends `newIds` and returns the text they complete (possibly ''). A partial UTF-8 character at the
   * end (decoded as U+FFFD) is held back until a later token completes it; the text before it is not.
   */
  push(newIds: number | readonly number[]): string {
    if (typeof newIds === 'number') this.ids.push(newIds);
    else for (const id of newIds) this.ids.push(id);

    const windowText = this.decodeRange(this.prefixOffset, this.ids.length);
    const heldTokens = this.ids.length - this.readOffset;
    if (heldTokens >= MAX_HELD_TOKENS) return this.advance(windowText);
    // Tokens that add no text (skipped special tokens) do not move the window, so the context that
    // decoders like SentencePiece's need before the next word is kept (as vLLM does).
    if (windowText.length <= this.prefixText.length + this.emittedInWindow) return '';
    if (!windowText.endsWith(REPLACEMENT_CHARACTER)) return this.advance(windowText);
    // The offsets stay put (they must sit on character boundaries), but the complete text before the
    // trailing U+FFFD run is final already: bytes before an incomplete sequence never change meaning.
    return this.emitFrom(windowText.replace(TRAILING_REPLACEMENTS, ''));
  }

  /** Returns whatever is still held back (a trailing partial character decodes to U+FFFD), at the end of a generation. */
  flush(): string {
    return this.advance(this.decodeRange(this.prefixOffset, this.ids.length));
  }

  /** Emits the rest of `windowText` and moves the window on to the ids decoded so far. */
  private advance(windowText: string): string {
    const newText = this.emitFrom(windowText);
    this.prefixOffset = this.readOffset;
    this.readOffset = this.ids.length;
    this.prefixText = this.decodeRange(this.prefixOffset, this.readOffset);
    this.emittedInWindow = 0;
    return newText;
  }

  /** Emits what `text` (decoded from prefixOffset) has beyond the context and what was emitted from this window. */
  private emitFrom(text: string): string {
    const alreadyThere = this.prefixText.length + this.emittedInWindow;
    if (text.length <= alreadyThere) return '';
    const newText = text.slice(alreadyThere);
    this.emittedInWindow += newText.length;
    this.emitted += newText;
    return newText;
  }

  private decodeRange(start: number, end: number): string {
    return this.tokenizer.decode(this.ids.slice(start, end), { skipSpecialTokens: this.skipSpecialTokens });
  }
}
