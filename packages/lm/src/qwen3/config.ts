// The Qwen3 architecture's hyper-parameters (the subset of Hugging Face config.json that shapes
// the dense decoder).
export interface Qwen3Config {
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
}

/** Checks the shapes fit together; throws naming the field. */
export function validateQwen3Config(c: Qwen3Config): void {
  const positive: (keyof Qwen3Config)[] = [
    'vocabSize',
    'hiddenSize',
    'numLayers',
    'numHeads',
    'numKvHeads',
    'headDim',
    'intermediateSize',
  ];
  for (const key of positive) {
    const v = c[key];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1)
      throw new RangeError(`qwen3 config: ${key} must be a positive integer, got ${String(v)}`);
  }
  if (c.numHeads % c.numKvHeads !== 0)
    throw new RangeError(`qwen3 config: numHeads (${c.numHeads}) must be a multiple of numKvHeads (${c.numKvHeads})`);
  if (c.headDim % 2 !== 0)
    throw new RangeError(`qwen3 config: headDim must be even for rotary embeddings, got ${c.headDim}`);
  if (!(c.rmsNormEps > 0)) throw new RangeError(`qwen3 config: rmsNormEps must be > 0, got ${c.rmsNormEps}`);
  if (!(c.ropeTheta > 0)) throw new RangeError(`qwen3 config: ropeTheta must be > 0, got ${c.ropeTheta}`);
}

/** Parameter names and shapes, in Hugging Face layout. */
export function qwen3ParameterShapes(c: Qwen3Config): Map<string, number[]> {
  const shapes = new Map<string, number[]>();
  const d = c.hiddenSize;
  const q = c.numHeads * c.headDim;
  const kv = c.numKvHeads * c.headDim;
  shapes.set('model.embed_tokens.weight', [c.vocabSize, d]);
  for (let i = 0; i < c.numLayers; i++) {
    const p = `model.layers.${i}.`;
    shapes.set(`${p}input_layernorm.weight`, [d]);
    shapes.set(`${p}self_attn.q_proj.weight`, [q, d]);
    shapes.set(`${p}self_attn.k_proj.weight`, [kv, d]);
    shapes.set(`${p}self_attn.v_proj.weight`, [kv, d]);
    shapes.set(`${p}self_attn.o_proj.weight`, [d, q]);
    shapes.set(`${p}self_attn.q_norm.weight`, [c.headDim]);
    shapes.set(`${p}self_attn.k_norm.weight`, [c.headDim]);
    shapes.set(`${p}post_attention_layernorm.weight`, [d]);
    shapes.set(`${p}mlp.gate_proj.weight`, [c.intermediateSize, d]);
    shapes.set(`${p}mlp.up_proj.weight`, [c.intermediateSize, d]);
    shapes.set(`${p}mlp.down_proj.weight`, [d, c.intermediateSize]);
  }
  shapes.set('model.norm.weight', [d]);
  if (!c.tieWordEmbeddings) shapes.set('lm_head.weight', [c.vocabSize, d]);
  return shapes;
}
