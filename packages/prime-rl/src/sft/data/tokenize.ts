// Conversation → token sample: render and tokenize with the role loss mask, truncate to seq_len, and drop
// samples that have nothing to train on.
import type { Conversation, ConversationTokenizer, RoleMask, TokenSample, TokenizedConversation } from './types.js';

/** `sample` is null when the sample has no trained token and is dropped. */
export interface PreparedSample {
  sample: TokenSample | null;
  /** The conversation was longer than seq_len and was cut. */
  truncated: boolean;
}

export function tokenizeSample(
  conversation: Conversation,
  tokenizer: ConversationTokenizer,
  roleMask: RoleMask,
  seqLen: number,
  where: string,
): PreparedSample {
  const options = conversation.tools ? { tools: conversation.tools } : undefined;
  let tokenized: TokenizedConversation;
  try {
    tokenized = tokenizer(conversation.messages, roleMask, options);
  } catch (error) {
    throw new Error(
      `${where}: cannot tokenize the conversation: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  return prepareSample(tokenized, seqLen, where);
}

/**
 * Truncates a tokenized conversation to `seqLen` tokens. A token is learned as the target of the token
 * before it, so the first token's mask cannot be trained: a sample whose mask is set only there (or
 * nowhere) is dropped.
 */
export function prepareSample(tokenized: TokenizedConversation, seqLen: number, where: string): PreparedSample {
  const { inputIds, lossMask } = tokenized;
  if (inputIds.length !== lossMask.length) {
    throw new Error(
      `${where}: the tokenizer gave ${inputIds.length} token ids but ${lossMask.length} loss-mask entries`,
    );
  }
  const length = Math.min(inputIds.length, seqLen);
  const ids = new Int32Array(length);
  const mask = new Uint8Array(length);
  let trainedTargets = 0;
  for (let i = 0; i < length; i++) {
    const id = inputIds[i]!;
    if (!Number.isInteger(id) || id < 0 || id > 0x7fffffff) {
      throw new Error(`${where}: the tokenizer gave an invalid token id ${id} at position ${i}`);
    }
    ids[i] = id;
    mask[i] = lossMask[i] ? 1 : 0;
    if (i > 0) trainedTargets += mask[i]!;
  }
  const truncated = inputIds.length > seqLen;
  return { sample: trainedTargets > 0 ? { inputIds: ids, lossMask: mask } : null, truncated };
}
