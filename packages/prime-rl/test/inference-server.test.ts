// The inference server for real: `startInference` on 127.0.0.1 with the shipped tiny model (engine
// workers are child processes), driven with the official `openai` client. Covers chat and completions
// with logprobs and token ids, streaming, n, errors in OpenAI's shape, logprob parity with the
// trainer-side computation, weight updates that switch models without a restart, pause/resume, client
// disconnects, metrics and data parallelism.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import * as T from '@prime-rl/tensor';
import { Tokenizer, loadPretrained, savePretrained, type DecoderModel } from '@prime-rl/lm';
import { resolveConfig } from '@prime-rl/config';
import { inferenceSpec } from '../src/config/index.js';
import { startInference, type RunningInference } from '../src/inference/run.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
const MODEL = 'examples/reverse-text/models/sft';
const SYSTEM = 'Reverse the text character-by-character. Put your answer in <reversed_text> tags.';
const scratch = mkdtempSync(path.join(os.tmpdir(), 'prl-infer-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

function inferenceConfig(argv: string[] = []) {
  return resolveConfig(inferenceSpec, {
    env: {},
    argv: ['--model.name', MODEL, '--output-dir', path.join(scratch, 'out'), '--seed', '7', ...argv],
  }).config;
}

const messages = (text: string): OpenAI.ChatCompletionMessageParam[] => [
  { role: 'system', content: SYSTEM },
  { role: 'user', content: text },
];

/** log_softmax(logits / T) of each completion token, by one full forward of prompt + completion. */
function trainerLogprobs(model: DecoderModel, prompt: number[], completion: number[], temperature: number): number[] {
  const ids = [...prompt, ...completion];
  return T.tidy(() =>
    T.noGrad(() => {
      const logits = model.forward(T.tensor(Int32Array.from(ids), [1, ids.length])).toArray() as Float32Array;
      const vocab = model.config.vocabSize;
      return completion.map((token, i) => {
        const row = logits.subarray((prompt.length - 1 + i) * vocab, (prompt.length + i) * vocab);
        let max = -Infinity;
        for (const x of row) max = Math.max(max, x / temperature);
        let sum = 0;
        for (const x of row) sum += Math.exp(x / temperature - max);
        return row[token]! / temperature - max - Math.log(sum);
      });
    }),
  );
}

/** An admin or error response body: {status} or OpenAI's {error}. */
interface Reply {
  status?: string;
  error?: { message: string; param: string | null };
}

async function post(url: string, body: unknown, init: RequestInit = {}): Promise<{ status: number; json: Reply }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...init,
  });
  return { status: res.status, json: (await res.json()) as Reply };
}

describe('inference server (shipped tiny model, dp 1)', () => {
  let server: RunningInference;
  let client: OpenAI;
  let model: DecoderModel;
  let tokenizer: Tokenizer;

  before(async () => {
    T.useBackend('cpu', { threads: 1 });
    server = await startInference(inferenceConfig(), { cwd: REPO, port: 0, stream: devNull() });
    client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    model = (await loadPretrained(path.join(REPO, MODEL))).model;
    tokenizer = await Tokenizer.fromDir(path.join(REPO, MODEL));
  });
  after(async () => {
    await server.close();
    model.dispose();
  });

  test('GET /health and /v1/models', async () => {
    assert.equal((await fetch(`${server.url}/health`)).status, 200);
    const models = await client.models.list();
    assert.deepEqual(
      models.data.map((m) => m.id),
      [MODEL],
    );
  });

  test('chat completion: greedy answer with logprobs, top logprobs and token ids', async () => {
    const res = await client.chat.completions.create({
      model: MODEL,
      messages: messages('hello world'),
      temperature: 0,
      max_tokens: 40,
      logprobs: true,
      top_logprobs: 3,
      // vLLM extras, sent in the body as the orchestrator does.
      ...({ return_token_ids: true } as object),
    });
    const choice = res.choices[0]!;
    assert.match(choice.message.content ?? '', /<reversed_text>/);
    assert.ok(['stop', 'length'].includes(choice.finish_reason));
    const raw = res as unknown as { prompt_token_ids: number[]; choices: { token_ids: number[] }[] };
    const expectedPrompt = tokenizer.encodeChat(
      messages('hello world').map((m) => ({ role: m.role as 'system' | 'user', content: m.content as string })),
      { addGenerationPrompt: true },
    );
    assert.deepEqual(raw.prompt_token_ids, expectedPrompt);
    const ids = raw.choices[0]!.token_ids;
    assert.equal(ids.length, res.usage!.completion_tokens);
    assert.equal(res.usage!.prompt_tokens, expectedPrompt.length);
    const content = choice.logprobs!.content!;
    assert.equal(content.length, ids.length);
    for (const entry of content) {
      assert.equal(entry.top_logprobs.length, 3);
      // Greedy: the chosen token is the most likely one.
      assert.equal(entry.top_logprobs[0]!.token, entry.token);
      assert.ok(entry.logprob <= 0);
    }
    assert.equal(tokenizer.decode(ids, { skipSpecialTokens: true }), choice.message.content);
  });

  test('logprobs equal the trainer-side log-probabilities of the same tokens (temperature 0.7)', async () => {
    for (const text of ['abc def', 'the quick brown fox']) {
      const res = await client.chat.completions.create({
        model: MODEL,
        messages: messages(text),
        temperature: 0.7,
        seed: 11,
        max_tokens: 48,
        logprobs: true,
        ...({ return_tokens_as_token_ids: true, return_token_ids: true } as object),
      });
      const raw = res as unknown as { prompt_token_ids: number[]; choices: { token_ids: number[] }[] };
      const ids = raw.choices[0]!.token_ids;
      const served = res.choices[0]!.logprobs!.content!.map((c) => c.logprob);
      assert.deepEqual(
        res.choices[0]!.logprobs!.content!.map((c) => c.token),
        ids.map((id) => `token_id:${id}`),
      );
      const expected = trainerLogprobs(model, raw.prompt_token_ids, ids, 0.7);
      const worst = Math.max(...served.map((lp, i) => Math.abs(lp - expected[i]!)));
      assert.ok(worst < 1e-4, `largest |served − trainer| logprob difference ${worst}`);
    }
  });

  test('completions: text and token-id prompts, n choices, echo, legacy logprobs', async () => {
    const ids = tokenizer.encode('hello');
    const byIds = await client.completions.create({
      model: MODEL,
      prompt: ids,
      max_tokens: 6,
      temperature: 0,
      logprobs: 2,
    });
    const byText = await client.completions.create({ model: MODEL, prompt: 'hello', max_tokens: 6, temperature: 0 });
    assert.equal(byIds.choices[0]!.text, byText.choices[0]!.text);
    assert.equal(byIds.choices[0]!.logprobs!.tokens!.length, 6);
    assert.equal(Object.keys(byIds.choices[0]!.logprobs!.top_logprobs![0]!).length, 2);
    const seeded = { model: MODEL, prompt: ['ab', 'cd'], n: 2, max_tokens: 5, seed: 3, echo: true };
    const many = await client.completions.create(seeded);
    assert.equal(many.choices.length, 4);
    assert.deepEqual(
      many.choices.map((c) => c.index),
      [0, 1, 2, 3],
    );
    assert.ok(many.choices[0]!.text.startsWith('ab') && many.choices[2]!.text.startsWith('cd'));
    assert.equal(many.usage!.completion_tokens, 20);
    // The same seed gives the same choices again.
    const again = await client.completions.create(seeded);
    assert.deepEqual(
      again.choices.map((c) => c.text),
      many.choices.map((c) => c.text),
    );
  });

  test('streaming chat equals the whole answer; usage comes last; stop strings cut the text', async () => {
    const params = { model: MODEL, messages: messages('stream me'), temperature: 0, max_tokens: 30 };
    const whole = await client.chat.completions.create(params);
    const stream = await client.chat.completions.create({
      ...params,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage;
      for (const c of chunk.choices) {
        text += c.delta.content ?? '';
        finish = c.finish_reason ?? finish;
      }
    }
    assert.equal(text, whole.choices[0]!.message.content);
    assert.equal(finish, whole.choices[0]!.finish_reason);
    assert.deepEqual(usage, whole.usage);
    const stopped = await client.chat.completions.create({ ...params, stop: ['>'] });
    assert.equal(stopped.choices[0]!.finish_reason, 'stop');
    assert.equal((stopped.choices[0] as unknown as { stop_reason: string }).stop_reason, '>');
    assert.ok(!stopped.choices[0]!.message.content!.includes('>'));
  });

  test('bad requests get 4xx in OpenAI error shape, and the server keeps serving', async () => {
    await assert.rejects(
      client.chat.completions.create({ model: 'no-such-model', messages: messages('x') }),
      (e: InstanceType<typeof OpenAI.NotFoundError>) => e.status === 404 && /does not exist/.test(e.message),
    );
    await assert.rejects(
      client.chat.completions.create({ model: MODEL, messages: messages('x'), top_p: 1.5 }),
      (e: InstanceType<typeof OpenAI.BadRequestError>) =>
        e.status === 400 && (e.error as { param: string }).param === 'top_p',
    );
    await assert.rejects(
      client.chat.completions.create({ model: MODEL, messages: messages('x'.repeat(2000)) }),
      (e: InstanceType<typeof OpenAI.BadRequestError>) =>
        e.status === 400 && /maximum context length is 1024/.test(e.message),
    );
    await assert.rejects(
      client.chat.completions.create({ model: MODEL, messages: messages('x'), max_tokens: 5000 }),
      (e: InstanceType<typeof OpenAI.BadRequestError>) => e.status === 400 && /5000 in the completion/.test(e.message),
    );
    await assert.rejects(
      client.completions.create({ model: MODEL, prompt: [1, 2, 99999] }),
      (e: InstanceType<typeof OpenAI.BadRequestError>) => e.status === 400 && /outside the vocabulary/.test(e.message),
    );
    await assert.rejects(
      client.chat.completions.create({
        model: MODEL,
        messages: messages('x'),
        tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
      }),
      (e: InstanceType<typeof OpenAI.BadRequestError>) => e.status === 400 && /enable_auto_tool_choice/.test(e.message),
    );
    const malformed = await post(`${server.url}/v1/chat/completions`, '{"messages": [');
    assert.equal(malformed.status, 400);
    assert.match(malformed.json.error!.message, /not valid JSON/);
    const wrongType = await post(`${server.url}/v1/chat/completions`, { messages: [{ role: 'user', content: 1 }] });
    assert.equal(wrongType.status, 400);
    assert.equal(wrongType.json.error!.param, 'messages.0.content');
    assert.equal((await fetch(`${server.url}/v1/nothing`)).status, 404);
    assert.equal((await fetch(`${server.url}/v1/chat/completions`)).status, 405);
    const ok = await client.chat.completions.create({ model: MODEL, messages: messages('still here'), max_tokens: 4 });
    assert.equal(ok.choices.length, 1);
  });

  test('/update_weights switches weights without a restart; /reload_weights goes back to the base', async () => {
    // A second model: the shipped weights with the final norm scaled, saved in Hugging Face layout.
    const changed = (await loadPretrained(path.join(REPO, MODEL))).model;
    const norm = changed.params.get('model.norm.weight')!;
    const scaled = T.keep(T.mul(norm, T.scalar(1.7)));
    changed.params.set('model.norm.weight', scaled);
    norm.dispose();
    const dir = path.join(scratch, 'weights', 'step_1');
    await savePretrained(changed, dir);

    const ask = async () => {
      const res = await client.chat.completions.create({
        model: MODEL,
        messages: messages('update'),
        temperature: 1,
        seed: 5,
        max_tokens: 24,
        logprobs: true,
        ...({ return_token_ids: true } as object),
      });
      const raw = res as unknown as { prompt_token_ids: number[]; choices: { token_ids: number[] }[] };
      return {
        prompt: raw.prompt_token_ids,
        ids: raw.choices[0]!.token_ids,
        logprobs: res.choices[0]!.logprobs!.content!.map((c) => c.logprob),
      };
    };
    const before = await ask();
    const update = await post(`${server.url}/update_weights`, { weight_dir: dir });
    assert.deepEqual(update, { status: 200, json: { status: 'ok' } });
    const afterUpdate = await ask();
    assert.notDeepEqual(afterUpdate.logprobs, before.logprobs);
    const expected = trainerLogprobs(changed, afterUpdate.prompt, afterUpdate.ids, 1);
    assert.ok(Math.max(...afterUpdate.logprobs.map((lp, i) => Math.abs(lp - expected[i]!))) < 1e-4);

    const missing = await post(`${server.url}/update_weights`, { weight_dir: path.join(scratch, 'nope') });
    assert.equal(missing.status, 400);
    assert.match(missing.json.error!.message, /not a directory/);
    const noField = await post(`${server.url}/update_weights`, {});
    assert.equal(noField.status, 400);
    assert.equal(noField.json.error!.param, 'weight_dir');

    assert.equal((await post(`${server.url}/reload_weights`, {})).status, 200);
    const reloaded = await ask();
    assert.deepEqual(reloaded.ids, before.ids);
    assert.deepEqual(reloaded.logprobs, before.logprobs);
    changed.dispose();
  });

  test('a weight update during generation waits for running sequences: no sequence mixes policies', async () => {
    const dir = path.join(scratch, 'weights', 'mid');
    const other = (await loadPretrained(path.join(REPO, MODEL))).model;
    const emb = other.params.get('model.layers.0.mlp.down_proj.weight')!;
    other.params.set('model.layers.0.mlp.down_proj.weight', T.keep(T.mul(emb, T.scalar(-1))));
    emb.dispose();
    await savePretrained(other, dir);
    const params = {
      model: MODEL,
      messages: messages('long one'),
      temperature: 1,
      seed: 9,
      max_tokens: 400,
      logprobs: true,
      ...({ return_token_ids: true, ignore_eos: true } as object),
    };
    // Start a long generation, ask for the update while it runs, then check the sequence against
    // the old weights only.
    const running = client.chat.completions.create(params);
    await waitForRunning(server.url, 1);
    const update = post(`${server.url}/update_weights`, { weight_dir: dir });
    const res = await running;
    assert.equal((await update).status, 200);
    const raw = res as unknown as { prompt_token_ids: number[]; choices: { token_ids: number[] }[] };
    const served = res.choices[0]!.logprobs!.content!.map((c) => c.logprob);
    const old = trainerLogprobs(model, raw.prompt_token_ids, raw.choices[0]!.token_ids, 1);
    assert.ok(
      Math.max(...served.map((lp, i) => Math.abs(lp - old[i]!))) < 1e-4,
      'the whole sequence is on the old weights',
    );
    assert.equal((await post(`${server.url}/reload_weights`, {})).status, 200);
    other.dispose();
  });

  test('pause (keep) holds new requests until resume; updating weights while frozen is refused', async () => {
    const params = { model: MODEL, messages: messages('pause'), max_tokens: 300, ...({ ignore_eos: true } as object) };
    const running = client.chat.completions.create(params);
    await waitForRunning(server.url, 1);
    assert.deepEqual(await post(`${server.url}/pause?mode=keep`, {}), { status: 200, json: { status: 'paused' } });
    const paused = await fetch(`${server.url}/is_paused`).then((r) => r.json());
    assert.deepEqual(paused, { is_paused: true });
    const conflict = await post(`${server.url}/update_weights`, { weight_dir: path.join(REPO, MODEL) });
    assert.equal(conflict.status, 409);
    assert.match(conflict.json.error!.message, /frozen by pause/);
    let answered = false;
    const queued = client.chat.completions
      .create({ model: MODEL, messages: messages('queued'), max_tokens: 3 })
      .then(() => (answered = true));
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(answered, false, 'nothing runs while paused');
    assert.deepEqual(await post(`${server.url}/resume`, {}), { status: 200, json: { status: 'resumed' } });
    await queued;
    const res = await running;
    assert.equal(res.usage!.completion_tokens, 300);
    const aborting = client.chat.completions.create(params);
    await waitForRunning(server.url, 1);
    assert.equal((await post(`${server.url}/pause?mode=abort`, {})).status, 200);
    assert.equal((await aborting).choices[0]!.finish_reason, 'abort');
    assert.equal((await post(`${server.url}/resume`, {})).status, 200);
    assert.equal((await post(`${server.url}/pause?mode=sideways`, {})).status, 400);
  });

  test('a client that disconnects mid-stream cancels its sequence', async () => {
    const controller = new AbortController();
    const stream = await client.chat.completions.create(
      { model: MODEL, messages: messages('gone'), max_tokens: 900, stream: true, ...({ ignore_eos: true } as object) },
      { signal: controller.signal },
    );
    let chunks = 0;
    try {
      for await (const _ of stream) if (++chunks === 3) controller.abort();
    } catch {
      // The client may report the abort as an error or just end the stream.
    }
    assert.ok(chunks >= 3 && chunks < 900);
    // The sequence leaves the engine long before its 900 tokens.
    let metrics = '';
    for (let i = 0; i < 100; i++) {
      metrics = await fetch(`${server.url}/metrics`).then((r) => r.text());
      if (/inference_num_requests_running\{rank="0"\} 0/.test(metrics) && /finish_reason="abort"/.test(metrics)) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.match(metrics, /inference_client_disconnects_total [1-9]/);
    assert.match(metrics, /inference_num_requests_running\{rank="0"\} 0/);
    assert.match(metrics, /inference_sequences_finished_total\{finish_reason="abort"\} [1-9]/);
  });
});

describe('inference server options', () => {
  test('parallel.dp = 2 serves from two engine workers behind one port', async () => {
    const server = await startInference(inferenceConfig(['--parallel.dp', '2']), {
      cwd: REPO,
      port: 0,
      stream: devNull(),
    });
    try {
      const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          client.chat.completions.create({
            model: MODEL,
            messages: messages(`dp ${i}`),
            temperature: 0,
            max_tokens: 12,
          }),
        ),
      );
      const alone = await client.chat.completions.create({
        model: MODEL,
        messages: messages('dp 3'),
        temperature: 0,
        max_tokens: 12,
      });
      assert.equal(answers[3]!.choices[0]!.message.content, alone.choices[0]!.message.content);
      const metrics = await fetch(`${server.url}/metrics`).then((r) => r.text());
      for (const rank of [0, 1]) {
        const m = new RegExp(`inference_generation_tokens_total\\{rank="${rank}"\\} (\\d+)`).exec(metrics);
        assert.ok(m && Number(m[1]) > 0, `rank ${rank} generated tokens`);
      }
    } finally {
      await server.close();
    }
  });

  test('tools with auto tool choice render into the prompt; an API key guards every route but /health', async () => {
    const server = await startInference(inferenceConfig(['--model.enable-auto-tool-choice']), {
      cwd: REPO,
      port: 0,
      stream: devNull(),
      env: { INFERENCE_API_KEY: 'sk-test-123' },
    });
    try {
      const anonymous = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'wrong', maxRetries: 0 });
      await assert.rejects(
        anonymous.models.list(),
        (e: InstanceType<typeof OpenAI.AuthenticationError>) => e.status === 401,
      );
      assert.equal((await fetch(`${server.url}/health`)).status, 200);
      const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'sk-test-123', maxRetries: 0 });
      const res = await client.chat.completions.create({
        model: MODEL,
        messages: messages('tool'),
        max_tokens: 8,
        tools: [
          {
            type: 'function',
            function: { name: 'lookup', description: 'Look up a word', parameters: { type: 'object' } },
          },
        ],
        ...({ return_token_ids: true } as object),
      });
      const prompt = (res as unknown as { prompt_token_ids: number[] }).prompt_token_ids;
      const tokenizer = await Tokenizer.fromDir(path.join(REPO, MODEL));
      assert.match(tokenizer.decode(prompt), /"name": "lookup"/);
    } finally {
      await server.close();
    }
  });

  test('settings the engine cannot honour are refused before anything starts', async () => {
    const cases: [string[], RegExp][] = [
      [['--model.dtype', 'bfloat16'], /computes in float32/],
      [['--model.max-model-len', '5000'], /exceeds the model's max_position_embeddings \(1024\)/],
      [['--vllm-extra', '{"enable_prefix_caching": true}'], /unknown engine argument\(s\) enable_prefix_caching/],
      [['--server.host', '0.0.0.0'], /set an API key in INFERENCE_API_KEY/],
      [['--gpu-memory-utilization', '0.0000001'], /raise gpu_memory_utilization/],
    ];
    for (const [argv, message] of cases)
      await assert.rejects(
        startInference(inferenceConfig(argv), { cwd: REPO, port: 0, stream: devNull(), env: {} }),
        message,
      );
  });
});

/** Polls /metrics until `n` sequences are running on rank 0. */
async function waitForRunning(url: string, n: number): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const metrics = await fetch(`${url}/metrics`).then((r) => r.text());
    if (metrics.includes(`inference_num_requests_running{rank="0"} ${n}\n`)) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`never saw ${n} running sequences`);
}

/** A terminal stream that drops the server's log lines (they still go to output_dir/logs). */
function devNull(): NodeJS.WritableStream {
  return { write: () => true } as unknown as NodeJS.WritableStream;
}
