// Tokenizing a chat conversation for training: the token ids of the chat-template rendering, and for
// each token whether it is trained on, by the role of the message that produced it (SFT loss masks).
import type { Tokenizer } from './tokenizer.js';
import type { ChatMessage, ChatTemplateOptions, RoleMask, TokenizedConversation } from './types.js';

/** A stretch of the rendered text and the messages that produced it. */
interface Span {
  start: number;
  end: number;
  trained: boolean;
  firstMessage: number;
}

/** Where message i's text ends in the full rendering, or why that cannot be known. */
type MessageEnd = { offset: number } | { unknown: string };

/**
 * Renders `messages` with the tokenizer's chat template and marks each token trained or not by
 * `roleMask[role]` of the message it belongs to. `inputIds` always equal `tokenizer.encodeChat(messages, options)`.
 *
 * Boundaries, as prime-rl and verifiers find them: render messages[0..i] and see where that text ends
 * inside the rendering of the whole conversation. When message i+1 is an assistant turn, the prefix
 * is rendered with `add_generation_prompt`, so the assistant header (`<|im_start|>assistant\n`) falls
 * on the prompt side, in message i's span; the assistant's content, its end token and whatever the
 * template writes after it are the assistant's. Text the template writes before the first message
 * (e.g. Qwen3's tools block) belongs to message 0; a final generation prompt
 * (`options.addGenerationPrompt`) is never trained.
 *
 * A prefix rendering need not be a prefix of the whole one: Qwen3's template drops the `<think>`
 * reasoning of assistant turns before the last user message, and closes a tool turn only when no tool
 * message follows. Messages whose ends cannot be placed are grouped with the following messages up
 * to the next end that can; if the group's messages disagree on the mask, this throws, naming the
 * message.
 */
export function tokenizeConversation(
  tokenizer: Tokenizer,
  messages: readonly ChatMessage[],
  roleMask: RoleMask,
  options: ChatTemplateOptions = {},
): TokenizedConversation {
  if (messages.length === 0) throw new Error('tokenizeConversation: no messages');
  const trained = messages.map((message, index) => {
    const flag = (roleMask as unknown as Record<string, unknown>)[message.role];
    if (typeof flag !== 'boolean') {
      throw new Error(
        `tokenizeConversation: message ${index} has role ${JSON.stringify(message.role)}, not in the role mask`,
      );
    }
    return flag;
  });

  const fullText = tokenizer.applyChatTemplate(messages, options);
  const ends = locateMessageEnds(tokenizer, messages, options, fullText);
  const spans = mergeEqualNeighbours(groupIntoSpans(messages, trained, ends, fullText));

  // Each span is tokenized on its own, so every token has exactly one owner, and the concatenation
  // is checked against the tokenization of the whole text: equal ids prove that no BPE merge (or
  // normalization) crossed a boundary. Mapping character offsets onto one tokenization instead would
  // need offsets this tokenizer library does not report, and a token straddling a prompt/answer
  // boundary has no right mask (at inference the prompt is tokenized on its own, so it never occurs),
  // so such a case is refused rather than guessed. Only boundaries where the mask changes remain after
  // merging, and in ChatML-style templates those sit next to special tokens, which never merge.
  const inputIds = tokenizer.encode(fullText);
  const lossMask: boolean[] = [];
  let position = 0;
  for (const [index, span] of spans.entries()) {
    const spanIds = tokenizer.encode(fullText.slice(span.start, span.end));
    const mismatch = spanIds.findIndex((id, k) => inputIds[position + k] !== id);
    if (mismatch !== -1 || position + spanIds.length > inputIds.length) {
      // A merge across the span's start shows in its first token; otherwise it crossed the span's end.
      const boundary = mismatch === 0 && position > 0 ? span.firstMessage : spans[index + 1]?.firstMessage;
      const where =
        boundary === undefined || boundary >= messages.length
          ? 'before the generation prompt'
          : `before message ${boundary} (${messages[boundary]!.role})`;
      throw new Error(
        `tokenizeConversation: a token spans the boundary ${where}: tokenizing the text on either side ` +
          `separately gives other ids than tokenizing the whole conversation, so the loss mask cannot be split there`,
      );
    }
    for (let k = 0; k < spanIds.length; k++) lossMask.push(span.trained);
    position += spanIds.length;
  }
  if (position !== inputIds.length) {
    throw new Error('tokenizeConversation: the spans tokenize to fewer ids than the whole conversation');
  }
  return { inputIds, lossMask };
}

function locateMessageEnds(
  tokenizer: Tokenizer,
  messages: readonly ChatMessage[],
  options: ChatTemplateOptions,
  fullText: string,
): MessageEnd[] {
  const ends: MessageEnd[] = [];
  let lastOffset = 0;
  for (let i = 0; i < messages.length; i++) {
    const next = messages[i + 1];
    const isLast = next === undefined;
    let prefixText: string;
    if (isLast && !options.addGenerationPrompt) {
      prefixText = fullText;
    } else {
      try {
        prefixText = tokenizer.applyChatTemplate(messages.slice(0, i + 1), {
          ...options,
          addGenerationPrompt: next?.role === 'assistant',
        });
      } catch (error) {
        ends.push({ unknown: `rendering them alone fails: ${(error as Error).message}` });
        continue;
      }
    }
    if (!fullText.startsWith(prefixText)) {
      ends.push({
        unknown: `their rendering is not a prefix of the whole conversation's (it differs from character ${commonPrefixLength(prefixText, fullText)} on)`,
      });
    } else if (prefixText.length < lastOffset) {
      ends.push({ unknown: `their rendering ends before that of the messages before them` });
    } else {
      ends.push({ offset: prefixText.length });
      lastOffset = prefixText.length;
    }
  }
  return ends;
}

function groupIntoSpans(
  messages: readonly ChatMessage[],
  trained: readonly boolean[],
  ends: readonly MessageEnd[],
  fullText: string,
): Span[] {
  const spans: Span[] = [];
  let start = 0;
  let groupStart = 0;
  for (let i = 0; i < messages.length; i++) {
    const end = ends[i]!;
    const isLast = i === messages.length - 1;
    if ('unknown' in end && !isLast) continue;
    const groupEnd = 'offset' in end ? end.offset : fullText.length;
    const groupTrained = trained[groupStart]!;
    for (let j = groupStart + 1; j <= i; j++) {
      if (trained[j] !== groupTrained) {
        const unknownIndex = ends.findIndex((e, k) => k >= groupStart && 'unknown' in e);
        const reason = (ends[unknownIndex] as { unknown: string }).unknown;
        throw new Error(
          `tokenizeConversation: cannot tell where message ${unknownIndex} (${messages[unknownIndex]!.role}) ends ` +
            `in the rendered conversation: for messages[0..${unknownIndex}] ${reason}. Messages ${groupStart}..${i} ` +
            `would share one span but differ in the loss mask (message ${groupStart} ${messages[groupStart]!.role}: ` +
            `${groupTrained}, message ${j} ${messages[j]!.role}: ${trained[j]}). Chat templates that render earlier ` +
            `turns differently (Qwen3's drops the <think> reasoning of assistant turns before the last user ` +
            `message) need each assistant turn tokenized as its own sample that ends with that turn.`,
        );
      }
    }
    spans.push({ start, end: groupEnd, trained: groupTrained, firstMessage: groupStart });
    start = groupEnd;
    groupStart = i + 1;
  }
  // The generation prompt after the last message, when asked for: the model writes what follows it.
  if (start < fullText.length) {
    spans.push({ start, end: fullText.length, trained: false, firstMessage: messages.length });
  }
  return spans;
}

function mergeEqualNeighbours(spans: readonly Span[]): Span[] {
  const merged: Span[] = [];
  for (const span of spans) {
    if (span.end === span.start) continue;
    const previous = merged[merged.length - 1];
    if (previous !== undefined && previous.trained === span.trained) previous.end = span.end;
    else merged.push({ ...span });
  }
  return merged;
}

function commonPrefixLength(a: string, b: string): number {
  let length = 0;
  while (length < a.length && length < b.length && a[length] === b[length]) length++;
  return length;
}
