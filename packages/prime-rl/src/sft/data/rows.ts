// Dataset rows → conversations. A row is `{ messages }` or `{ prompt, completion }` (spec rl.md §7.7;
// `messages` wins when both are there). Message lists may be JSON strings (Parquet files often store them
// so); a plain-string prompt is one user message and a plain-string completion one assistant message.
// Optional `tools` (or `tool_defs`) are offered to the chat template. Other columns are ignored.
import { ROLES } from './types.js';
import type { ChatMessage, Conversation, Role, ToolCall, ToolSpec } from './types.js';

/** A rejected row: `where` names the file and line/row, `field` the offending field. */
export class RowError extends Error {
  constructor(
    readonly where: string,
    readonly field: string,
    problem: string,
  ) {
    super(`${where}: ${field} ${problem}`);
    this.name = 'RowError';
  }
}

/** Validates one row; `where` (e.g. "train.jsonl line 17") prefixes every error. */
export function rowToConversation(row: unknown, where: string): Conversation {
  if (!isObject(row)) throw new Error(`${where}: a row must be an object, got ${describe(row)}`);
  let messages: ChatMessage[];
  if (isPresent(row.messages)) {
    messages = parseMessages(row.messages, 'messages', where, null);
  } else if (isPresent(row.prompt) && isPresent(row.completion)) {
    messages = [
      ...parseMessages(row.prompt, 'prompt', where, 'user'),
      ...parseMessages(row.completion, 'completion', where, 'assistant'),
    ];
  } else {
    const columns = Object.keys(row).join(', ') || 'none';
    throw new Error(`${where}: a row needs 'messages', or 'prompt' and 'completion' (found: ${columns})`);
  }
  if (messages.length === 0) throw new RowError(where, 'messages', 'must not be empty');
  const toolsField = isPresent(row.tools) ? 'tools' : isPresent(row.tool_defs) ? 'tool_defs' : null;
  if (toolsField === null) return { messages };
  return { messages, tools: parseTools(row[toolsField], toolsField, where) };
}

/**
 * A message list, or a JSON string of one. With `plainRole` set, a string that is not a JSON message
 * list is the content of a single message of that role.
 */
function parseMessages(value: unknown, field: string, where: string, plainRole: Role | null): ChatMessage[] {
  let list = value;
  if (typeof value === 'string') {
    const parsed = parseJsonList(value);
    // A plain-text prompt may itself look like JSON ("[1, 2, 3]"): only a list of role objects is messages.
    const isMessageList = parsed !== null && parsed.every((m) => isObject(m) && 'role' in m);
    if (parsed !== null && (plainRole === null || isMessageList)) list = parsed;
    else if (plainRole !== null) return [{ role: plainRole, content: value }];
    else throw new RowError(where, field, `must be a list of chat messages or a JSON string of one, got a string`);
  }
  if (!Array.isArray(list)) {
    const expected = plainRole === null ? 'a list of chat messages' : 'a string or a list of chat messages';
    throw new RowError(where, field, `must be ${expected}, got ${describe(list)}`);
  }
  return list.map((message, i) => parseMessage(message, `${field}[${i}]`, where));
}

function parseMessage(value: unknown, field: string, where: string): ChatMessage {
  if (!isObject(value))
    throw new RowError(where, field, `must be an object with role and content, got ${describe(value)}`);
  const role = value.role;
  if (typeof role !== 'string' || !(ROLES as readonly string[]).includes(role)) {
    throw new RowError(where, `${field}.role`, `must be one of ${ROLES.join(', ')}, got ${describe(role)}`);
  }
  const message: ChatMessage = { role: role as Role, content: null };
  const toolCalls = isPresent(value.tool_calls) ? parseToolCalls(value.tool_calls, `${field}.tool_calls`, where) : null;
  const content = value.content;
  // Assistant turns that only call tools often leave the content out.
  if (typeof content === 'string' || content === null || (content === undefined && toolCalls !== null)) {
    message.content = content ?? null;
  } else {
    throw new RowError(where, `${field}.content`, `must be a string or null, got ${describe(content)}`);
  }
  if (toolCalls !== null) message.tool_calls = toolCalls;
  for (const key of ['reasoning_content', 'tool_call_id', 'name'] as const) {
    const extra = value[key];
    if (!isPresent(extra)) continue;
    if (typeof extra !== 'string')
      throw new RowError(where, `${field}.${key}`, `must be a string, got ${describe(extra)}`);
    message[key] = extra;
  }
  return message;
}

function parseToolCalls(value: unknown, field: string, where: string): ToolCall[] {
  const list = typeof value === 'string' ? parseJsonList(value) : value;
  if (!Array.isArray(list)) throw new RowError(where, field, `must be a list of tool calls, got ${describe(value)}`);
  return list.map((call, i) => {
    const at = `${field}[${i}]`;
    if (!isObject(call) || !isObject(call.function)) {
      throw new RowError(where, `${at}.function`, `must be an object with name and arguments, got ${describe(call)}`);
    }
    const { name, arguments: args } = call.function;
    if (typeof name !== 'string')
      throw new RowError(where, `${at}.function.name`, `must be a string, got ${describe(name)}`);
    if (typeof args !== 'string' && !isObject(args)) {
      throw new RowError(where, `${at}.function.arguments`, `must be a string or an object, got ${describe(args)}`);
    }
    const parsed: ToolCall = { type: 'function', function: { name, arguments: args } };
    if (typeof call.id === 'string') parsed.id = call.id;
    return parsed;
  });
}

/** OpenAI `tools` entries, or bare `{ name, description, parameters }` function definitions. */
function parseTools(value: unknown, field: string, where: string): ToolSpec[] {
  const list = typeof value === 'string' ? parseJsonList(value) : value;
  if (!Array.isArray(list)) throw new RowError(where, field, `must be a list of tools, got ${describe(value)}`);
  return list.map((tool, i) => {
    const at = `${field}[${i}]`;
    const fn = isObject(tool) && isObject(tool.function) ? tool.function : tool;
    if (!isObject(fn) || typeof fn.name !== 'string') {
      throw new RowError(where, at, `must be a tool with a function name, got ${describe(tool)}`);
    }
    const spec: ToolSpec = { type: 'function', function: { name: fn.name } };
    if (typeof fn.description === 'string') spec.function.description = fn.description;
    // Parquet files tend to store the JSON schema of the parameters as a string.
    const parameters = typeof fn.parameters === 'string' ? parseJsonObject(fn.parameters) : fn.parameters;
    if (isObject(parameters)) spec.function.parameters = parameters;
    else if (isPresent(fn.parameters)) {
      throw new RowError(
        where,
        `${at}.parameters`,
        `must be an object (a JSON schema), got ${describe(fn.parameters)}`,
      );
    }
    return spec;
  });
}

function parseJsonList(text: string): unknown[] | null {
  if (!text.trimStart().startsWith('[')) return null;
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

function parseJsonObject(text: string): Record<string, unknown> | null {
  try {
    const parsed: unknown = JSON.parse(text);
    return isObject(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Parquet gives absent optional fields as null. */
function isPresent(value: unknown): boolean {
  return value !== undefined && value !== null;
}

/** A short rendering of a bad value for an error message. */
function describe(value: unknown): string {
  if (value === undefined) return 'nothing (missing)';
  if (value === null) return 'null';
  if (Array.isArray(value)) return `a list of ${value.length}`;
  if (typeof value === 'bigint') return `${value}`;
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
