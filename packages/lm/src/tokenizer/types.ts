// Chat data shapes shared by tokenizers, chat templates, SFT data and the inference server.
// Field names follow the OpenAI chat API and Hugging Face chat templates (snake_case on purpose:
// these objects are passed to Jinja templates and sent over HTTP as they are).

export type Role = 'system' | 'user' | 'assistant' | 'tool';

export interface ToolCall {
  id?: string;
  type?: 'function';
  function: { name: string; arguments: string | Record<string, unknown> };
}

export interface ChatMessage {
  role: Role;
  content: string | null;
  /** Assistant reasoning (rendered inside <think>…</think> by Qwen3's template). */
  reasoning_content?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  name?: string;
}

/** A tool offered to the model, in the OpenAI `tools` format. */
export interface ToolSpec {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

export interface ChatTemplateOptions {
  /** Append the header that starts an assistant turn (default false). */
  addGenerationPrompt?: boolean;
  tools?: ToolSpec[];
  /** Qwen3's `enable_thinking` switch (undefined: the template's default). */
  enableThinking?: boolean;
  /** Further variables handed to the template as they are. */
  extra?: Record<string, unknown>;
}

/** Which roles' tokens count in the loss (spec config.md §3.7 `data.loss_mask`). */
export interface RoleMask {
  system: boolean;
  user: boolean;
  assistant: boolean;
  tool: boolean;
}

/** Token ids of a rendered conversation and, per token, whether it is trained on. */
export interface TokenizedConversation {
  inputIds: number[];
  lossMask: boolean[];
}
