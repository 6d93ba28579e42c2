// Hugging Face model directories: loading reproduces PyTorch's logits (Qwen3 in bf16, sharded Llama
// with biases), saving and loading back gives identical weights and logits, and bad directories
// fail with errors that name the file and field.
import assert from 'node:assert/strict';
import { readdir, readFile, rm, writeFile, cp } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import * as T from '@prime-rl/tensor';
import {
  DecoderModel,
  KVCache,
  fromHfConfig,
  loadPretrained,
  readSafetensors,
  savePretrained,
  type StoredTensor,
} from '../src/index.js';
import { relativeError, temporaryDirectory } from './support/compare.js';

const tempDir = (): Promise<string> => temporaryDirectory('lm-pretrained-');

const FIXTURES = fileURLToPath(new URL('../../test/fixtures/', import.meta.url));
async function expected(name: string): Promise<{ ids: Int32Array; shape: number[]; logits: Float32Array }> {
  const { tensors } = await readSafetensors(join(FIXTURES, `${name}.expected.safetensors`));
  const ids = tensors.get('input_ids')!;
  const logits = tensors.get('logits')!;
  assert.equal(ids.dtype, 'I32');
  assert.equal(logits.dtype, 'F32');
  return { ids: ids.data as Int32Array, shape: ids.shape, logits: logits.data as Float32Array };
}

function logitsOf(model: DecoderModel, ids: Int32Array, shape: number[]): Float32Array {
  return T.tidy(() => T.noGrad(() => model.forward(T.tensor(ids, shape)).toArray() as Float32Array));
}

for (const backend of ['ref', 'cpu'] as const) {
  for (const name of ['hf-qwen3-tiny', 'hf-llama-tiny']) {
    test(`${name} loads from Hugging Face layout and matches PyTorch's logits (${backend})`, async () => {
      T.useBackend(backend);
      const { model, generationConfig } = await loadPretrained(join(FIXTURES, name));
      const want = await expected(name);
      const error = relativeError(logitsOf(model, want.ids, want.shape), want.logits);
      assert.ok(error < 1e-4, `relative error ${error}`);
      assert.equal(generationConfig?.['top_k'], 20);
      model.dispose();
    });
  }
}

test('Qwen3 config.json maps onto the decoder config; Llama biases and GQA too', async () => {
  T.useBackend('cpu');
  const qwen3 = fromHfConfig(JSON.parse(await readFile(join(FIXTURES, 'hf-qwen3-tiny', 'config.json'), 'utf8')));
  assert.deepEqual(
    [qwen3.architecture, qwen3.qkNorm, qwen3.tieWordEmbeddings, qwen3.headDim, qwen3.numKvHeads],
    ['qwen3', true, false, 16, 2],
  );
  const llama = fromHfConfig(JSON.parse(await readFile(join(FIXTURES, 'hf-llama-tiny', 'config.json'), 'utf8')));
  assert.deepEqual(
    [llama.architecture, llama.qkNorm, llama.qkvBias, llama.oBias, llama.mlpBias, llama.headDim, llama.numKvHeads],
    ['llama', false, true, true, false, 8, 1],
  );
});

test('save → load round trip: identical weights and logits (f32, one file and sharded)', async () => {
  T.useBackend('cpu');
  const { model, hfConfig, generationConfig } = await loadPretrained(join(FIXTURES, 'hf-llama-tiny'));
  const want = await expected('hf-llama-tiny');
  const before = logitsOf(model, want.ids, want.shape);
  for (const maxShardBytes of [undefined, 40_000]) {
    const dir = await tempDir();
    await savePretrained(model, dir, { baseConfig: hfConfig, generationConfig, maxShardBytes });
    const files = (await readdir(dir)).sort();
    if (maxShardBytes) {
      assert.ok(files.includes('model.safetensors.index.json'), files.join());
      assert.ok(files.filter((f) => /^model-\d{5}-of-\d{5}\.safetensors$/.test(f)).length >= 3, files.join());
    } else assert.deepEqual(files, ['config.json', 'generation_config.json', 'model.safetensors']);
    const loaded = await loadPretrained(dir);
    for (const [name, p] of model.params)
      assert.deepEqual(loaded.model.params.get(name)!.toArray(), p.toArray(), `parameter ${name}`);
    assert.deepEqual(logitsOf(loaded.model, want.ids, want.shape), before);
    // Every field of the original config.json survives (ours adds head_dim, which Llama leaves implicit).
    for (const [key, value] of Object.entries(hfConfig)) assert.deepEqual(loaded.hfConfig[key], value, key);
    loaded.model.dispose();
  }
  model.dispose();
});

test('bf16 save writes the same bytes PyTorch wrote, and loads back to the same model', async () => {
  T.useBackend('cpu');
  const source = join(FIXTURES, 'hf-qwen3-tiny');
  const { model, hfConfig, generationConfig } = await loadPretrained(source);
  const dir = await tempDir();
  await savePretrained(model, dir, { dtype: 'bf16', baseConfig: hfConfig, generationConfig });
  assert.deepEqual(await readFile(join(dir, 'model.safetensors')), await readFile(join(source, 'model.safetensors')));
  const saved = JSON.parse(await readFile(join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
  assert.equal(saved['torch_dtype'], 'bfloat16');
  assert.deepEqual(saved['architectures'], ['Qwen3ForCausalLM']);
  model.dispose();
});

test('forwardCached: batched prefill of different-length prompts, then decode, equals the full forward', async () => {
  for (const backend of ['ref', 'cpu'] as const) {
    T.useBackend(backend);
    const { model } = await loadPretrained(join(FIXTURES, 'hf-qwen3-tiny'));
    const want = await expected('hf-qwen3-tiny');
    const full = logitsOf(model, want.ids, want.shape);
    const [rows, seq] = want.shape as [number, number];
    const vocab = model.config.vocabSize;
    const cache = KVCache.forModel(model.config, 3, 16);
    // Prefill: row 0's first 4 tokens into slot 2 and row 1's first 7 into slot 0, in one call.
    const prompt = [4, 7];
    const slotOf = [2, 0];
    const ids: number[] = [];
    const slots: number[] = [];
    const positions: number[] = [];
    for (let r = 0; r < rows; r++)
      for (let t = 0; t < prompt[r]!; t++) {
        ids.push(want.ids[r * seq + t]!);
        slots.push(slotOf[r]!);
        positions.push(t);
      }
    const check = (logits: Float32Array, r: number, t: number, what: string): void => {
      const expectedRow = full.subarray((r * seq + t) * vocab, (r * seq + t + 1) * vocab);
      const error = relativeError(logits, expectedRow);
      assert.ok(error < 1e-5, `${backend} ${what}: row ${r} position ${t}: relative error ${error}`);
    };
    const last = Int32Array.from([prompt[0]! - 1, prompt[0]! + prompt[1]! - 1]);
    const prefill = model.forwardCached(
      { ids: Int32Array.from(ids), slots: Int32Array.from(slots), positions: Int32Array.from(positions) },
      cache,
      last,
    );
    const prefillLogits = prefill.toArray() as Float32Array;
    prefill.dispose();
    for (let r = 0; r < rows; r++)
      check(prefillLogits.subarray(r * vocab, (r + 1) * vocab), r, prompt[r]! - 1, 'prefill');
    // Decode: one token per row per step, rows at different positions.
    for (let step = 0; step < 3; step++) {
      const batch = {
        ids: Int32Array.from([0, 1].map((r) => want.ids[r * seq + prompt[r]! + step]!)),
        slots: Int32Array.from(slotOf),
        positions: Int32Array.from([0, 1].map((r) => prompt[r]! + step)),
      };
      const out = model.forwardCached(batch, cache);
      const logits = out.toArray() as Float32Array;
      out.dispose();
      for (let r = 0; r < rows; r++) check(logits.subarray(r * vocab, (r + 1) * vocab), r, prompt[r]! + step, 'decode');
    }
    cache.dispose();
    model.dispose();
  }
});

test('debug knobs: num_layers truncates, random_init ignores the weights but keeps the shapes', async () => {
  T.useBackend('cpu');
  const truncated = await loadPretrained(join(FIXTURES, 'hf-llama-tiny'), { numLayers: 1 });
  assert.equal(truncated.model.config.numLayers, 1);
  assert.ok(![...truncated.model.params.keys()].some((n) => n.startsWith('model.layers.1.')));
  truncated.model.dispose();
  const random = await loadPretrained(join(FIXTURES, 'hf-llama-tiny'), { randomInit: true, seed: 3 });
  const real = await loadPretrained(join(FIXTURES, 'hf-llama-tiny'));
  const name = 'model.layers.0.self_attn.q_proj.weight';
  assert.deepEqual(random.model.params.get(name)!.shape, real.model.params.get(name)!.shape);
  assert.notDeepEqual(random.model.params.get(name)!.toArray(), real.model.params.get(name)!.toArray());
  random.model.dispose();
  real.model.dispose();
});

test('bad model directories fail naming the file and field', async () => {
  T.useBackend('cpu');
  const dir = await tempDir();
  await assert.rejects(loadPretrained(dir), /config\.json: no such file/);
  await cp(join(FIXTURES, 'hf-qwen3-tiny'), dir, { recursive: true });
  const config = JSON.parse(await readFile(join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
  const withConfig = async (patch: Record<string, unknown>): Promise<void> =>
    writeFile(join(dir, 'config.json'), JSON.stringify({ ...config, ...patch }));
  await withConfig({ model_type: 'gpt2' });
  await assert.rejects(loadPretrained(dir), /config\.json: model_type: 'gpt2' is not supported/);
  await withConfig({ rope_scaling: { rope_type: 'yarn', factor: 4 } });
  await assert.rejects(loadPretrained(dir), /rope_scaling: rope scaling type 'yarn' is not supported/);
  await withConfig({ hidden_size: -3 });
  await assert.rejects(loadPretrained(dir), /hidden_size: must be a positive integer, got -3/);
  await withConfig({ intermediate_size: 65 });
  await assert.rejects(
    loadPretrained(dir),
    /model\.safetensors: tensor 'model\.layers\.0\.mlp\.\w+_proj\.weight' has shape \[[0-9, ]+\], config\.json implies/,
  );
  await writeFile(join(dir, 'config.json'), '{ not json');
  await assert.rejects(loadPretrained(dir), /config\.json: invalid JSON/);
  await withConfig({});
  await rm(join(dir, 'model.safetensors'));
  await assert.rejects(loadPretrained(dir), /no model\.safetensors or model\.safetensors\.index\.json/);
});

test('a model built in code saves to a directory that loads back identically (tied embeddings)', async () => {
  T.useBackend('cpu');
  const model = DecoderModel.init(
    fromHfConfig({
      model_type: 'qwen3',
      vocab_size: 50,
      hidden_size: 16,
      num_hidden_layers: 1,
      num_attention_heads: 2,
      num_key_value_heads: 1,
      head_dim: 8,
      intermediate_size: 24,
      tie_word_embeddings: true,
    }),
    { seed: 5 },
  );
  const dir = await tempDir();
  await savePretrained(model, dir);
  const { tensors } = await readSafetensors(join(dir, 'model.safetensors'));
  assert.ok(!tensors.has('lm_head.weight'));
  const loaded = await loadPretrained(dir);
  const ids = Int32Array.from([3, 1, 4, 1, 5]);
  assert.deepEqual(logitsOf(loaded.model, ids, [1, 5]), logitsOf(model, ids, [1, 5]));
  const stored: StoredTensor = tensors.get('model.embed_tokens.weight')!;
  assert.equal(stored.dtype, 'F32');
  loaded.model.dispose();
  model.dispose();
});
