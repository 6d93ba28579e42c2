// Hugging Face model directories: config.json, model.safetensors or sharded
// model.safetensors.index.json + shards, generation_config.json. Loading converts bf16/f16 to f32;
// saving writes f32 or bf16 in the layout transformers, vLLM and our own loader read. Every file is
// written to a temporary name and renamed, so a crash never leaves a half-written file behind.
import { mkdir, readFile, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import * as T from '@prime-rl/tensor';
import type { Tensor } from '@prime-rl/tensor';
import { readSafetensors, writeSafetensors, type StoredTensor } from '../formats/safetensors.js';
import { writeFileAtomic } from '../formats/atomic-file.js';

export { writeFileAtomic } from '../formats/atomic-file.js';
import { decoderParameterShapes, type DecoderConfig } from './config.js';
import { DecoderModel } from './decoder.js';
import { fromHfConfig, toHfConfig, type HfConfig } from './hf-config.js';

export const CONFIG_FILE = 'config.json';
export const GENERATION_CONFIG_FILE = 'generation_config.json';
export const WEIGHTS_FILE = 'model.safetensors';
export const WEIGHTS_INDEX_FILE = 'model.safetensors.index.json';

export interface LoadOptions {
  /** Keep only the first N layers (`model.debug.num_layers`). */
  numLayers?: number | null;
  /** Random weights instead of the checkpoint's (`model.debug.random_init`); config.json still shapes them. */
  randomInit?: boolean;
  /** Seed and std of the random init. */
  seed?: number;
  initStd?: number;
}

export interface Pretrained {
  model: DecoderModel;
  /** The config.json as read (kept so saving preserves fields we do not model). */
  hfConfig: HfConfig;
  /** generation_config.json, or null when the directory has none. */
  generationConfig: Record<string, unknown> | null;
}

/** Reads and parses a JSON file, naming it in every error. */
export async function readJsonFile(path: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new Error(code === 'ENOENT' ? `${path}: no such file` : `${path}: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`${path}: invalid JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error(`${path}: expected a JSON object`);
  return value as Record<string, unknown>;
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** Checkpoint tensors that are not parameters (buffers older transformers versions saved). */
const IGNORED = /(^|\.)rotary_emb\.inv_freq$/;

/** An f32 tensor from a stored tensor of a float dtype. */
export function storedToF32(name: string, stored: StoredTensor, source: string): Tensor {
  const n = stored.data.length;
  if (stored.dtype === 'F32') return T.tensor(new Float32Array(stored.data), stored.shape);
  if (stored.dtype === 'BF16') return T.cast(T.tensor(stored.data, stored.shape, 'bf16'), 'f32');
  if (stored.dtype === 'F16') {
    const out = new Float32Array(n);
    for (let i = 0; i < n; i++) out[i] = halfToFloat(stored.data[i]!);
    return T.tensor(out, stored.shape);
  }
  if (stored.dtype === 'F64') return T.tensor(Float32Array.from(stored.data), stored.shape);
  throw new Error(`${source}: tensor '${name}' has dtype ${stored.dtype}; expected F32, BF16, F16 or F64`);
}

function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exponent = (h >> 10) & 0x1f;
  const mantissa = h & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 31) return mantissa ? NaN : sign * Infinity;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

/**
 * All tensors of a directory's weights, by name (a single model.safetensors, or the shards listed
 * by model.safetensors.index.json), each with the file it came from. `wanted` filters by name.
 */
export async function readWeights(
  dir: string,
  wanted: (name: string) => boolean = () => true,
): Promise<Map<string, { tensor: StoredTensor; file: string }>> {
  const out = new Map<string, { tensor: StoredTensor; file: string }>();
  const indexPath = join(dir, WEIGHTS_INDEX_FILE);
  let files: string[];
  let weightMap: Record<string, unknown> | null = null;
  if (await exists(indexPath)) {
    const index = await readJsonFile(indexPath);
    const map = index['weight_map'];
    if (typeof map !== 'object' || map === null || Array.isArray(map))
      throw new Error(`${indexPath}: weight_map must be an object mapping tensor names to shard files`);
    weightMap = map as Record<string, unknown>;
    files = [...new Set(Object.values(weightMap).map(String))];
    for (const f of files)
      if (f.includes('/') || f.includes('\\') || f.startsWith('.'))
        throw new Error(`${indexPath}: weight_map names the file '${f}', which is not a plain file name`);
  } else if (await exists(join(dir, WEIGHTS_FILE))) {
    files = [WEIGHTS_FILE];
  } else {
    throw new Error(`${dir}: no ${WEIGHTS_FILE} or ${WEIGHTS_INDEX_FILE}`);
  }
  for (const file of files) {
    const path = join(dir, file);
    const contents = await readSafetensors(path);
    for (const [name, tensor] of contents.tensors) {
      if (weightMap && weightMap[name] !== undefined && weightMap[name] !== file)
        throw new Error(`${path}: holds '${name}', which ${WEIGHTS_INDEX_FILE} places in '${String(weightMap[name])}'`);
      if (out.has(name)) throw new Error(`${path}: tensor '${name}' also appears in ${out.get(name)!.file}`);
      if (wanted(name)) out.set(name, { tensor, file: path });
    }
  }
  if (weightMap)
    for (const name of Object.keys(weightMap))
      if (wanted(name) && !out.has(name))
        throw new Error(
          `${indexPath}: lists '${name}' in '${String(weightMap[name])}', but that file does not hold it`,
        );
  return out;
}

/** Loads a Hugging Face model directory (already local; see hub/ for names). */
export async function loadPretrained(dir: string, options: LoadOptions = {}): Promise<Pretrained> {
  const configPath = join(dir, CONFIG_FILE);
  const hfConfig = await readJsonFile(configPath);
  let config = fromHfConfig(hfConfig, configPath);
  const fullLayers = config.numLayers;
  if (options.numLayers !== undefined && options.numLayers !== null) {
    if (!Number.isInteger(options.numLayers) || options.numLayers < 1)
      throw new RangeError(`model.debug.num_layers must be a positive integer, got ${options.numLayers}`);
    config = { ...config, numLayers: Math.min(options.numLayers, fullLayers) };
  }
  const generationPath = join(dir, GENERATION_CONFIG_FILE);
  const generationConfig = (await exists(generationPath)) ? await readJsonFile(generationPath) : null;
  if (options.randomInit) {
    const model = DecoderModel.init(config, { seed: options.seed ?? 0, std: options.initStd ?? 0.02 });
    return { model, hfConfig, generationConfig };
  }

  const expected = decoderParameterShapes(config);
  const layerOf = (name: string): number | null => {
    const m = /^model\.layers\.(\d+)\./.exec(name);
    return m ? Number(m[1]) : null;
  };
  const stored = await readWeights(dir, (name) => {
    const layer = layerOf(name);
    return layer === null || layer < config.numLayers;
  });
  const params = new Map<string, Tensor>();
  try {
    for (const [name, { tensor, file }] of stored) {
      if (IGNORED.test(name)) continue;
      // Some tied checkpoints also store lm_head.weight (a copy of the embedding); it is not a parameter.
      if (name === 'lm_head.weight' && config.tieWordEmbeddings) continue;
      const shape = expected.get(name);
      if (!shape)
        throw new Error(
          `${file}: unexpected tensor '${name}' for a ${config.architecture} model with this config.json`,
        );
      if (tensor.shape.join() !== shape.join())
        throw new Error(
          `${file}: tensor '${name}' has shape [${tensor.shape.join(', ')}], config.json implies [${shape.join(', ')}]`,
        );
      const p = T.keep(storedToF32(name, tensor, file));
      p.requiresGrad = true;
      p.name = name;
      params.set(name, p);
    }
    for (const name of expected.keys())
      if (!params.has(name)) throw new Error(`${dir}: the weights have no tensor '${name}'`);
    // Parameters in Hugging Face order, whatever order the files listed them in.
    const ordered = new Map([...expected.keys()].map((name) => [name, params.get(name)!]));
    return { model: new DecoderModel(config, ordered), hfConfig, generationConfig };
  } catch (error) {
    for (const p of params.values()) p.dispose();
    throw error;
  }
}

export interface SaveOptions {
  /** Storage dtype of the weights (default f32). */
  dtype?: 'f32' | 'bf16';
  /** Split the weights into shards of at most this many bytes (default: one file). */
  maxShardBytes?: number;
  /** The config.json the model came from, to keep fields we do not model. */
  baseConfig?: HfConfig;
  /** Written as generation_config.json when given. */
  generationConfig?: Record<string, unknown> | null;
  /** Tensors to write instead of the model's own parameters (e.g. with LoRA merged in). */
  params?: ReadonlyMap<string, Tensor>;
}

function toStored(t: Tensor, dtype: 'f32' | 'bf16'): StoredTensor {
  const contiguous = T.contiguous(t);
  const f32 = contiguous.f32('save').slice(contiguous.offset, contiguous.offset + contiguous.size);
  if (contiguous !== t) contiguous.dispose();
  if (dtype === 'f32') return { dtype: 'F32', shape: [...t.shape], data: f32 };
  const bits = new Uint16Array(f32.length);
  T.kernels().f32ToBf16(f32, bits, f32.length);
  return { dtype: 'BF16', shape: [...t.shape], data: bits };
}

/**
 * Writes `model` as a Hugging Face model directory (created if needed): config.json, the weights
 * (one file, or shards plus model.safetensors.index.json) and generation_config.json.
 */
export async function savePretrained(model: DecoderModel, dir: string, options: SaveOptions = {}): Promise<void> {
  const dtype = options.dtype ?? 'f32';
  await mkdir(dir, { recursive: true });
  const params = options.params ?? model.params;
  const bytesPer = dtype === 'f32' ? 4 : 2;
  const shards: Map<string, StoredTensor>[] = [new Map()];
  let shardBytes = 0;
  let total = 0;
  for (const name of decoderParameterShapes(model.config).keys()) {
    const p = params.get(name);
    if (!p) throw new Error(`savePretrained: no tensor for parameter '${name}'`);
    const bytes = p.size * bytesPer;
    if (options.maxShardBytes && shardBytes > 0 && shardBytes + bytes > options.maxShardBytes) {
      shards.push(new Map());
      shardBytes = 0;
    }
    shards[shards.length - 1]!.set(name, toStored(p, dtype));
    shardBytes += bytes;
    total += bytes;
  }
  const metadata = { format: 'pt' };
  const torchDtype = dtype === 'f32' ? 'float32' : 'bfloat16';
  if (shards.length === 1) {
    await writeSafetensors(join(dir, WEIGHTS_FILE), shards[0]!, metadata);
    await unlink(join(dir, WEIGHTS_INDEX_FILE)).catch(() => undefined);
  } else {
    const count = String(shards.length).padStart(5, '0');
    const weightMap: Record<string, string> = {};
    for (let i = 0; i < shards.length; i++) {
      const file = `model-${String(i + 1).padStart(5, '0')}-of-${count}.safetensors`;
      await writeSafetensors(join(dir, file), shards[i]!, metadata);
      for (const name of shards[i]!.keys()) weightMap[name] = file;
    }
    // The index goes last: a reader that finds it finds every shard it names.
    const index = { metadata: { total_size: total }, weight_map: weightMap };
    await writeFileAtomic(join(dir, WEIGHTS_INDEX_FILE), JSON.stringify(index, null, 2) + '\n');
    await unlink(join(dir, WEIGHTS_FILE)).catch(() => undefined);
  }
  const hfConfig = toHfConfig(model.config, { base: options.baseConfig, dtype: torchDtype });
  await writeFileAtomic(join(dir, CONFIG_FILE), JSON.stringify(hfConfig, null, 2) + '\n');
  if (options.generationConfig)
    await writeFileAtomic(join(dir, GENERATION_CONFIG_FILE), JSON.stringify(options.generationConfig, null, 2) + '\n');
}

export type { DecoderConfig };
