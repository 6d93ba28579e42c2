// LoRA adapters in PEFT's directory format, which transformers/PEFT, vLLM and our loader read:
// adapter_config.json (LoraConfig's fields) and adapter_model.safetensors with keys
// `base_model.model.<module>.lora_A.weight` / `.lora_B.weight` (A [r, in], B [out, r]) and, for
// modules_to_save, `base_model.model.<parameter>`. Both files are written atomically.
import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import * as T from '@prime-rl/tensor';
import type { Tensor } from '@prime-rl/tensor';
import { readSafetensors, writeSafetensors, type StoredTensor } from '../formats/safetensors.js';
import type { DecoderModel } from '../model/decoder.js';
import { readJsonFile, storedToF32, writeFileAtomic } from '../model/pretrained.js';
import { attachedLora, checkCanAttach, LoraHandle, resolveLoraModules, type LoraWeights } from './attach.js';
import type { LoraConfig } from './config.js';
import { adaptableModules, parameterModules } from './match.js';
import { PEFT_PREFIX, legacySavedTensorName, loraTensorName, savedTensorName } from './names.js';

export const ADAPTER_CONFIG_FILE = 'adapter_config.json';
export const ADAPTER_WEIGHTS_FILE = 'adapter_model.safetensors';

export interface SaveAdapterOptions {
  /** Written as `base_model_name_or_path` (a hub id or a path; default null). */
  baseModelName?: string | null;
}

export interface LoadAdapterOptions {
  /** Seeds the dropout masks (default 0). */
  seed?: number;
  /** Start in training mode, i.e. with dropout on (default false: loading is usually for inference). */
  training?: boolean;
  /** Let the loaded tensors take gradients, to continue training (default false). */
  trainable?: boolean;
}

/** An adapter_config.json, read and checked. */
export interface AdapterConfig {
  config: LoraConfig;
  baseModelName: string | null;
  /** Whether target_modules was null (then the adapter tensors in the file say which modules). */
  targetsFromWeights: boolean;
}

/**
 * A pattern list that selects exactly `selected` among `available` under our rule and PEFT's (exact
 * name or suffix; PEFT's modules_to_save compares plain string endings, so `norm` would also take
 * `input_layernorm`): a last name component where it covers every module ending in it, else full names.
 */
function exactPatterns(selected: readonly string[], available: readonly string[]): string[] {
  const lastComponent = (m: string): string => m.slice(m.lastIndexOf('.') + 1);
  const chosen = new Set(selected);
  const patterns: string[] = [];
  const seen = new Set<string>();
  for (const module of selected) {
    const short = lastComponent(module);
    if (seen.has(short)) continue;
    seen.add(short);
    if (available.filter((m) => m.endsWith(short)).every((m) => chosen.has(m))) patterns.push(short);
    else patterns.push(...selected.filter((m) => lastComponent(m) === short));
  }
  return patterns;
}

/** The adapter_config.json of an attached LoRA: the fields PEFT's LoraConfig reads. */
export function peftAdapterConfig(handle: LoraHandle, baseModelName: string | null = null): Record<string, unknown> {
  const { config, modules, model } = handle;
  const modulesToSave = exactPatterns(modules.savedModules, parameterModules(model.config));
  return {
    alpha_pattern: {},
    base_model_name_or_path: baseModelName,
    bias: 'none',
    fan_in_fan_out: false,
    inference_mode: true,
    init_lora_weights: true,
    layers_pattern: null,
    layers_to_transform: null,
    lora_alpha: config.alpha,
    lora_dropout: config.dropout,
    modules_to_save: modulesToSave.length > 0 ? modulesToSave : null,
    peft_type: 'LORA',
    r: config.rank,
    rank_pattern: {},
    revision: null,
    target_modules: exactPatterns(modules.targets, adaptableModules(model.config)),
    task_type: 'CAUSAL_LM',
    use_dora: false,
    use_rslora: false,
  };
}

function toStoredF32(t: Tensor): StoredTensor {
  return { dtype: 'F32', shape: [...t.shape], data: t.toArray() as Float32Array };
}

/** Writes adapter_model.safetensors, then adapter_config.json, into `dir` (created if needed). */
export async function saveAdapter(handle: LoraHandle, dir: string, options: SaveAdapterOptions = {}): Promise<void> {
  if (!handle.attached) throw new Error(`saveAdapter: the adapters were detached; nothing to save to ${dir}`);
  await mkdir(dir, { recursive: true });
  const tensors = new Map<string, StoredTensor>();
  for (const [name, t] of handle.params) tensors.set(name, toStoredF32(t));
  await writeSafetensors(join(dir, ADAPTER_WEIGHTS_FILE), tensors, { format: 'pt' });
  const config = peftAdapterConfig(handle, options.baseModelName ?? null);
  await writeFileAtomic(join(dir, ADAPTER_CONFIG_FILE), JSON.stringify(config, null, 2) + '\n');
}

/** Reads and checks `dir`/adapter_config.json; features we do not implement are errors naming the field. */
export async function readAdapterConfig(dir: string): Promise<AdapterConfig> {
  const path = join(dir, ADAPTER_CONFIG_FILE);
  const raw = await readJsonFile(path);
  const fail = (field: string, detail: string): never => {
    throw new Error(`${path}: field '${field}' ${detail}`);
  };
  const show = (v: unknown): string => JSON.stringify(v) ?? String(v);
  const isAbsent = (v: unknown): boolean => v === undefined || v === null;
  const isEmpty = (v: unknown): boolean =>
    isAbsent(v) || (Array.isArray(v) && v.length === 0) || (typeof v === 'object' && Object.keys(v!).length === 0);

  if (raw['peft_type'] !== 'LORA') fail('peft_type', `must be "LORA", got ${show(raw['peft_type'])}`);
  const rank = raw['r'];
  if (typeof rank !== 'number' || !Number.isInteger(rank) || rank < 1)
    fail('r', `must be a positive integer, got ${show(rank)}`);
  const alpha = raw['lora_alpha'] ?? 8; // PEFT's default
  if (typeof alpha !== 'number' || !Number.isFinite(alpha) || alpha < 0)
    fail('lora_alpha', `must be a number ≥ 0, got ${show(alpha)}`);
  const dropout = raw['lora_dropout'] ?? 0;
  if (typeof dropout !== 'number' || !(dropout >= 0 && dropout <= 1))
    fail('lora_dropout', `must be a number in [0, 1], got ${show(dropout)}`);

  const stringList = (field: string): string[] | null => {
    const v = raw[field];
    if (isAbsent(v)) return null;
    // PEFT keeps a single string as one regular expression.
    if (typeof v === 'string' && v.length > 0) return [v];
    if (!Array.isArray(v) || !v.every((s) => typeof s === 'string' && s.length > 0))
      return fail(field, `must be a list of module names or patterns (or null), got ${show(v)}`);
    return v as string[];
  };
  const targetModules = stringList('target_modules');
  const modulesToSave = stringList('modules_to_save') ?? [];

  const unsupported: [string, (v: unknown) => boolean][] = [
    ['bias', (v) => isAbsent(v) || v === 'none'],
    ['fan_in_fan_out', (v) => isAbsent(v) || v === false],
    ['use_dora', (v) => isAbsent(v) || v === false],
    ['use_rslora', (v) => isAbsent(v) || v === false],
    ['lora_bias', (v) => isAbsent(v) || v === false],
    ['rank_pattern', isEmpty],
    ['alpha_pattern', isEmpty],
    ['layers_to_transform', isEmpty],
    ['exclude_modules', isEmpty],
    ['trainable_token_indices', isEmpty],
    ['target_parameters', isEmpty],
    ['layer_replication', isEmpty],
  ];
  for (const [field, ok] of unsupported)
    if (!ok(raw[field])) fail(field, `is ${show(raw[field])}, which this loader does not support`);

  const base = raw['base_model_name_or_path'];
  return {
    config: {
      rank: rank as number,
      alpha: alpha as number,
      dropout: dropout as number,
      targetModules: targetModules ?? [],
      modulesToSave,
    },
    baseModelName: typeof base === 'string' ? base : null,
    targetsFromWeights: targetModules === null,
  };
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/**
 * Reads a PEFT LoRA directory and attaches it to `model` (whose base weights it was trained on). Every
 * targeted module needs its lora_A and lora_B, every modules_to_save parameter its tensor, shapes must
 * fit the model, and the file may hold nothing else; errors name the file and the tensor or field.
 */
export async function loadAdapter(
  model: DecoderModel,
  dir: string,
  options: LoadAdapterOptions = {},
): Promise<LoraHandle> {
  if (attachedLora(model)) throw new Error(`loadAdapter(${dir}): the model already has a LoRA attached`);
  const adapterConfig = await readAdapterConfig(dir);
  const { config } = adapterConfig;
  const path = join(dir, ADAPTER_WEIGHTS_FILE);
  if (!(await exists(path))) {
    const legacy = (await exists(join(dir, 'adapter_model.bin')))
      ? ' (only adapter_model.bin, a pickle: convert it)'
      : '';
    throw new Error(`${path}: no such file${legacy}`);
  }
  const { tensors } = await readSafetensors(path);
  if (adapterConfig.targetsFromWeights) {
    const lora = /^base_model\.model\.(.+)\.lora_A\.weight$/;
    config.targetModules = [...tensors.keys()].flatMap((name) => lora.exec(name)?.[1] ?? []);
    if (config.targetModules.length === 0)
      throw new Error(`${path}: target_modules is null and the file has no lora_A tensors`);
  }
  const modules = resolveLoraModules(model, config);
  checkCanAttach(model, modules.targets);

  const unused = new Set(tensors.keys());
  const take = (name: string, shape: readonly number[], why: string): Tensor => {
    const stored = tensors.get(name);
    if (!stored) throw new Error(`${path}: no tensor '${name}' (${why})`);
    if (stored.shape.join() !== shape.join())
      throw new Error(
        `${path}: tensor '${name}' has shape [${stored.shape.join(', ')}], expected [${shape.join(', ')}]`,
      );
    unused.delete(name);
    return T.keep(storedToF32(name, stored, path));
  };
  const weights: LoraWeights = { lora: new Map(), saved: new Map() };
  const owned = (): Tensor[] => [
    ...[...weights.lora.values()].flatMap((w) => [w.loraA, w.loraB]),
    ...weights.saved.values(),
  ];
  try {
    for (const module of modules.targets) {
      const [outFeatures, inFeatures] = model.params.get(`${module}.weight`)!.shape as [number, number];
      const why = `target module '${module}', r = ${config.rank}`;
      const loraA = take(loraTensorName(module, 'lora_A'), [config.rank, inFeatures], why);
      try {
        const loraB = take(loraTensorName(module, 'lora_B'), [outFeatures, config.rank], why);
        weights.lora.set(module, { loraA, loraB });
      } catch (error) {
        loraA.dispose();
        throw error;
      }
    }
    for (const name of modules.savedParameters) {
      const legacy = legacySavedTensorName(name);
      const stored = tensors.has(savedTensorName(name)) || !tensors.has(legacy) ? savedTensorName(name) : legacy;
      weights.saved.set(name, take(stored, model.params.get(name)!.shape, `modules_to_save parameter '${name}'`));
    }
    const [extra] = unused;
    if (extra !== undefined)
      throw new Error(
        `${path}: unexpected tensor '${extra}'${extra.startsWith(PEFT_PREFIX) ? '' : ` (PEFT keys start with '${PEFT_PREFIX}')`}; ` +
          `${ADAPTER_CONFIG_FILE}'s target_modules and modules_to_save select no module it belongs to`,
      );
  } catch (error) {
    for (const t of owned()) t.dispose();
    throw error;
  }
  return new LoraHandle(model, config, modules, weights, {
    generator: new T.Generator(options.seed ?? 0),
    training: options.training ?? false,
    trainable: options.trainable ?? false,
  });
}
