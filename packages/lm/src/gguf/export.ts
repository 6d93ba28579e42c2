// Exports a DecoderModel and its Tokenizer as a GGUF file that llama.cpp loads, following llama.cpp's
// convert_hf_to_gguf.py: the same architecture names and hyper-parameter keys, the same tensor names
// (`token_embd.weight`, `blk.N.attn_q.weight`, …, `output.weight` only when the head is not tied), the
// GPT-2-style (byte-level BPE) vocabulary with token types, merges and special-token ids, the token list
// padded to the model's vocabulary with `[PAD{i}]`, and — for the `llama` architecture only — q/k
// projection rows permuted from Hugging Face's rotate-half RoPE layout to llama.cpp's interleaved one.
import { basename } from 'node:path';
import type { Tensor } from '@prime-rl/tensor';
import { decoderParameterShapes, type DecoderConfig } from '../model/config.js';
import type { DecoderModel } from '../model/decoder.js';
import type { Tokenizer } from '../tokenizer/tokenizer.js';
import { f32ToF16, gguf, writeGguf, type GgufTensorSource, type GgufValue } from './writer.js';

export interface ExportGgufOptions {
  /** Storage type of the matrices (default f32). Norms and biases stay f32, as convert_hf_to_gguf does. */
  dtype?: 'f32' | 'f16';
  /** `general.name` (default: the file name without `.gguf`). */
  name?: string;
  /** Tensors to export instead of the model's parameters (e.g. `lora.mergedParams()`). */
  params?: ReadonlyMap<string, Tensor>;
  /** `tokenizer.ggml.pre` (llama.cpp's pre-tokenizer); default: recognised from tokenizer.json. */
  pre?: string;
}

/** llama_vocab token types (gguf.TokenType). */
export const GGUF_TOKEN_TYPES = { NORMAL: 1, UNKNOWN: 2, CONTROL: 3, USER_DEFINED: 4, UNUSED: 5, BYTE: 6 } as const;

/** llama_ftype of the file: all f32, or mostly f16. */
const FILE_TYPES = { f32: 0, f16: 1 } as const;

const LAYER_TENSORS: Record<string, string> = {
  'input_layernorm.weight': 'attn_norm.weight',
  'self_attn.q_proj.weight': 'attn_q.weight',
  'self_attn.q_proj.bias': 'attn_q.bias',
  'self_attn.k_proj.weight': 'attn_k.weight',
  'self_attn.k_proj.bias': 'attn_k.bias',
  'self_attn.v_proj.weight': 'attn_v.weight',
  'self_attn.v_proj.bias': 'attn_v.bias',
  'self_attn.o_proj.weight': 'attn_output.weight',
  'self_attn.o_proj.bias': 'attn_output.bias',
  'self_attn.q_norm.weight': 'attn_q_norm.weight',
  'self_attn.k_norm.weight': 'attn_k_norm.weight',
  'post_attention_layernorm.weight': 'ffn_norm.weight',
  'mlp.gate_proj.weight': 'ffn_gate.weight',
  'mlp.gate_proj.bias': 'ffn_gate.bias',
  'mlp.up_proj.weight': 'ffn_up.weight',
  'mlp.up_proj.bias': 'ffn_up.bias',
  'mlp.down_proj.weight': 'ffn_down.weight',
  'mlp.down_proj.bias': 'ffn_down.bias',
};

/** The GGUF (llama.cpp) name of a Hugging Face parameter name. */
export function ggufTensorName(hfName: string): string {
  if (hfName === 'model.embed_tokens.weight') return 'token_embd.weight';
  if (hfName === 'model.norm.weight') return 'output_norm.weight';
  if (hfName === 'lm_head.weight') return 'output.weight';
  const m = /^model\.layers\.(\d+)\.(.+)$/.exec(hfName);
  const mapped = m ? LAYER_TENSORS[m[2]!] : undefined;
  if (!m || mapped === undefined) throw new Error(`no GGUF name for parameter '${hfName}'`);
  return `blk.${m[1]}.${mapped}`;
}

/**
 * convert_hf_to_gguf's LlamaModel.permute: within each head of `heads`, output row 2j+p is input row
 * p·(D/2)+j (D = rows per head), turning rotate-half pairs (j, j+D/2) into adjacent pairs (2j, 2j+1).
 * `data` is [rows, cols] row-major (cols = 1 for a bias).
 */
export function permuteForLlamaRope(data: Float32Array, rows: number, cols: number, heads: number): Float32Array {
  return moveRopeRows(data, rows, cols, heads, false);
}

/** The inverse of permuteForLlamaRope (what llama.cpp's Hugging Face exporters undo). */
export function unpermuteForLlamaRope(data: Float32Array, rows: number, cols: number, heads: number): Float32Array {
  return moveRopeRows(data, rows, cols, heads, true);
}

/** Row h·D+p·(D/2)+j ↔ row h·D+2j+p of every head; `inverse` moves rows the other way. */
function moveRopeRows(data: Float32Array, rows: number, cols: number, heads: number, inverse: boolean): Float32Array {
  if (rows % heads !== 0 || (rows / heads) % 2 !== 0)
    throw new RangeError(`permuteForLlamaRope: ${rows} rows do not split into ${heads} heads of even size`);
  const dim = rows / heads;
  const half = dim / 2;
  const out = new Float32Array(data.length);
  for (let h = 0; h < heads; h++)
    for (let j = 0; j < half; j++)
      for (let p = 0; p < 2; p++) {
        const interleaved = (h * dim + 2 * j + p) * cols;
        const halves = (h * dim + p * half + j) * cols;
        const [from, to] = inverse ? [interleaved, halves] : [halves, interleaved];
        out.set(data.subarray(from, from + cols), to);
      }
  return out;
}

/** The architecture hyper-parameters, as convert_hf_to_gguf's TextModel (+ LlamaModel) writes them. */
export function ggufModelMetadata(
  config: DecoderConfig,
  options: { dtype?: 'f32' | 'f16'; name?: string } = {},
): Map<string, GgufValue> {
  const arch = config.architecture;
  if (arch === 'qwen3' && (config.qkvBias || config.oBias))
    throw new Error("exportGguf: llama.cpp's qwen3 architecture has no attention biases (attention_bias: true)");
  if (arch !== 'llama' && config.mlpBias)
    throw new Error(`exportGguf: llama.cpp's ${arch} architecture has no MLP biases`);
  if (arch === 'qwen2' && config.oBias)
    throw new Error("exportGguf: llama.cpp's qwen2 architecture has no output-projection bias");
  if (arch === 'qwen2' && config.numHeads * config.headDim !== config.hiddenSize)
    throw new Error(
      `exportGguf: llama.cpp's qwen2 architecture needs heads × head_dim = hidden size ` +
        `(${config.numHeads} × ${config.headDim} ≠ ${config.hiddenSize})`,
    );
  const m = new Map<string, GgufValue>();
  m.set('general.architecture', gguf.str(arch));
  m.set('general.type', gguf.str('model'));
  if (options.name) m.set('general.name', gguf.str(options.name));
  m.set('general.file_type', gguf.u32(FILE_TYPES[options.dtype ?? 'f32']));
  m.set('general.quantization_version', gguf.u32(2));
  if (arch === 'llama') m.set(`${arch}.vocab_size`, gguf.u32(config.vocabSize));
  m.set(`${arch}.block_count`, gguf.u32(config.numLayers));
  m.set(`${arch}.context_length`, gguf.u32(config.maxPositionEmbeddings));
  m.set(`${arch}.embedding_length`, gguf.u32(config.hiddenSize));
  m.set(`${arch}.feed_forward_length`, gguf.u32(config.intermediateSize));
  m.set(`${arch}.attention.head_count`, gguf.u32(config.numHeads));
  m.set(`${arch}.attention.head_count_kv`, gguf.u32(config.numKvHeads));
  m.set(`${arch}.rope.freq_base`, gguf.f32(config.ropeTheta));
  m.set(`${arch}.attention.layer_norm_rms_epsilon`, gguf.f32(config.rmsNormEps));
  m.set(`${arch}.attention.key_length`, gguf.u32(config.headDim));
  m.set(`${arch}.attention.value_length`, gguf.u32(config.headDim));
  if (arch === 'llama') m.set(`${arch}.rope.dimension_count`, gguf.u32(config.headDim));
  return m;
}

type JsonObject = Record<string, unknown>;

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

// Pre-tokenizer regexes of tokenizer.json (Split before a ByteLevel without its own regex), by the
// `tokenizer.ggml.pre` name llama.cpp implements them under.
const SPLIT_PRE_TOKENIZERS: Record<string, string> = {
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+":
    'qwen2',
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+":
    'llama-bpe',
};

/**
 * llama.cpp's name for a tokenizer.json pre-tokenizer (`tokenizer.ggml.pre`), or null when it is not one we
 * recognise. convert_hf_to_gguf identifies known tokenizers by hashing their output on a test string; we
 * recognise the pre-tokenizer itself, which also covers retrained vocabularies (such as the tiny model's).
 */
export function detectGgufPreTokenizer(tokenizerJson: JsonObject): string | null {
  const pre = tokenizerJson['pre_tokenizer'];
  if (!isObject(pre)) return null;
  const steps = pre['type'] === 'Sequence' && Array.isArray(pre['pretokenizers']) ? pre['pretokenizers'] : [pre];
  const types = steps.map((s) => (isObject(s) ? s['type'] : undefined));
  const byteLevelRegex = (s: unknown): boolean => isObject(s) && s['use_regex'] !== false;
  if (steps.length === 1 && types[0] === 'ByteLevel' && byteLevelRegex(steps[0])) return 'gpt-2';
  if (steps.length === 2 && types[0] === 'Split' && types[1] === 'ByteLevel' && !byteLevelRegex(steps[1])) {
    const pattern = (steps[0] as JsonObject)['pattern'];
    const regex = isObject(pattern) ? pattern['Regex'] : undefined;
    return typeof regex === 'string' ? (SPLIT_PRE_TOKENIZERS[regex] ?? null) : null;
  }
  if (
    steps.length === 2 &&
    types[0] === 'Digits' &&
    (steps[0] as JsonObject)['individual_digits'] === true &&
    types[1] === 'ByteLevel' &&
    byteLevelRegex(steps[1])
  )
    return 'smollm';
  return null;
}

function isByteLevel(tokenizerJson: JsonObject): boolean {
  const decoder = tokenizerJson['decoder'];
  if (isObject(decoder) && decoder['type'] === 'ByteLevel') return true;
  const pre = tokenizerJson['pre_tokenizer'];
  if (!isObject(pre)) return false;
  const steps = pre['type'] === 'Sequence' && Array.isArray(pre['pretokenizers']) ? pre['pretokenizers'] : [pre];
  return steps.some((s) => isObject(s) && s['type'] === 'ByteLevel');
}

// convert_hf_to_gguf's does_token_look_special.
function looksSpecial(token: string): boolean {
  return (
    ['<pad>', '<mask>', '<2mass>', '[@BOS@]'].includes(token) ||
    (token.startsWith('<|') && token.endsWith('|>')) ||
    (token.startsWith('<｜') && token.endsWith('｜>')) ||
    (token.startsWith('<unused') && token.endsWith('>'))
  );
}

const SPECIAL_TOKEN_KEYS: [string, string][] = [
  ['bos_token', 'bos_token_id'],
  ['eos_token', 'eos_token_id'],
  ['unk_token', 'unknown_token_id'],
  ['sep_token', 'seperator_token_id'], // sic: llama.cpp's key
  ['pad_token', 'padding_token_id'],
  ['cls_token', 'cls_token_id'],
  ['mask_token', 'mask_token_id'],
];

/**
 * The `tokenizer.*` metadata of a byte-level BPE tokenizer (GPT-2 style: Qwen, Llama 3, SmolLM): tokens
 * padded to `vocabSize` with `[PAD{i}]`, token types, merges, special-token ids, add-BOS/EOS flags and
 * the chat template, as convert_hf_to_gguf's _set_vocab_gpt2 + SpecialVocab write them.
 */
export function ggufTokenizerMetadata(
  tokenizer: Tokenizer,
  vocabSize: number,
  options: { pre?: string } = {},
): Map<string, GgufValue> {
  const { tokenizer: tj, config } = tokenizer.hfJson;
  const model = tj['model'];
  if (!isObject(model) || model['type'] !== 'BPE' || !isByteLevel(tj))
    throw new Error(
      'exportGguf: only byte-level BPE tokenizers (GPT-2 style, as Qwen, Llama 3 and SmolLM use) can be exported; ' +
        `this tokenizer.json has a ${isObject(model) ? String(model['type']) : 'missing'} model` +
        (isObject(model) && model['type'] === 'BPE' ? ' without ByteLevel pre-tokenization' : ''),
    );
  if (tokenizer.vocabSize > vocabSize)
    throw new Error(
      `exportGguf: the tokenizer has ids up to ${tokenizer.vocabSize - 1}, beyond the model's vocabulary of ${vocabSize}`,
    );
  const pre = options.pre ?? detectGgufPreTokenizer(tj);
  if (pre === null)
    throw new Error(
      "exportGguf: cannot tell which of llama.cpp's pre-tokenizers this tokenizer.json's pre_tokenizer is; pass { pre } " +
        "(e.g. 'qwen2', 'llama-bpe', 'gpt-2', 'smollm')",
    );

  const byId = new Map<number, string>();
  const vocab = model['vocab'];
  if (!isObject(vocab)) throw new Error('exportGguf: tokenizer.json model.vocab is not an object');
  for (const [token, id] of Object.entries(vocab)) if (typeof id === 'number') byId.set(id, token);
  const added = new Map<number, { content: string; special: boolean }>();
  const addedTokens = tj['added_tokens'];
  if (Array.isArray(addedTokens))
    for (const a of addedTokens)
      if (isObject(a) && typeof a['id'] === 'number' && typeof a['content'] === 'string') {
        added.set(a['id'], { content: a['content'], special: a['special'] === true });
        byId.set(a['id'], a['content']);
      }

  const tokens: string[] = [];
  const types: number[] = [];
  for (let i = 0; i < vocabSize; i++) {
    const token = byId.get(i);
    const addedToken = added.get(i);
    if (token === undefined) {
      tokens.push(`[PAD${i}]`);
      types.push(GGUF_TOKEN_TYPES.UNUSED);
    } else if (addedToken) {
      if (addedToken.special || looksSpecial(token)) {
        tokens.push(token);
        types.push(GGUF_TOKEN_TYPES.CONTROL);
      } else {
        tokens.push(token.replaceAll('\u2581', ' '));
        types.push(GGUF_TOKEN_TYPES.USER_DEFINED);
      }
    } else {
      tokens.push(token);
      types.push(GGUF_TOKEN_TYPES.NORMAL);
    }
  }

  const merges: string[] = [];
  const rawMerges = model['merges'];
  if (Array.isArray(rawMerges))
    for (const merge of rawMerges) {
      if (typeof merge === 'string') merges.push(merge);
      else if (Array.isArray(merge) && merge.length === 2)
        // The newer pair format may hold spaces; gguf-py encodes them as U+0120, as the byte-level alphabet does.
        merges.push(merge.map((part) => String(part).replaceAll(' ', '\u0120')).join(' '));
      else throw new Error(`exportGguf: tokenizer.json has a malformed merge ${JSON.stringify(merge)}`);
    }

  const m = new Map<string, GgufValue>();
  m.set('tokenizer.ggml.model', gguf.str('gpt2'));
  m.set('tokenizer.ggml.pre', gguf.str(pre));
  m.set('tokenizer.ggml.tokens', gguf.array('string', tokens));
  m.set('tokenizer.ggml.token_type', gguf.array('int32', types));
  m.set('tokenizer.ggml.merges', gguf.array('string', merges));
  for (const [field, key] of SPECIAL_TOKEN_KEYS) {
    const value = config[field];
    const content = typeof value === 'string' ? value : isObject(value) ? value['content'] : undefined;
    if (typeof content !== 'string') continue;
    const id = tokenizer.tokenToId(content);
    if (id !== undefined && id < vocabSize) m.set(`tokenizer.ggml.${key}`, gguf.u32(id));
  }
  for (const which of ['bos', 'eos'] as const) {
    const flag = config[`add_${which}_token`] ?? templateAdds(tj, which);
    if (typeof flag === 'boolean') m.set(`tokenizer.ggml.add_${which}_token`, gguf.bool(flag));
  }
  if (tokenizer.chatTemplate !== null) m.set('tokenizer.chat_template', gguf.str(tokenizer.chatTemplate));
  return m;
}

/** Whether a TemplateProcessing post-processor puts a special token first (bos) or last (eos). */
function templateAdds(tj: JsonObject, which: 'bos' | 'eos'): boolean | undefined {
  const post = tj['post_processor'];
  const processors =
    isObject(post) && post['type'] === 'Sequence' && Array.isArray(post['processors']) ? post['processors'] : [post];
  for (const p of processors) {
    if (!isObject(p) || p['type'] !== 'TemplateProcessing' || !Array.isArray(p['single'])) continue;
    const single = p['single'] as unknown[];
    const piece = which === 'bos' ? single[0] : single[single.length - 1];
    return isObject(piece) && 'SpecialToken' in piece;
  }
  return undefined;
}

function f32Data(t: Tensor): Float32Array {
  if (t.dtype !== 'f32') throw new TypeError(`exportGguf: tensor ${t.describe()} is ${t.dtype}, expected f32`);
  return t.toArray() as Float32Array;
}

/** The tensors of `model` under their GGUF names, q/k permuted for llama, in Hugging Face order. */
export function ggufTensors(
  config: DecoderConfig,
  params: ReadonlyMap<string, Tensor>,
  dtype: 'f32' | 'f16' = 'f32',
): GgufTensorSource[] {
  const out: GgufTensorSource[] = [];
  for (const [name, shape] of decoderParameterShapes(config)) {
    const tensor = params.get(name);
    if (!tensor) throw new Error(`exportGguf: no tensor for parameter '${name}'`);
    if (tensor.shape.join() !== shape.join())
      throw new RangeError(
        `exportGguf: '${name}' has shape [${tensor.shape.join(', ')}], expected [${shape.join(', ')}]`,
      );
    const ggufName = ggufTensorName(name);
    let heads = 0;
    if (config.architecture === 'llama') {
      if (/\.self_attn\.q_proj\.(weight|bias)$/.test(name)) heads = config.numHeads;
      else if (/\.self_attn\.k_proj\.(weight|bias)$/.test(name)) heads = config.numKvHeads;
    }
    const matrix = shape.length > 1 && !ggufName.endsWith('_norm.weight');
    const type = dtype === 'f16' && matrix ? 'F16' : 'F32';
    out.push({
      name: ggufName,
      shape,
      type,
      data: () => {
        let data = f32Data(tensor);
        if (heads > 0) data = permuteForLlamaRope(data, shape[0]!, shape[1] ?? 1, heads);
        return type === 'F16' ? f32ToF16(data) : data;
      },
    });
  }
  return out;
}

/**
 * Writes `model` with `tokenizer` as a GGUF v3 file at `path` (temporary file, then rename) that llama.cpp
 * (and node-llama-cpp, Ollama, LM Studio) loads as the same architecture.
 */
export async function exportGguf(
  model: DecoderModel,
  tokenizer: Tokenizer,
  path: string,
  options: ExportGgufOptions = {},
): Promise<void> {
  const dtype = options.dtype ?? 'f32';
  if (dtype !== 'f32' && dtype !== 'f16')
    throw new RangeError(`exportGguf: dtype must be f32 or f16, got ${String(dtype)}`);
  if (!options.params && model.adapters.size > 0)
    throw new Error(
      'exportGguf: the model has adapters attached (LoRA); merge them first or pass { params: lora.mergedParams() }',
    );
  const metadata = ggufModelMetadata(model.config, {
    dtype,
    name: options.name ?? basename(path).replace(/\.gguf$/i, ''),
  });
  for (const [key, value] of ggufTokenizerMetadata(tokenizer, model.config.vocabSize, { pre: options.pre }))
    metadata.set(key, value);
  await writeGguf(path, { metadata, tensors: ggufTensors(model.config, options.params ?? model.params, dtype) });
}
