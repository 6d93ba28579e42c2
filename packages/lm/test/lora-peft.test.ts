// LoRA adapters in PEFT's directory format: save → load onto a fresh copy of the base gives identical
// logits; adapter_config.json and the tensor names follow PEFT; bad directories fail naming the file
// and the tensor or field.
import assert from 'node:assert/strict';
import { readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import * as T from '@prime-rl/tensor';
import {
  DecoderModel,
  readSafetensors,
  writeSafetensors,
  type DecoderConfig,
  type StoredTensor,
} from '../src/index.js';
import {
  ADAPTER_CONFIG_FILE,
  ADAPTER_WEIGHTS_FILE,
  attachLora,
  loadAdapter,
  saveAdapter,
  type LoraHandle,
} from '../src/lora/index.js';
import { temporaryDirectory } from './support/compare.js';
import { SHAPE, TIED, UNTIED } from './support/lora-models.js';

const tempDir = (): Promise<string> => temporaryDirectory('lm-lora-peft-');

const IDS = Int32Array.from({ length: 2 * 10 }, (_, i) => (i * 5 + 1) % SHAPE.vocabSize);

function logitsOf(model: DecoderModel): Float32Array {
  return T.tidy(() => T.noGrad(() => model.forward(T.tensor(IDS.slice(), [2, 10])).toArray() as Float32Array));
}

function baseModel(config: DecoderConfig): DecoderModel {
  return DecoderModel.init(config, { seed: 5, std: 0.1 });
}

/** Moves every trainable tensor off its init (as training would), deterministically. */
function perturb(handle: LoraHandle, seed: number): void {
  const generator = new T.Generator(seed);
  for (const p of handle.params.values())
    T.tidy(() => T.copyInto(T.add(p, T.randn(p.shape, { std: 0.1, generator })), p));
}

/** An adapter saved from `config` with these LoRA options, and the logits it produces. */
async function savedAdapter(
  config: DecoderConfig,
  lora: Parameters<typeof attachLora>[1],
): Promise<{ dir: string; logits: Float32Array; names: string[] }> {
  const model = baseModel(config);
  const handle = attachLora(model, lora, { seed: 8 });
  perturb(handle, 21);
  handle.train(false);
  const logits = logitsOf(model);
  const dir = await tempDir();
  await saveAdapter(handle, dir, { baseModelName: 'Qwen/Qwen3-0.6B' });
  const names = [...handle.params.keys()];
  handle.detach();
  model.dispose();
  return { dir, logits, names };
}

for (const backend of ['ref', 'cpu'] as const) {
  test(`saveAdapter → loadAdapter on a fresh base gives bit-identical logits (${backend})`, async () => {
    T.useBackend(backend, { threads: 2 });
    const { dir, logits } = await savedAdapter(TIED, { rank: 4, alpha: 8 });
    const model = baseModel(TIED);
    const before = logitsOf(model);
    const handle = await loadAdapter(model, dir);
    assert.deepEqual(logitsOf(model), logits);
    assert.notDeepEqual(logits, before);
    assert.equal(handle.training, false);
    for (const p of handle.params.values()) assert.equal(p.requiresGrad, false, 'loaded for inference');
    handle.detach();
    assert.deepEqual(logitsOf(model), before);
  });
}

test('adapter_config.json carries PEFT LoraConfig fields', async () => {
  T.useBackend('cpu', { threads: 2 });
  const { dir } = await savedAdapter(TIED, {
    rank: 4,
    alpha: 12,
    dropout: 0.05,
    targetModules: ['q_proj', 'model\\.layers\\.1\\.mlp\\.down_proj'],
  });
  assert.deepEqual((await readdir(dir)).sort(), [ADAPTER_CONFIG_FILE, ADAPTER_WEIGHTS_FILE]);
  const config = JSON.parse(await readFile(join(dir, ADAPTER_CONFIG_FILE), 'utf8')) as Record<string, unknown>;
  assert.equal(config['peft_type'], 'LORA');
  assert.equal(config['task_type'], 'CAUSAL_LM');
  assert.equal(config['r'], 4);
  assert.equal(config['lora_alpha'], 12);
  assert.equal(config['lora_dropout'], 0.05);
  // Exact under PEFT's list rule (name or dotted suffix): short names where every layer is targeted.
  assert.deepEqual(config['target_modules'], ['q_proj', 'model.layers.1.mlp.down_proj']);
  assert.equal(config['modules_to_save'], null);
  assert.equal(config['bias'], 'none');
  assert.equal(config['fan_in_fan_out'], false);
  assert.equal(config['base_model_name_or_path'], 'Qwen/Qwen3-0.6B');
  assert.equal(config['inference_mode'], true);
  assert.equal(config['init_lora_weights'], true);
  assert.equal(config['use_rslora'], false);
  assert.equal(config['use_dora'], false);
});

test('adapter_model.safetensors uses PEFT key names, F32, [r, in] and [out, r]', async () => {
  T.useBackend('cpu', { threads: 2 });
  const { dir, names } = await savedAdapter(UNTIED, {
    rank: 4,
    targetModules: ['q_proj', 'down_proj'],
    modulesToSave: ['lm_head'],
  });
  const { tensors, metadata } = await readSafetensors(join(dir, ADAPTER_WEIGHTS_FILE));
  assert.deepEqual(metadata, { format: 'pt' });
  const expected: Record<string, number[]> = { 'base_model.model.lm_head.weight': [48, 32] };
  for (const layer of [0, 1]) {
    const prefix = `base_model.model.model.layers.${layer}.`;
    expected[`${prefix}self_attn.q_proj.lora_A.weight`] = [4, 32];
    expected[`${prefix}self_attn.q_proj.lora_B.weight`] = [32, 4];
    expected[`${prefix}mlp.down_proj.lora_A.weight`] = [4, 40];
    expected[`${prefix}mlp.down_proj.lora_B.weight`] = [32, 4];
  }
  assert.deepEqual([...tensors.keys()].sort(), Object.keys(expected).sort());
  assert.deepEqual([...names].sort(), Object.keys(expected).sort(), 'handle.params has the same names');
  for (const [name, t] of tensors) {
    assert.equal(t.dtype, 'F32', name);
    assert.deepEqual(t.shape, expected[name], name);
  }
  const config = JSON.parse(await readFile(join(dir, ADAPTER_CONFIG_FILE), 'utf8')) as Record<string, unknown>;
  assert.deepEqual(config['modules_to_save'], ['lm_head']);
  assert.deepEqual(config['target_modules'], ['q_proj', 'down_proj']);
});

test('modules_to_save round-trips (new and legacy PEFT key names); loading can continue training', async () => {
  T.useBackend('cpu', { threads: 2 });
  const { dir, logits } = await savedAdapter(UNTIED, { rank: 2, modulesToSave: ['lm_head'] });
  const model = baseModel(UNTIED);
  const originalHead = model.params.get('lm_head.weight')!;
  const handle = await loadAdapter(model, dir, { trainable: true, training: true });
  assert.deepEqual(logitsOf(model), logits);
  assert.notEqual(model.params.get('lm_head.weight'), originalHead);
  for (const p of handle.params.values()) assert.equal(p.requiresGrad, true);
  assert.equal(handle.training, true);
  handle.detach();
  assert.equal(model.params.get('lm_head.weight'), originalHead);

  // Older PEFT saved `<module>.modules_to_save.weight`.
  const { tensors } = await readSafetensors(join(dir, ADAPTER_WEIGHTS_FILE));
  const head = tensors.get('base_model.model.lm_head.weight')!;
  tensors.delete('base_model.model.lm_head.weight');
  tensors.set('base_model.model.lm_head.modules_to_save.weight', head);
  await writeSafetensors(join(dir, ADAPTER_WEIGHTS_FILE), tensors, { format: 'pt' });
  const legacy = await loadAdapter(model, dir);
  assert.deepEqual(logitsOf(model), logits);
  legacy.detach();
});

test('modules_to_save is written so that PEFT (plain name endings) selects exactly the same modules', async () => {
  T.useBackend('cpu', { threads: 2 });
  const modulesToSave = ['norm', 'embed_tokens', 'model\\.layers\\.0\\.input_layernorm'];
  const { dir, logits } = await savedAdapter(TIED, { rank: 2, targetModules: ['o_proj'], modulesToSave });
  const config = JSON.parse(await readFile(join(dir, ADAPTER_CONFIG_FILE), 'utf8')) as Record<string, unknown>;
  // `norm` would also end `input_layernorm`, so model.norm goes by its full name.
  assert.deepEqual(config['modules_to_save'], ['embed_tokens', 'model.layers.0.input_layernorm', 'model.norm']);
  const model = baseModel(TIED);
  const handle = await loadAdapter(model, dir);
  assert.deepEqual(handle.modules.savedModules, ['model.embed_tokens', 'model.layers.0.input_layernorm', 'model.norm']);
  assert.deepEqual(logitsOf(model), logits);
  handle.detach();
});

test('bf16 adapter tensors, and target_modules as one regular expression or null, load', async () => {
  T.useBackend('cpu', { threads: 2 });
  const { dir } = await savedAdapter(TIED, { rank: 2, targetModules: ['v_proj'] });
  const { tensors } = await readSafetensors(join(dir, ADAPTER_WEIGHTS_FILE));
  const bf16 = new Map<string, StoredTensor>();
  for (const [name, t] of tensors) {
    const bits = new Uint16Array(t.data.length);
    T.kernels().f32ToBf16(t.data as Float32Array, bits, bits.length);
    bf16.set(name, { dtype: 'BF16', shape: t.shape, data: bits });
  }
  await writeSafetensors(join(dir, ADAPTER_WEIGHTS_FILE), bf16, { format: 'pt' });
  const configPath = join(dir, ADAPTER_CONFIG_FILE);
  const config = JSON.parse(await readFile(configPath, 'utf8')) as Record<string, unknown>;
  config['target_modules'] = '.*\\.v_proj';
  await writeFile(configPath, JSON.stringify(config));
  const model = baseModel(TIED);
  const handle = await loadAdapter(model, dir);
  const targets = ['model.layers.0.self_attn.v_proj', 'model.layers.1.self_attn.v_proj'];
  assert.deepEqual([...handle.adapters.keys()], targets);
  handle.detach();

  // target_modules null: the lora_A tensors in the file say which modules.
  config['target_modules'] = null;
  await writeFile(configPath, JSON.stringify(config));
  const fromWeights = await loadAdapter(model, dir);
  assert.deepEqual([...fromWeights.adapters.keys()], targets);
  fromWeights.detach();
});

test('bad adapter directories fail naming the file and the tensor or field', async () => {
  T.useBackend('cpu', { threads: 2 });
  const model = baseModel(TIED);
  const fresh = async (): Promise<{ dir: string; configPath: string; weightsPath: string }> => {
    const { dir } = await savedAdapter(TIED, { rank: 2, targetModules: ['q_proj'] });
    return { dir, configPath: join(dir, ADAPTER_CONFIG_FILE), weightsPath: join(dir, ADAPTER_WEIGHTS_FILE) };
  };
  const editConfig = async (path: string, edit: (config: Record<string, unknown>) => void): Promise<void> => {
    const config = JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>;
    edit(config);
    await writeFile(path, JSON.stringify(config));
  };
  const editWeights = async (path: string, edit: (tensors: Map<string, StoredTensor>) => void): Promise<void> => {
    const { tensors } = await readSafetensors(path);
    edit(tensors);
    await writeSafetensors(path, tensors);
  };
  const rejects = async (dir: string, pattern: RegExp): Promise<void> => {
    await assert.rejects(loadAdapter(model, dir), (error: Error) => {
      assert.match(error.message, pattern);
      return true;
    });
    assert.equal(model.adapters.size, 0, 'a failed load attaches nothing');
  };
  const live = T.liveTensors().tensors;

  let d = await fresh();
  await rm(d.configPath);
  await rejects(d.dir, new RegExp(`${d.configPath}: no such file`));

  d = await fresh();
  await rm(d.weightsPath);
  await rejects(d.dir, new RegExp(`${d.weightsPath}: no such file`));

  d = await fresh();
  await editConfig(d.configPath, (c) => (c['use_dora'] = true));
  await rejects(d.dir, new RegExp(`${d.configPath}: field 'use_dora' is true, which this loader does not support`));

  d = await fresh();
  await editConfig(d.configPath, (c) => (c['r'] = 0));
  await rejects(d.dir, /field 'r' must be a positive integer, got 0/);

  d = await fresh();
  await editConfig(d.configPath, (c) => (c['peft_type'] = 'IA3'));
  await rejects(d.dir, /field 'peft_type' must be "LORA", got "IA3"/);

  d = await fresh();
  await editConfig(d.configPath, (c) => (c['target_modules'] = ['qkv']));
  await rejects(d.dir, /target_modules: 'qkv' matches no module/);

  d = await fresh();
  await editConfig(d.configPath, (c) => (c['r'] = 3));
  await rejects(
    d.dir,
    new RegExp(
      `${d.weightsPath}: tensor 'base_model\\.model\\.model\\.layers\\.0\\.self_attn\\.q_proj\\.lora_A\\.weight' has shape \\[2, 32\\], expected \\[3, 32\\]`,
    ),
  );

  d = await fresh();
  await editWeights(d.weightsPath, (t) => t.delete('base_model.model.model.layers.1.self_attn.q_proj.lora_B.weight'));
  await rejects(
    d.dir,
    /no tensor 'base_model\.model\.model\.layers\.1\.self_attn\.q_proj\.lora_B\.weight' \(target module 'model\.layers\.1\.self_attn\.q_proj', r = 2\)/,
  );

  d = await fresh();
  await editWeights(d.weightsPath, (t) =>
    t.set('model.layers.0.self_attn.q_proj.lora_A.weight', { dtype: 'F32', shape: [1], data: new Float32Array(1) }),
  );
  await rejects(
    d.dir,
    /unexpected tensor 'model\.layers\.0\.self_attn\.q_proj\.lora_A\.weight' \(PEFT keys start with/,
  );

  d = await fresh();
  await editWeights(d.weightsPath, (t) =>
    t.set('base_model.model.model.layers.0.self_attn.k_proj.lora_A.weight', {
      dtype: 'F32',
      shape: [2, 32],
      data: new Float32Array(64),
    }),
  );
  await rejects(d.dir, /unexpected tensor 'base_model\.model\.model\.layers\.0\.self_attn\.k_proj\.lora_A\.weight'/);

  assert.equal(T.liveTensors().tensors, live, 'failed loads free what they read');
});
