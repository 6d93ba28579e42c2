// Hyper-parameters of the dense decoder families we run (Qwen3, Qwen2, Llama/Mistral): the subset of
// a Hugging Face config.json that shapes the network, in camelCase. hf-config.ts maps config.json
// onto it and back.

/** Which Hugging Face architecture the weights and config.json follow. */
export type Architecture = 'qwen3' | 'qwen2' | 'llama';

export interface DecoderConfig {
  architecture: Architecture;
  vocabSize: number;
  hiddenSize: number;
  numLayers: number;
  numHeads: number;
  numKvHeads: number;
  headDim: number;
  intermediateSize: number;
  rmsNormEps: number;
  ropeTheta: number;
  tieWordEmbeddings: boolean;
  /** RMSNorm over each query and key head before RoPE (Qwen3). */
  qkNorm: boolean;
  /** Biases on the q/k/v projections (Qwen2; Llama's `attention_bias`). */
  qkvBias: boolean;
  /** Bias on the output projection (Llama's `attention_bias`). */
  oBias: boolean;
  /** Biases on gate/up/down (Llama's `mlp_bias`). */
  mlpBias: boolean;
  maxPositionEmbeddings: number;
}

/** The shape-defining fields; the family fills in the rest. */
export type DecoderShape = Pick<
  DecoderConfig,
  | 'vocabSize'
  | 'hiddenSize'
  | 'numLayers'
  | 'numHeads'
  | 'numKvHeads'
  | 'headDim'
  | 'intermediateSize'
  | 'rmsNormEps'
  | 'ropeTheta'
  | 'tieWordEmbeddings'
> &
  Partial<DecoderConfig>;

/** A Qwen3 dense config: q/k-norm, no biases. */
export function qwen3Config(shape: DecoderShape): DecoderConfig {
  return {
    architecture: 'qwen3',
    qkNorm: true,
    qkvBias: false,
    oBias: false,
    mlpBias: false,
    maxPositionEmbeddings: 40960,
    ...shape,
  };
}

/** A Llama dense config: no q/k-norm, no biases unless asked for. */
export function llamaConfig(shape: DecoderShape): DecoderConfig {
  return {
    architecture: 'llama',
    qkNorm: false,
    qkvBias: false,
    oBias: false,
    mlpBias: false,
    maxPositionEmbeddings: 4096,
    ...shape,
  };
}

/** Checks the shapes fit together; throws naming the field. */
export function validateDecoderConfig(c: DecoderConfig): void {
  const positive: (keyof DecoderConfig)[] = [
    'vocabSize',
    'hiddenSize',
    'numLayers',
    'numHeads',
    'numKvHeads',
    'headDim',
    'intermediateSize',
    'maxPositionEmbeddings',
  ];
  for (const key of positive) {
    const v = c[key];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1)
      throw new RangeError(`${c.architecture} config: ${key} must be a positive integer, got ${String(v)}`);
  }
  if (c.numHeads % c.numKvHeads !== 0)
    throw new RangeError(
      `${c.architecture} config: numHeads (${c.numHeads}) must be a multiple of numKvHeads (${c.numKvHeads})`,
    );
  if (c.headDim % 2 !== 0)
    throw new RangeError(`${c.architecture} config: headDim must be even for rotary embeddings, got ${c.headDim}`);
  if (!(c.rmsNormEps > 0))
    throw new RangeError(`${c.architecture} config: rmsNormEps must be > 0, got ${c.rmsNormEps}`);
  if (!(c.ropeTheta > 0)) throw new RangeError(`${c.architecture} config: ropeTheta must be > 0, got ${c.ropeTheta}`);
}

/** The linear layers of one decoder layer, by Hugging Face module name (relative to the layer). */
export const LAYER_LINEARS = [
  'self_attn.q_proj',
  'self_attn.k_proj',
  'self_attn.v_proj',
  'self_attn.o_proj',
  'mlp.gate_proj',
  'mlp.up_proj',
  'mlp.down_proj',
] as const;

/** Whether a layer linear (relative name) carries a bias under this config. */
export function linearHasBias(c: DecoderConfig, linear: (typeof LAYER_LINEARS)[number]): boolean {
  if (linear === 'self_attn.o_proj') return c.oBias;
  if (linear.startsWith('self_attn.')) return c.qkvBias;
  return c.mlpBias;
}

/** Parameter names and shapes, in Hugging Face layout and order. */
export function decoderParameterShapes(c: DecoderConfig): Map<string, number[]> {
  const shapes = new Map<string, number[]>();
  const d = c.hiddenSize;
  const q = c.numHeads * c.headDim;
  const kv = c.numKvHeads * c.headDim;
  const linearShapes: Record<(typeof LAYER_LINEARS)[number], [number, number]> = {
    'self_attn.q_proj': [q, d],
    'self_attn.k_proj': [kv, d],
    'self_attn.v_proj': [kv, d],
    'self_attn.o_proj': [d, q],
    'mlp.gate_proj': [c.intermediateSize, d],
    'mlp.up_proj': [c.intermediateSize, d],
    'mlp.down_proj': [d, c.intermediateSize],
  };
  shapes.set('model.embed_tokens.weight', [c.vocabSize, d]);
  for (let i = 0; i < c.numLayers; i++) {
    const p = `model.layers.${i}.`;
    shapes.set(`${p}input_layernorm.weight`, [d]);
    for (const linear of LAYER_LINEARS) {
      const shape = linearShapes[linear];
      shapes.set(`${p}${linear}.weight`, shape);
      if (linearHasBias(c, linear)) shapes.set(`${p}${linear}.bias`, [shape[0]]);
      if (linear === 'self_attn.o_proj' && c.qkNorm) {
        shapes.set(`${p}self_attn.q_norm.weight`, [c.headDim]);
        shapes.set(`${p}self_attn.k_norm.weight`, [c.headDim]);
      }
    }
    shapes.set(`${p}post_attention_layernorm.weight`, [d]);
  }
  shapes.set('model.norm.weight', [d]);
  if (!c.tieWordEmbeddings) shapes.set('lm_head.weight', [c.vocabSize, d]);
  return shapes;
}
