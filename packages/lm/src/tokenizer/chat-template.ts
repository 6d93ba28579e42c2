// Hugging Face chat templates: Jinja programs (tokenizer_config.json `chat_template`, or a separate
// chat_template.jinja) that turn a list of chat messages into the model's prompt text. Rendered with
// @huggingface/jinja, a JavaScript port of the Jinja subset these templates use.
import { Template } from '@huggingface/jinja';
import type { ChatMessage, ChatTemplateOptions } from './types.js';

/** Special-token strings handed to a template (`{{ bos_token }}` and the like); absent ones are left out. */
export interface TemplateSpecialTokens {
  bos_token?: string;
  eos_token?: string;
  pad_token?: string;
  unk_token?: string;
}

export class ChatTemplate {
  readonly source: string;
  private readonly program: Template;

  /** Parses the template once; `where` names its origin for error messages (a file path or field). */
  constructor(source: string, where = 'chat template') {
    this.source = source;
    try {
      this.program = new Template(source);
    } catch (error) {
      throw new Error(`${where}: the chat template does not parse: ${errorMessage(error)}`, { cause: error });
    }
  }

  /**
   * Renders `messages`. Variables, as transformers' `apply_chat_template` passes them: the special
   * tokens, then `options.extra` (so it may override them, e.g. request `chat_template_kwargs`), then
   * `messages` and `add_generation_prompt`, and `tools` / `enable_thinking` only when given.
   *
   * `raise_exception(message)` is @huggingface/jinja's built-in, which throws an Error with the
   * template's message; the library refuses to redeclare globals ("Variable already declared"), so it
   * is not replaced. Any render error is rethrown with context.
   */
  render(
    messages: readonly ChatMessage[],
    options: ChatTemplateOptions = {},
    specialTokens: TemplateSpecialTokens = {},
  ): string {
    const variables: Record<string, unknown> = {
      ...definedEntries(specialTokens),
      ...options.extra,
      messages,
      add_generation_prompt: options.addGenerationPrompt ?? false,
    };
    if (options.tools !== undefined) variables.tools = options.tools;
    if (options.enableThinking !== undefined) variables.enable_thinking = options.enableThinking;
    try {
      return this.program.render(variables);
    } catch (error) {
      throw new Error(
        `chat template failed to render ${messages.length} message(s): ${errorMessage(error)}${hintFor(messages)}`,
        {
          cause: error,
        },
      );
    }
  }
}

/**
 * The template text from tokenizer_config.json's `chat_template`: a string, or a list of
 * `{name, template}` of which the one named `default` is used (as transformers does when no name is
 * asked for). `where` names the file for error messages.
 */
export function chatTemplateFromConfig(value: unknown, where: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    for (const [index, entry] of value.entries()) {
      if (typeof entry !== 'object' || entry === null || typeof (entry as { name?: unknown }).name !== 'string') {
        throw new Error(`${where}: chat_template[${index}] must be an object {name, template}`);
      }
    }
    const named = value as { name: string; template?: unknown }[];
    const chosen = named.find((entry) => entry.name === 'default');
    if (chosen === undefined) {
      const names = named.map((entry) => entry.name).join(', ');
      throw new Error(`${where}: chat_template is a list without a 'default' entry (has: ${names || 'none'})`);
    }
    if (typeof chosen.template !== 'string') {
      throw new Error(`${where}: chat_template entry 'default' has no string 'template'`);
    }
    return chosen.template;
  }
  throw new Error(`${where}: chat_template must be a string or a list of {name, template}, got ${typeof value}`);
}

function definedEntries(tokens: TemplateSpecialTokens): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(tokens)) {
    if (typeof value === 'string') out[key] = value;
  }
  return out;
}

// Templates that test or slice `message.content` (Qwen3's does `'</think>' in message.content`) fail on
// null content, as they do in Python; say so, since the Jinja error alone does not name the message.
function hintFor(messages: readonly ChatMessage[]): string {
  const nullContent = messages.flatMap((message, index) => (message.content === null ? [index] : []));
  if (nullContent.length === 0) return '';
  return ` (message(s) ${nullContent.join(', ')} have content null; this template may need a string, e.g. '')`;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
