// Data shapes of the SFT data pipeline: conversations in, packed micro-batches out. The chat shapes are
// @prime-rl/lm's (the tokenizer's), re-exported so callers of the data pipeline need one import.
import type { ChatMessage, ChatTemplateOptions, Role, RoleMask, TokenizedConversation, ToolSpec } from '@prime-rl/lm';

export type {
  ChatMessage,
  ChatTemplateOptions,
  Role,
  RoleMask,
  TokenizedConversation,
  ToolCall,
  ToolSpec,
} from '@prime-rl/lm';

export const ROLES: readonly Role[] = ['system', 'user', 'assistant', 'tool'];

/**
 * Renders and tokenizes one conversation, marking the tokens of the roles in `roleMask` as trained.
 * With the real tokenizer: `(messages, mask, options) => tokenizeConversation(tokenizer, messages, mask, options)`.
 */
export type ConversationTokenizer = (
  messages: ChatMessage[],
  roleMask: RoleMask,
  options?: ChatTemplateOptions,
) => TokenizedConversation;

/** One dataset row after validation. */
export interface Conversation {
  messages: ChatMessage[];
  tools?: ToolSpec[];
}

/** A tokenized sample ready to pack: at most seq_len tokens, lossMask[i] = 1 when token i is trained. */
export interface TokenSample {
  inputIds: Int32Array;
  lossMask: Uint8Array;
}

/**
 * Packed rows of one forward/backward pass. Every array is [rows, seqLen], row-major.
 * `targets[t]` is the next token of the same document (0 on a document's last token and on padding),
 * `lossMask[t]` is 1 when that target is a trained token, `positions` restart at 0 for every document and
 * `segments` number the documents of a row (padding is a segment of its own) so attention keeps them apart.
 */
export interface MicroBatch {
  inputIds: Int32Array;
  targets: Int32Array;
  lossMask: Float32Array;
  positions: Int32Array;
  segments: Int32Array;
  rows: number;
  seqLen: number;
  /** Non-padding tokens. */
  tokens: number;
  /** Positions with lossMask = 1. */
  lossTokens: number;
}
