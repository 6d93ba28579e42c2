// Request bodies of /v1/chat/completions and /v1/completions: checked field by field (an error names
// the field as `param`), then turned into what the engine runs: prompt token ids, `n` and vLLM sampling
// parameters. Fields follow the OpenAI API plus vLLM's extras (top_k, min_p, repetition_penalty,
// min_tokens, ignore_eos, stop_token_ids, skip_special_tokens, include_stop_str_in_output,
// return_tokens_as_token_ids, return_token_ids, chat_template_kwargs). Unknown fields are ignored, as
// vLLM does, so clients that send provider-specific extras keep working.
import { z } from 'zod';
import {
  resolveSamplingParams,
  type ChatMessage,
  type SamplingParams,
  type Tokenizer,
  type ToolSpec,
} from '@prime-rl/lm';
import { ApiError, badRequest } from './errors.js';

/** Most log-probabilities per position (OpenAI's limit). */
export const MAX_TOP_LOGPROBS = 20;

const nullish = <T extends z.ZodType>(t: T) => t.nullable().optional();
const int = z.int();
const stop = nullish(z.union([z.string(), z.array(z.string())]));

const sampling = {
  model: nullish(z.string()),
  n: nullish(int.min(1).max(128)),
  temperature: nullish(z.number()),
  top_p: nullish(z.number()),
  top_k: nullish(int),
  min_p: nullish(z.number()),
  presence_penalty: nullish(z.number()),
  frequency_penalty: nullish(z.number()),
  repetition_penalty: nullish(z.number()),
  seed: nullish(int),
  max_tokens: nullish(int),
  min_tokens: nullish(int),
  stop,
  stop_token_ids: nullish(z.array(int)),
  ignore_eos: nullish(z.boolean()),
  skip_special_tokens: nullish(z.boolean()),
  include_stop_str_in_output: nullish(z.boolean()),
  stream: nullish(z.boolean()),
  stream_options: nullish(z.looseObject({ include_usage: nullish(z.boolean()) })),
  return_tokens_as_token_ids: nullish(z.boolean()),
  return_token_ids: nullish(z.boolean()),
  logit_bias: nullish(z.record(z.string(), z.number())),
  best_of: nullish(int),
  user: nullish(z.string()),
};

const textPart = z.looseObject({ type: z.literal('text'), text: z.string() });
const content = z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]);
const toolCall = z.looseObject({
  id: nullish(z.string()),
  type: nullish(z.literal('function')),
  function: z.looseObject({ name: z.string(), arguments: z.union([z.string(), z.record(z.string(), z.unknown())]) }),
});
const message = z.looseObject({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
  content: nullish(content),
  name: nullish(z.string()),
  tool_calls: nullish(z.array(toolCall)),
  tool_call_id: nullish(z.string()),
  reasoning_content: nullish(z.string()),
});
const tool = z.looseObject({
  type: z.literal('function'),
  function: z.looseObject({
    name: z.string().min(1),
    description: nullish(z.string()),
    parameters: nullish(z.record(z.string(), z.unknown())),
  }),
});

export const chatRequestSchema = z.looseObject({
  ...sampling,
  messages: z.array(message).min(1),
  max_completion_tokens: nullish(int),
  logprobs: nullish(z.boolean()),
  top_logprobs: nullish(int),
  tools: nullish(z.array(tool)),
  tool_choice: nullish(z.union([z.enum(['none', 'auto', 'required']), z.looseObject({ type: z.string() })])),
  parallel_tool_calls: nullish(z.boolean()),
  response_format: nullish(z.looseObject({ type: z.string() })),
  add_generation_prompt: nullish(z.boolean()),
  continue_final_message: nullish(z.boolean()),
  chat_template_kwargs: nullish(z.record(z.string(), z.unknown())),
});

const tokenIds = z.array(int).min(1);
export const completionRequestSchema = z.looseObject({
  ...sampling,
  prompt: z.union([z.string(), z.array(z.string()).min(1), tokenIds, z.array(tokenIds).min(1)]),
  logprobs: nullish(int),
  echo: nullish(z.boolean()),
  suffix: nullish(z.string()),
});

export type ChatRequestBody = z.output<typeof chatRequestSchema>;
export type CompletionRequestBody = z.output<typeof completionRequestSchema>;

/** What the engine runs for one HTTP request, plus how to answer it. */
export interface GenerationJob {
  kind: 'chat' | 'completion';
  /** Model name to echo in the response. */
  model: string;
  /** One prompt for chat; one or more for completions (each gets n choices). */
  prompts: number[][];
  /** The prompt texts, for completions' `echo`. */
  promptTexts: string[];
  n: number;
  params: Partial<SamplingParams>;
  stream: boolean;
  includeUsage: boolean;
  /** Chat: per-token logprobs asked for (top_logprobs in params.logprobs); completions: params.logprobs. */
  wantLogprobs: boolean;
  tokensAsIds: boolean;
  returnTokenIds: boolean;
  /** Parse Hermes tool calls out of the output. */
  parseToolCalls: boolean;
  echo: boolean;
}

export interface ServingContext {
  servedModelName: string;
  tokenizer: Tokenizer;
  maxModelLength: number;
  vocabSize: number;
  enableAutoToolChoice: boolean;
  toolCallParser: string;
}

/** Parses the body with the schema; the first problem becomes a 400 naming the field. */
function check<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw badRequest('the request body must be a JSON object');
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const param = issue.path.map(String).join('.') || null;
  throw badRequest(`${param ?? 'body'}: ${issue.message}`, param);
}

function checkModel(model: string | null | undefined, ctx: ServingContext): void {
  if (model != null && model !== ctx.servedModelName)
    throw new ApiError(404, `The model \`${model}\` does not exist.`, 'model', 'not_found_error', 'model_not_found');
}

/** vLLM sampling parameters from the body; ranges are checked by resolveSamplingParams. */
function samplingParams(
  body: ChatRequestBody | CompletionRequestBody,
  maxTokens: number | null,
): Partial<SamplingParams> {
  const p: Partial<SamplingParams> = {};
  const set = <K extends keyof SamplingParams>(key: K, value: SamplingParams[K] | null | undefined): void => {
    if (value !== null && value !== undefined) p[key] = value;
  };
  set('temperature', body.temperature);
  set('topP', body.top_p);
  set('topK', body.top_k);
  set('minP', body.min_p);
  set('presencePenalty', body.presence_penalty);
  set('frequencyPenalty', body.frequency_penalty);
  set('repetitionPenalty', body.repetition_penalty);
  set('seed', body.seed);
  set('maxTokens', maxTokens);
  set('minTokens', body.min_tokens);
  if (body.stop != null) p.stop = typeof body.stop === 'string' ? [body.stop] : body.stop;
  set('stopTokenIds', body.stop_token_ids);
  set('ignoreEos', body.ignore_eos);
  set('skipSpecialTokens', body.skip_special_tokens);
  set('includeStopStrInOutput', body.include_stop_str_in_output);
  return p;
}

/** Validates the sampling values now, so a bad one is a 400 naming its field. */
function validate(params: Partial<SamplingParams>): void {
  try {
    resolveSamplingParams(params);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const field = /^([a-z_]+) /.exec(message)?.[1] ?? null;
    throw badRequest(message, field);
  }
}

function rejectUnsupported(body: ChatRequestBody | CompletionRequestBody): void {
  if (body.logit_bias != null && Object.keys(body.logit_bias).length > 0)
    throw badRequest('logit_bias is not supported by this server', 'logit_bias');
  if (body.best_of != null && body.best_of !== (body.n ?? 1))
    throw badRequest('best_of other than n is not supported by this server', 'best_of');
}

/**
 * max_tokens: checked against the context (vLLM's wording); when absent, chat gets the rest of the
 * context and completions the legacy default of 16 (capped by the context).
 */
function resolveMaxTokens(
  requested: number | null | undefined,
  promptLength: number,
  ctx: ServingContext,
  fallback: number | null,
  param: string,
): number {
  const room = ctx.maxModelLength - promptLength;
  if (requested != null) {
    if (requested < 1) throw badRequest(`${param} must be at least 1, got ${requested}`, param);
    if (promptLength + requested > ctx.maxModelLength)
      throw badRequest(
        `This model's maximum context length is ${ctx.maxModelLength} tokens. However, you requested ` +
          `${promptLength + requested} tokens (${promptLength} in the messages, ${requested} in the completion). ` +
          'Please reduce the length of the messages or completion.',
        param,
      );
    return requested;
  }
  return fallback === null ? room : Math.min(fallback, room);
}

function checkPromptLength(length: number, ctx: ServingContext, param: string): void {
  if (length >= ctx.maxModelLength)
    throw badRequest(
      `This model's maximum context length is ${ctx.maxModelLength} tokens. However, your prompt has ${length} ` +
        'tokens, which leaves no room for the completion. Please reduce the length of the prompt.',
      param,
    );
}

function chatMessages(body: ChatRequestBody): ChatMessage[] {
  return body.messages.map((m, i) => {
    let text: string | null;
    if (m.content == null) text = null;
    else if (typeof m.content === 'string') text = m.content;
    else
      text = m.content
        .map((part, j) => {
          const parsed = textPart.safeParse(part);
          if (!parsed.success)
            throw badRequest(
              `messages.${i}.content.${j}: only text content parts are supported, got type '${part.type}'`,
              `messages.${i}.content.${j}.type`,
            );
          return parsed.data.text;
        })
        .join('');
    const out: ChatMessage = { role: m.role === 'developer' ? 'system' : m.role, content: text };
    if (m.name != null) out.name = m.name;
    if (m.tool_call_id != null) out.tool_call_id = m.tool_call_id;
    if (m.reasoning_content != null) out.reasoning_content = m.reasoning_content;
    if (m.tool_calls != null)
      out.tool_calls = m.tool_calls.map((c) => ({
        ...(c.id != null ? { id: c.id } : {}),
        type: 'function' as const,
        function: { name: c.function.name, arguments: c.function.arguments },
      }));
    return out;
  });
}

export function parseChatRequest(raw: unknown, ctx: ServingContext): GenerationJob {
  const body = check(chatRequestSchema, raw);
  checkModel(body.model, ctx);
  rejectUnsupported(body);
  if (body.continue_final_message)
    throw badRequest('continue_final_message is not supported by this server', 'continue_final_message');
  if (body.response_format != null && body.response_format.type !== 'text')
    throw badRequest(
      `response_format '${body.response_format.type}' is not supported by this server`,
      'response_format',
    );
  const tools = (body.tools ?? []) as ToolSpec[];
  const choice = body.tool_choice ?? (tools.length > 0 ? 'auto' : 'none');
  if (typeof choice === 'object' || choice === 'required')
    throw badRequest(
      `tool_choice ${JSON.stringify(choice)} is not supported by this server (use "auto" or "none")`,
      'tool_choice',
    );
  if (choice === 'auto' && tools.length > 0 && !ctx.enableAutoToolChoice)
    throw badRequest(
      '"auto" tool choice requires model.enable_auto_tool_choice = true and model.tool_call_parser to be set',
      'tool_choice',
    );
  if (body.top_logprobs != null && (body.top_logprobs < 0 || body.top_logprobs > MAX_TOP_LOGPROBS))
    throw badRequest(`top_logprobs must be in [0, ${MAX_TOP_LOGPROBS}], got ${body.top_logprobs}`, 'top_logprobs');
  if (body.top_logprobs != null && body.top_logprobs > 0 && !body.logprobs)
    throw badRequest('top_logprobs needs logprobs = true', 'top_logprobs');

  const kwargs = body.chat_template_kwargs ?? {};
  let promptIds: number[];
  try {
    promptIds = ctx.tokenizer.encodeChat(chatMessages(body), {
      addGenerationPrompt: body.add_generation_prompt ?? true,
      ...(tools.length > 0 ? { tools } : {}),
      ...(typeof kwargs.enable_thinking === 'boolean' ? { enableThinking: kwargs.enable_thinking } : {}),
      extra: kwargs,
    });
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw badRequest(error instanceof Error ? error.message : String(error), 'messages');
  }
  checkPromptLength(promptIds.length, ctx, 'messages');
  const requested = body.max_completion_tokens ?? body.max_tokens;
  const param = body.max_completion_tokens != null ? 'max_completion_tokens' : 'max_tokens';
  const params = samplingParams(body, resolveMaxTokens(requested, promptIds.length, ctx, null, param));
  if (body.logprobs) params.logprobs = body.top_logprobs ?? 0;
  validate(params);
  return {
    kind: 'chat',
    model: ctx.servedModelName,
    prompts: [promptIds],
    promptTexts: [],
    n: body.n ?? 1,
    params,
    stream: body.stream ?? false,
    includeUsage: body.stream_options?.include_usage ?? false,
    wantLogprobs: body.logprobs ?? false,
    tokensAsIds: body.return_tokens_as_token_ids ?? false,
    returnTokenIds: body.return_token_ids ?? false,
    parseToolCalls: choice === 'auto' && tools.length > 0,
    echo: false,
  };
}

export function parseCompletionRequest(raw: unknown, ctx: ServingContext): GenerationJob {
  const body = check(completionRequestSchema, raw);
  checkModel(body.model, ctx);
  rejectUnsupported(body);
  if (body.suffix != null) throw badRequest('suffix is not supported by this server', 'suffix');
  if (body.logprobs != null && (body.logprobs < 0 || body.logprobs > MAX_TOP_LOGPROBS))
    throw badRequest(`logprobs must be in [0, ${MAX_TOP_LOGPROBS}], got ${body.logprobs}`, 'logprobs');
  const raws: (string | number[])[] =
    typeof body.prompt === 'string'
      ? [body.prompt]
      : typeof body.prompt[0] === 'number'
        ? [body.prompt as number[]]
        : (body.prompt as (string | number[])[]);
  const prompts: number[][] = [];
  const promptTexts: string[] = [];
  raws.forEach((p, i) => {
    const param = raws.length > 1 ? `prompt.${i}` : 'prompt';
    if (typeof p === 'string') {
      const ids = ctx.tokenizer.encode(p, { addSpecialTokens: true });
      if (ids.length === 0) throw badRequest(`${param}: the prompt is empty`, param);
      prompts.push(ids);
      promptTexts.push(p);
    } else {
      for (const id of p)
        if (id < 0 || id >= ctx.vocabSize)
          throw badRequest(`${param}: token id ${id} is outside the vocabulary [0, ${ctx.vocabSize})`, param);
      prompts.push(p);
      promptTexts.push(ctx.tokenizer.decode(p));
    }
    checkPromptLength(prompts[i]!.length, ctx, param);
  });
  const longest = Math.max(...prompts.map((p) => p.length));
  const params = samplingParams(body, resolveMaxTokens(body.max_tokens, longest, ctx, 16, 'max_tokens'));
  if (body.logprobs != null) params.logprobs = body.logprobs;
  validate(params);
  return {
    kind: 'completion',
    model: ctx.servedModelName,
    prompts,
    promptTexts,
    n: body.n ?? 1,
    params,
    stream: body.stream ?? false,
    includeUsage: body.stream_options?.include_usage ?? false,
    wantLogprobs: body.logprobs != null,
    tokensAsIds: body.return_tokens_as_token_ids ?? false,
    returnTokenIds: body.return_token_ids ?? false,
    parseToolCalls: false,
    echo: body.echo ?? false,
  };
}
