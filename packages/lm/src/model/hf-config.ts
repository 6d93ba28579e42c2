// Hugging Face config.json ↔ DecoderConfig. Reading accepts what transformers writes for Qwen3,
// Qwen2, Llama and Mistral (without sliding windows) and rejects, naming the field, anything that
// would change the network in a way we do not implement; writing produces a config.json that
// transformers and vLLM load as the same architecture.
import type { Architecture, DecoderConfig } from './config.js';
import { validateDecoderConfig } from './config.js';

/** A config.json object as parsed (snake_case). */
export type HfConfig = Record<string, unknown>;

const ARCHITECTURES: Record<string, { architecture: Architecture; className: string }> = {
  qwen3: { architecture: 'qwen3', className: 'Qwen3ForCausalLM' },
  qwen2: { architecture: 'qwen2', className: 'Qwen2ForCausalLM' },
  llama: { architecture: 'llama', className: 'LlamaForCausalLM' },
  mistral: { architecture: 'llama', className: 'MistralForCausalLM' },
};

export class HfConfigError extends Error {
  constructor(source: string, field: string, message: string) {
    super(`${source}: ${field}: ${message}`);
    this.name = 'HfConfigError';
  }
}

/** Reads the decoder hyper-parameters from a parsed config.json; `source` names the file in errors. */
export function fromHfConfig(json: HfConfig, source = 'config.json'): DecoderConfig {
  const fail = (field: string, message: string): never => {
    throw new HfConfigError(source, field, message);
  };
  const modelType = json['model_type'];
  if (typeof modelType !== 'string') fail('model_type', 'missing (expected one of qwen3, qwen2, llama, mistral)');
  const family = ARCHITECTURES[modelType as string];
  if (!family)
    fail(
      'model_type',
      `'${String(modelType)}' is not supported (supported: ${Object.keys(ARCHITECTURES).join(', ')}; dense decoders only)`,
    );
  const { architecture } = family!;

  const int = (field: string, fallback?: number): number => {
    const v = json[field] ?? fallback;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1)
      fail(field, v === undefined ? 'missing' : `must be a positive integer, got ${JSON.stringify(v)}`);
    return v as number;
  };
  const num = (field: string, fallback: number): number => {
    const v = json[field] ?? fallback;
    if (typeof v !== 'number' || !(v > 0)) fail(field, `must be a positive number, got ${JSON.stringify(v)}`);
    return v as number;
  };
  const bool = (field: string, fallback: boolean): boolean => {
    const v = json[field] ?? fallback;
    if (typeof v !== 'boolean') fail(field, `must be true or false, got ${JSON.stringify(v)}`);
    return v as boolean;
  };

  const act = json['hidden_act'] ?? 'silu';
  if (act !== 'silu') fail('hidden_act', `'${String(act)}' is not supported (only silu / SwiGLU)`);
  const scaling = json['rope_scaling'];
  if (scaling !== undefined && scaling !== null) {
    const type = (scaling as Record<string, unknown>)['rope_type'] ?? (scaling as Record<string, unknown>)['type'];
    if (type !== 'default')
      fail('rope_scaling', `rope scaling type '${String(type)}' is not supported (only plain RoPE)`);
  }
  const sliding =
    architecture === 'llama' ? json['sliding_window'] : json['use_sliding_window'] ? json['sliding_window'] : null;
  if (sliding !== undefined && sliding !== null && sliding !== false)
    fail(
      json['use_sliding_window'] ? 'use_sliding_window' : 'sliding_window',
      'sliding-window attention is not supported',
    );

  const hiddenSize = int('hidden_size');
  const numHeads = int('num_attention_heads');
  const attentionBias = bool('attention_bias', false);
  const config: DecoderConfig = {
    architecture,
    vocabSize: int('vocab_size'),
    hiddenSize,
    numLayers: int('num_hidden_layers'),
    numHeads,
    numKvHeads: int('num_key_value_heads', numHeads),
    headDim: json['head_dim'] === null ? hiddenSize / numHeads : int('head_dim', hiddenSize / numHeads),
    intermediateSize: int('intermediate_size'),
    rmsNormEps: num('rms_norm_eps', 1e-6),
    ropeTheta: num('rope_theta', 10000),
    tieWordEmbeddings: bool('tie_word_embeddings', false),
    qkNorm: architecture === 'qwen3',
    // Qwen2 always has q/k/v biases and no o bias; Qwen3's and Llama's attention_bias covers all four.
    qkvBias: architecture === 'qwen2' ? true : attentionBias,
    oBias: architecture === 'qwen2' ? false : attentionBias,
    mlpBias: architecture === 'llama' ? bool('mlp_bias', false) : false,
    maxPositionEmbeddings: int('max_position_embeddings', 4096),
  };
  try {
    validateDecoderConfig(config);
  } catch (error) {
    throw new HfConfigError(source, 'shapes', (error as Error).message);
  }
  return config;
}

/**
 * A config.json for `config`. `base` (the config.json the model was loaded from) keeps fields we do
 * not model (token ids, model-specific extras); the shape fields are always ours.
 */
export function toHfConfig(
  config: DecoderConfig,
  options: { base?: HfConfig; dtype?: 'float32' | 'bfloat16' } = {},
): HfConfig {
  const modelType = options.base?.['model_type'] === 'mistral' ? 'mistral' : config.architecture;
  const family = ARCHITECTURES[modelType]!;
  const out: HfConfig = { ...(options.base ?? {}) };
  Object.assign(out, {
    architectures: [family.className],
    model_type: modelType,
    vocab_size: config.vocabSize,
    hidden_size: config.hiddenSize,
    num_hidden_layers: config.numLayers,
    num_attention_heads: config.numHeads,
    num_key_value_heads: config.numKvHeads,
    head_dim: config.headDim,
    intermediate_size: config.intermediateSize,
    hidden_act: 'silu',
    rms_norm_eps: config.rmsNormEps,
    rope_theta: config.ropeTheta,
    rope_scaling: null,
    tie_word_embeddings: config.tieWordEmbeddings,
    max_position_embeddings: config.maxPositionEmbeddings,
    torch_dtype: options.dtype ?? (options.base?.['torch_dtype'] as string | undefined) ?? 'float32',
  });
  if (config.architecture === 'qwen2') {
    if (!config.qkvBias || config.oBias || config.mlpBias || config.qkNorm)
      throw new RangeError('qwen2 config: has q/k/v biases only (no o/mlp biases, no q/k-norm)');
  } else {
    if (config.qkvBias !== config.oBias)
      throw new RangeError(
        `${config.architecture} config: q/k/v and o projection biases must agree (one attention_bias flag)`,
      );
    if (config.qkNorm !== (config.architecture === 'qwen3'))
      throw new RangeError(`${config.architecture} config: q/k-norm is part of qwen3 and only qwen3`);
    out['attention_bias'] = config.qkvBias;
  }
  if (config.architecture === 'llama') out['mlp_bias'] = config.mlpBias;
  else if (config.mlpBias) throw new RangeError(`${config.architecture} config: has no MLP biases`);
  if (config.architecture !== 'llama') {
    out['use_sliding_window'] = false;
    out['sliding_window'] = null;
  }
  out['transformers_version'] ??= '4.51.0';
  return out;
}
