// Hermes-style tool calls, the format Qwen models are trained on: the model writes
//   <tool_call>
//   {"name": "get_weather", "arguments": {"city": "Paris"}}
//   </tool_call>
// after any plain text. As vLLM's `hermes` parser: the text before the first <tool_call> is the content
// (null when empty), an unterminated last call is still read, and if any call is not valid JSON with a
// string `name` the whole output stays plain content (the model's mistake is the environment's to judge).
import { randomBytes } from 'node:crypto';

export const TOOL_CALL_START = '<tool_call>';
export const TOOL_CALL_END = '</tool_call>';

export interface ParsedToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ParsedOutput {
  content: string | null;
  toolCalls: ParsedToolCall[];
}

const CALL = /<tool_call>([\s\S]*?)<\/tool_call>|<tool_call>([\s\S]*)$/g;

export function toolCallId(): string {
  return `chatcmpl-tool-${randomBytes(16).toString('hex')}`;
}

/** Splits model output into content and tool calls. */
export function parseHermesToolCalls(text: string): ParsedOutput {
  const start = text.indexOf(TOOL_CALL_START);
  if (start < 0) return { content: text, toolCalls: [] };
  const toolCalls: ParsedToolCall[] = [];
  for (const match of text.matchAll(CALL)) {
    const body = (match[1] ?? match[2] ?? '').trim();
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return { content: text, toolCalls: [] };
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { content: text, toolCalls: [] };
    const { name, arguments: args } = parsed as { name?: unknown; arguments?: unknown };
    if (typeof name !== 'string' || name.length === 0) return { content: text, toolCalls: [] };
    toolCalls.push({
      id: toolCallId(),
      type: 'function',
      function: { name, arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) },
    });
  }
  const content = text.slice(0, start);
  return { content: content.length > 0 ? content : null, toolCalls };
}

/**
 * How much of streamed text can be sent as content now: everything before a <tool_call> that has
 * started, and otherwise all but a tail that could still become one.
 */
export function streamableContentLength(text: string): number {
  const start = text.indexOf(TOOL_CALL_START);
  if (start >= 0) return start;
  for (let keep = Math.min(TOOL_CALL_START.length - 1, text.length); keep > 0; keep--)
    if (TOOL_CALL_START.startsWith(text.slice(text.length - keep))) return text.length - keep;
  return text.length;
}
