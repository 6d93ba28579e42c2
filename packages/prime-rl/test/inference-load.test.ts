// A bounded load and fault test of the real `inference` binary (a child process on 127.0.0.1 with the
// shipped tiny model): 2,400 mixed requests at 64-way concurrency through the official `openai` client
// and raw HTTP — good chat and completion requests, streams read to the end, streams dropped mid-way,
// malformed JSON, bad sampling values, unknown models and over-long prompts. Every good request is
// answered, every bad one gets a 4xx in OpenAI's shape, nothing crashes, and the server's resident
// memory stays flat between the first and the last part of the load.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';

const PKG = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const REPO = path.resolve(PKG, '..', '..');
const MODEL = 'examples/reverse-text/models/sft';
const SYSTEM = 'Reverse the text character-by-character. Put your answer in <reversed_text> tags.';
// LOAD_TOTAL=16000 makes it a longer soak (resident memory then stays within 365–390 MiB).
const TOTAL = Number(process.env.LOAD_TOTAL ?? 2400);
const CONCURRENCY = 64;
const scratch = mkdtempSync(path.join(os.tmpdir(), 'prl-load-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

type Outcome = 'ok' | 'rejected' | 'dropped';

function residentBytes(metrics: string): number {
  let total = 0;
  for (const m of metrics.matchAll(
    /^(?:inference_worker_resident_memory_bytes\{[^}]*\}|process_resident_memory_bytes) (\d+)/gm,
  ))
    total += Number(m[1]);
  return total;
}

test('2,400 mixed good and bad requests at 64-way concurrency: all answered, no crash, memory flat', async () => {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      path.join(PKG, 'bin', 'inference.js'),
      '@',
      'examples/reverse-text/infer.toml',
      '--server.port',
      String(port),
      '--output-dir',
      scratch,
      '--vllm-extra',
      '{"num_threads": 1, "max_num_seqs": 32}',
    ],
    { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    const url = `http://127.0.0.1:${port}`;
    for (let i = 0; !stderr.includes('serving '); i++) {
      if (child.exitCode !== null || i > 600) assert.fail(`the server did not start:\n${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 120_000 });
    const messages = (i: number): OpenAI.ChatCompletionMessageParam[] => [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: `request ${i} ${'ab'.repeat(i % 7)}` },
    ];
    const expectStatus = async (promise: Promise<unknown>, status: number): Promise<Outcome> => {
      try {
        await promise;
      } catch (error) {
        assert.ok(error instanceof OpenAI.APIError, String(error));
        assert.equal(error.status, status, error.message);
        assert.equal(typeof (error.error as { message?: unknown }).message, 'string');
        return 'rejected';
      }
      assert.fail(`expected status ${status}`);
    };

    const one = async (i: number): Promise<Outcome> => {
      const maxTokens = 1 + (i % 12);
      switch (i % 10) {
        case 0:
        case 1:
        case 2: {
          const res = await client.chat.completions.create({
            model: MODEL,
            messages: messages(i),
            max_tokens: maxTokens,
            logprobs: i % 2 === 0,
            seed: i,
          });
          const c = res.choices[0]!;
          assert.ok(typeof c.message.content === 'string');
          assert.ok(['stop', 'length'].includes(c.finish_reason));
          assert.ok(res.usage!.completion_tokens >= 1 && res.usage!.completion_tokens <= maxTokens);
          if (i % 2 === 0) assert.equal(c.logprobs!.content!.length, res.usage!.completion_tokens);
          return 'ok';
        }
        case 3: {
          const res = await client.completions.create({
            model: MODEL,
            prompt: `text ${i}`,
            max_tokens: maxTokens,
            n: 2,
          });
          assert.equal(res.choices.length, 2);
          return 'ok';
        }
        case 4: {
          const stream = await client.chat.completions.create({
            model: MODEL,
            messages: messages(i),
            max_tokens: maxTokens,
            stream: true,
          });
          let finish: string | null = null;
          for await (const chunk of stream) finish = chunk.choices[0]?.finish_reason ?? finish;
          assert.ok(finish === 'stop' || finish === 'length');
          return 'ok';
        }
        case 5: {
          // Drop the connection after the first chunk of a long stream.
          const controller = new AbortController();
          const stream = await client.chat.completions.create(
            { model: MODEL, messages: messages(i), max_tokens: 500, stream: true, ...({ ignore_eos: true } as object) },
            { signal: controller.signal },
          );
          try {
            for await (const _ of stream) controller.abort();
          } catch {
            // aborted
          }
          return 'dropped';
        }
        case 6: {
          const res = await fetch(`${url}/v1/chat/completions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: '{"model": "x", "messages": [{"role": "user", "content": "unterminated',
          });
          assert.equal(res.status, 400);
          const body = (await res.json()) as { error: { message: string } };
          assert.match(body.error.message, /not valid JSON/);
          return 'rejected';
        }
        case 7:
          return expectStatus(
            client.chat.completions.create({ model: MODEL, messages: messages(i), temperature: -1 }),
            400,
          );
        case 8:
          return expectStatus(client.chat.completions.create({ model: 'other-model', messages: messages(i) }), 404);
        default:
          return expectStatus(client.completions.create({ model: MODEL, prompt: 'x'.repeat(1100) }), 400);
      }
    };

    const counts: Record<Outcome, number> = { ok: 0, rejected: 0, dropped: 0 };
    let next = 0;
    const runUntil = async (end: number): Promise<void> => {
      const lanes = Array.from({ length: CONCURRENCY }, async () => {
        while (next < end) counts[await one(next++)]++;
      });
      await Promise.all(lanes);
    };
    const metrics = async () => fetch(`${url}/metrics`).then((r) => r.text());

    const gauge = (metrics: string, name: string): number => {
      const m = new RegExp(`^${name}(?:\\{rank="0"\\})? (\\d+)$`, 'm').exec(metrics);
      assert.ok(m, `${name} in /metrics`);
      return Number(m[1]);
    };
    // Warm up (the first quarter), then measure at the end of each of the other three.
    await runUntil(TOTAL / 4);
    const warm = await metrics();
    const resident = [residentBytes(warm)];
    for (let quarter = 2; quarter <= 4; quarter++) {
      await runUntil((TOTAL * quarter) / 4);
      resident.push(residentBytes(await metrics()));
    }
    const final = await metrics();

    assert.equal(counts.ok + counts.rejected + counts.dropped, TOTAL);
    assert.equal(counts.ok, TOTAL / 2);
    assert.equal(counts.rejected, (TOTAL * 4) / 10);
    assert.equal(child.exitCode, null, 'the server is still up');
    for (const name of [
      'inference_num_requests_running',
      'inference_num_requests_waiting',
      'inference_requests_in_flight',
    ])
      assert.equal(gauge(final, name), 0, name);
    // Nothing accumulates per request: the worker holds exactly the tensors it held after warm-up
    // (weights and KV cache), and the free-buffer pool stays under its limit.
    assert.equal(gauge(final, 'inference_worker_live_tensors'), gauge(warm, 'inference_worker_live_tensors'));
    assert.ok(gauge(final, 'inference_worker_pooled_bytes') <= 64 * 2 ** 20);
    const ok = await client.chat.completions.create({ model: MODEL, messages: messages(0), max_tokens: 3 });
    assert.equal(ok.choices.length, 1);
    // Resident memory: flat up to garbage-collector timing (tens of MiB either way).
    const growth = (Math.max(...resident) - resident[0]!) / 2 ** 20;
    process.stdout.write(
      `# resident memory after each quarter from the first: ${resident.map((b) => (b / 2 ** 20).toFixed(1)).join(', ')} MiB\n`,
    );
    assert.ok(growth < 96, `resident memory grew by ${growth.toFixed(1)} MiB`);
  } finally {
    child.kill('SIGTERM');
    const code = await exited;
    assert.equal(code, 0, `the server exits cleanly on SIGTERM:\n${stderr}`);
  }
});
