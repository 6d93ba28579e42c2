// The committed Qwen3 parity fixture (test/fixtures/qwen3-tiny-parity.safetensors, made by
// scripts/make-qwen3-parity-fixture.py) is whole and self-consistent: every tensor the model parity test
// needs is there with the shape its config implies, the inputs describe the packed batch, and the
// stored loss and temperature statistics follow from the stored logits. No model is involved.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { before, test } from 'node:test';
import { parseSafetensors, serializeSafetensors, type SafetensorsContents, type StoredTensor } from '../src/index.js';

// Tests run from dist/test, so the fixture sits two levels up, in the source tree.
const FIXTURE_PATH = fileURLToPath(new URL('../../test/fixtures/qwen3-tiny-parity.safetensors', import.meta.url));
const BATCH = 2;
const SEQ_LEN = 12;

interface FixtureConfig {
  vocab_size: number;
  hidden_size: number;
  num_hidden_layers: number;
  num_attention_heads: number;
  num_key_value_heads: number;
  head_dim: number;
  intermediate_size: number;
  rms_norm_eps: number;
  rope_theta: number;
  tie_word_embeddings: boolean;
}

let fileBytes: Uint8Array;
let fixture: SafetensorsContents;
let config: FixtureConfig;

before(async () => {
  fileBytes = new Uint8Array(await readFile(FIXTURE_PATH));
  fixture = parseSafetensors(fileBytes, FIXTURE_PATH);
  config = JSON.parse(fixture.metadata.config ?? 'null') as FixtureConfig;
});

function tensor(name: string): StoredTensor {
  const found = fixture.tensors.get(name);
  assert.ok(found, `${FIXTURE_PATH}: missing tensor ${name}`);
  return found;
}

function f32(name: string): Float32Array {
  const found = tensor(name);
  assert.equal(found.dtype, 'F32', name);
  return found.data as Float32Array;
}

function i32(name: string): Int32Array {
  const found = tensor(name);
  assert.equal(found.dtype, 'I32', name);
  return found.data as Int32Array;
}

/** Parameter names and shapes of a Hugging Face Qwen3 checkpoint with tied embeddings. */
function parameterShapes(c: FixtureConfig): Map<string, number[]> {
  const d = c.hidden_size;
  const attentionWidth = c.num_attention_heads * c.head_dim;
  const kvWidth = c.num_key_value_heads * c.head_dim;
  const shapes = new Map<string, number[]>([['model.embed_tokens.weight', [c.vocab_size, d]]]);
  for (let layer = 0; layer < c.num_hidden_layers; layer++) {
    const prefix = `model.layers.${layer}.`;
    shapes.set(`${prefix}input_layernorm.weight`, [d]);
    shapes.set(`${prefix}self_attn.q_proj.weight`, [attentionWidth, d]);
    shapes.set(`${prefix}self_attn.k_proj.weight`, [kvWidth, d]);
    shapes.set(`${prefix}self_attn.v_proj.weight`, [kvWidth, d]);
    shapes.set(`${prefix}self_attn.o_proj.weight`, [d, attentionWidth]);
    shapes.set(`${prefix}self_attn.q_norm.weight`, [c.head_dim]);
    shapes.set(`${prefix}self_attn.k_norm.weight`, [c.head_dim]);
    shapes.set(`${prefix}post_attention_layernorm.weight`, [d]);
    shapes.set(`${prefix}mlp.gate_proj.weight`, [c.intermediate_size, d]);
    shapes.set(`${prefix}mlp.up_proj.weight`, [c.intermediate_size, d]);
    shapes.set(`${prefix}mlp.down_proj.weight`, [d, c.intermediate_size]);
  }
  shapes.set('model.norm.weight', [d]);
  return shapes;
}

/** log-softmax of one row in float64, with log1p so that near-one probabilities keep their accuracy. */
function logSoftmaxRow(row: Float32Array, temperature: number): Float64Array {
  let max = -Infinity;
  let argmax = 0;
  for (let i = 0; i < row.length; i++) {
    if (row[i]! > max) [max, argmax] = [row[i]!, i];
  }
  let restSum = 0;
  for (let i = 0; i < row.length; i++) if (i !== argmax) restSum += Math.exp((row[i]! - max) / temperature);
  const logSumExp = Math.log1p(restSum);
  return Float64Array.from(row, (x) => (x - max) / temperature - logSumExp);
}

function assertClose(actual: number, expected: number, relativeTolerance: number, what: string): void {
  const error = Math.abs(actual - expected) / Math.abs(expected);
  assert.ok(error <= relativeTolerance, `${what}: ${actual} vs recomputed ${expected} (relative error ${error})`);
}

test('the metadata names the generator and a Qwen3 config with GQA and head_dim × heads ≠ hidden', () => {
  assert.equal(fixture.metadata.generator, 'packages/lm/scripts/make-qwen3-parity-fixture.py');
  assert.equal(fixture.metadata.temperature, '0.7');
  assert.match(fixture.metadata.torch ?? '', /^\d+\.\d+/);
  assert.deepEqual(
    {
      vocab_size: config.vocab_size,
      hidden_size: config.hidden_size,
      num_hidden_layers: config.num_hidden_layers,
      num_attention_heads: config.num_attention_heads,
      num_key_value_heads: config.num_key_value_heads,
      head_dim: config.head_dim,
      intermediate_size: config.intermediate_size,
      rms_norm_eps: config.rms_norm_eps,
      rope_theta: config.rope_theta,
      tie_word_embeddings: config.tie_word_embeddings,
    },
    {
      vocab_size: 96,
      hidden_size: 48,
      num_hidden_layers: 2,
      num_attention_heads: 4,
      num_key_value_heads: 2,
      head_dim: 16,
      intermediate_size: 80,
      rms_norm_eps: 1e-6,
      rope_theta: 1e6,
      tie_word_embeddings: true,
    },
  );
});

test('every expected tensor is present with the shape the config implies, and nothing else', () => {
  const [b, t, v] = [BATCH, SEQ_LEN, config.vocab_size];
  const expected = new Map<string, [string, number[]]>([
    ['input_ids', ['I32', [b, t]]],
    ['target_ids', ['I32', [b, t]]],
    ['position_ids', ['I32', [b, t]]],
    ['segment_ids', ['I32', [b, t]]],
    ['loss_mask', ['F32', [b, t]]],
    ['logits', ['F32', [b, t, v]]],
    ['loss', ['F32', [1]]],
    ['logprobs_t07', ['F32', [b, t]]],
    ['entropy_t07', ['F32', [b, t]]],
  ]);
  for (const [name, shape] of parameterShapes(config)) {
    expected.set(name, ['F32', shape]);
    expected.set(`grad.${name}`, ['F32', shape]);
  }
  assert.deepEqual([...fixture.tensors.keys()].sort(), [...expected.keys()].sort());
  for (const [name, [dtype, shape]] of expected) {
    const stored = tensor(name);
    assert.equal(stored.dtype, dtype, name);
    assert.deepEqual(stored.shape, shape, name);
    if (stored.dtype === 'F32') assert.ok(stored.data.every(Number.isFinite), `${name} has a non-finite value`);
  }
  // Tied embeddings: there is no separate output projection.
  assert.equal(fixture.tensors.has('lm_head.weight'), false);
});

test('the inputs describe one plain row and one row of three packed documents', () => {
  const ids = i32('input_ids');
  const targets = i32('target_ids');
  for (const id of [...ids, ...targets]) assert.ok(id >= 0 && id < config.vocab_size, `token id ${id} out of range`);
  assert.deepEqual([...i32('segment_ids')], [...Array(12).fill(0), 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2]);
  assert.deepEqual(
    [...i32('position_ids')],
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 0, 1, 2, 3, 0, 1, 2],
  );
  const mask = f32('loss_mask');
  assert.ok(
    mask.every((m) => m === 0 || m === 1),
    'loss_mask holds only 0 and 1',
  );
  // The first token of every document is masked out, and one more.
  for (const index of [0, 12, 17, 21]) assert.equal(mask[index], 0, `loss_mask[${index}]`);
  assert.equal(
    mask.reduce((sum, m) => sum + m, 0),
    BATCH * SEQ_LEN - 5,
  );
});

test('loss is the masked mean cross-entropy of the stored logits', () => {
  const logits = f32('logits');
  const targets = i32('target_ids');
  const mask = f32('loss_mask');
  const v = config.vocab_size;
  let weightedSum = 0;
  let maskSum = 0;
  for (let token = 0; token < BATCH * SEQ_LEN; token++) {
    const logProbs = logSoftmaxRow(logits.subarray(token * v, (token + 1) * v), 1);
    weightedSum += mask[token]! * -logProbs[targets[token]!]!;
    maskSum += mask[token]!;
  }
  assertClose(f32('loss')[0]!, weightedSum / maskSum, 1e-5, 'loss');
});

test('logprobs_t07 and entropy_t07 follow from the stored logits at temperature 0.7', () => {
  const temperature = Number(fixture.metadata.temperature);
  const logits = f32('logits');
  const targets = i32('target_ids');
  const storedLogprobs = f32('logprobs_t07');
  const storedEntropy = f32('entropy_t07');
  const v = config.vocab_size;
  for (let token = 0; token < BATCH * SEQ_LEN; token++) {
    const logProbs = logSoftmaxRow(logits.subarray(token * v, (token + 1) * v), temperature);
    const entropy = -logProbs.reduce((sum, logP) => sum + Math.exp(logP) * logP, 0);
    assertClose(storedLogprobs[token]!, logProbs[targets[token]!]!, 1e-5, `logprobs_t07[${token}]`);
    assertClose(storedEntropy[token]!, entropy, 1e-5, `entropy_t07[${token}]`);
  }
});

test('our writer reproduces the fixture byte for byte (two independent writers agree)', () => {
  assert.deepEqual(serializeSafetensors(fixture.tensors, fixture.metadata), fileBytes);
});
