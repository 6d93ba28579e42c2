// Hermes tool calls: the parser (content before the first call, several calls, unterminated last call,
// malformed JSON left as content) and how the server answers them, whole and streamed, through the
// official client. The tiny shipped model never writes tool calls, so these server tests put the HTTP
// front end on a scripted engine that "generates" a fixed text token by token; the real engine path
// is covered by inference-server.test.ts.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { Tokenizer, type GenerationResult, type SamplingParams } from '@prime-rl/lm';
import { parseHermesToolCalls, streamableContentLength } from '../src/inference/tool-calls.js';
import { InferenceServer } from '../src/inference/server.js';
import type { Engines, RequestHandlers } from '../src/inference/engine-pool.js';
import type { WorkerStats } from '../src/inference/protocol.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
const MODEL = 'examples/reverse-text/models/sft';

test('parser: content, then one or more calls; arguments come back as a JSON string', () => {
  const one = parseHermesToolCalls(
    'Let me look.\n<tool_call>\n{"name": "lookup", "arguments": {"word": "cat", "n": 2}}\n</tool_call>',
  );
  assert.equal(one.content, 'Let me look.\n');
  assert.equal(one.toolCalls.length, 1);
  assert.equal(one.toolCalls[0]!.function.name, 'lookup');
  assert.deepEqual(JSON.parse(one.toolCalls[0]!.function.arguments), { word: 'cat', n: 2 });
  assert.match(one.toolCalls[0]!.id, /^chatcmpl-tool-[0-9a-f]{32}$/);

  const two = parseHermesToolCalls(
    '<tool_call>{"name": "a", "arguments": {}}</tool_call>\n<tool_call>{"name": "b", "arguments": "{\\"x\\": 1}"}',
  );
  assert.equal(two.content, null, 'no text before the first call');
  assert.deepEqual(
    two.toolCalls.map((c) => [c.function.name, c.function.arguments]),
    [
      ['a', '{}'],
      ['b', '{"x": 1}'],
    ],
  );
  assert.notEqual(two.toolCalls[0]!.id, two.toolCalls[1]!.id);
});

test('parser: malformed calls leave the whole output as content', () => {
  for (const text of [
    '<tool_call>{"name": "a", "arguments": {</tool_call>',
    '<tool_call>["not", "an", "object"]</tool_call>',
    '<tool_call>{"arguments": {}}</tool_call>',
    'fine <tool_call>{"name": ""}</tool_call>',
  ])
    assert.deepEqual(parseHermesToolCalls(text), { content: text, toolCalls: [] });
  assert.deepEqual(parseHermesToolCalls('plain'), { content: 'plain', toolCalls: [] });
});

test('streaming holds back what could still become a <tool_call>', () => {
  assert.equal(streamableContentLength('hello'), 5);
  assert.equal(streamableContentLength('hello <tool'), 6);
  assert.equal(streamableContentLength('hello <'), 6);
  assert.equal(streamableContentLength('a <tool_call>{"na'), 2);
  assert.equal(streamableContentLength('a <b>'), 5);
});

/** Engines that answer every request with `script`'s text, one tokenizer token per step. */
class ScriptedEngines implements Engines {
  readonly size = 1;
  inFlight = 0;
  script = '';
  constructor(private readonly tokenizer: Tokenizer) {}

  stats(): WorkerStats[] {
    const zero = { running: 0, waiting: 0, cacheUsage: 0, promptTokens: 0, generationTokens: 0, steps: 0 };
    return [{ ...zero, residentBytes: 0, liveTensors: 0, pooledBytes: 0 }];
  }

  submit(promptIds: number[], _params: Partial<SamplingParams>, handlers: RequestHandlers): () => void {
    const ids = this.tokenizer.encode(this.script);
    this.inFlight++;
    let i = 0;
    const timer = setInterval(() => {
      if (i < ids.length) {
        const id = ids[i++]!;
        handlers.onTokens([{ tokenId: id, logprob: -0.5, top: null, text: this.tokenizer.decode([id]) }]);
        return;
      }
      clearInterval(timer);
      this.inFlight--;
      const result: GenerationResult = {
        promptIds,
        tokenIds: ids,
        logprobs: ids.map(() => -0.5),
        topLogprobs: null,
        text: this.script,
        finishReason: 'stop',
        stopReason: null,
      };
      handlers.onFinish(result);
    }, 1);
    return () => clearInterval(timer);
  }

  async admin(): Promise<void> {}
}

describe('tool calls through the server', () => {
  let server: InferenceServer;
  let engines: ScriptedEngines;
  let client: OpenAI;
  const tools: OpenAI.ChatCompletionTool[] = [
    {
      type: 'function',
      function: { name: 'lookup', parameters: { type: 'object', properties: { word: { type: 'string' } } } },
    },
  ];
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'look up cat' }];
  const CALL = 'Sure.<tool_call>\n{"name": "lookup", "arguments": {"word": "cat"}}\n</tool_call>';

  before(async () => {
    const tokenizer = await Tokenizer.fromDir(path.join(REPO, MODEL));
    engines = new ScriptedEngines(tokenizer);
    server = new InferenceServer({
      pool: engines,
      modelRoot: MODEL,
      context: {
        servedModelName: MODEL,
        tokenizer,
        maxModelLength: 1024,
        vocabSize: 272,
        enableAutoToolChoice: true,
        toolCallParser: 'hermes',
      },
    });
    const address = await server.listen(0, '127.0.0.1');
    client = new OpenAI({ baseURL: `http://127.0.0.1:${address.port}/v1`, apiKey: 'unused', maxRetries: 0 });
  });
  after(() => server.close());

  test('a whole answer carries tool_calls and finish_reason tool_calls', async () => {
    engines.script = CALL;
    const res = await client.chat.completions.create({ model: MODEL, messages, tools });
    const choice = res.choices[0]!;
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.equal(choice.message.content, 'Sure.');
    assert.equal(choice.message.tool_calls!.length, 1);
    const call = choice.message.tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
    assert.equal(call.function.name, 'lookup');
    assert.deepEqual(JSON.parse(call.function.arguments), { word: 'cat' });
  });

  test('streamed: content up to the call, then one tool_calls delta; the client assembles it', async () => {
    engines.script = CALL;
    const stream = await client.chat.completions.create({ model: MODEL, messages, tools, stream: true });
    let content = '';
    const calls: OpenAI.ChatCompletionChunk.Choice.Delta.ToolCall[] = [];
    let finish: string | null = null;
    for await (const chunk of stream) {
      const c = chunk.choices[0];
      if (!c) continue;
      content += c.delta.content ?? '';
      calls.push(...(c.delta.tool_calls ?? []));
      finish = c.finish_reason ?? finish;
    }
    assert.equal(content, 'Sure.');
    assert.equal(finish, 'tool_calls');
    assert.equal(calls.length, 1);
    assert.equal(calls[0]!.function!.name, 'lookup');
    assert.equal(calls[0]!.index, 0);
  });

  test('malformed tool-call output stays content; tool_choice none parses nothing', async () => {
    engines.script = 'Hmm <tool_call>{"name": lookup}</tool_call>';
    const bad = await client.chat.completions.create({ model: MODEL, messages, tools });
    assert.equal(bad.choices[0]!.finish_reason, 'stop');
    assert.equal(bad.choices[0]!.message.content, engines.script);
    assert.deepEqual(bad.choices[0]!.message.tool_calls, []);
    engines.script = CALL;
    const none = await client.chat.completions.create({ model: MODEL, messages, tools, tool_choice: 'none' });
    assert.equal(none.choices[0]!.message.content, CALL);
    await assert.rejects(
      client.chat.completions.create({ model: MODEL, messages, tools, tool_choice: 'required' }),
      /tool_choice "required" is not supported/,
    );
  });
});
