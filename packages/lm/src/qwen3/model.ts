// The Qwen3 dense decoder on @prime-rl/tensor: RMSNorm, q/k-norm, RoPE, grouped-query attention
// over packed documents, SwiGLU MLP, optionally tied embeddings.
import * as T from '@prime-rl/tensor';
import type { Tensor } from '@prime-rl/tensor';
import { qwen3ParameterShapes, validateQwen3Config, type Qwen3Config } from './config.js';

export interface ForwardOptions {
  /** Position of each token within its document, [batch, seq] i32 (default 0..seq−1 per row). */
  positions?: Tensor;
  /** Document id of each token, [batch, seq] i32 (default: one document per row). */
  segments?: Tensor;
  /** Recompute each layer's activations in backward instead of storing them. */
  recompute?: boolean;
}

export class Qwen3Model {
  readonly params: Map<string, Tensor>;

  constructor(
    readonly config: Qwen3Config,
    params: Map<string, Tensor>,
  ) {
    validateQwen3Config(config);
    const expected = qwen3ParameterShapes(config);
    for (const [name, shape] of expected) {
      const p = params.get(name);
      if (!p) throw new Error(`qwen3: missing parameter '${name}'`);
      if (p.shape.join() !== shape.join())
        throw new RangeError(
          `qwen3: parameter '${name}' has shape [${p.shape.join(', ')}], expected [${shape.join(', ')}]`,
        );
      if (p.dtype !== 'f32') throw new TypeError(`qwen3: parameter '${name}' is ${p.dtype}; convert to f32 first`);
    }
    for (const name of params.keys())
      if (!expected.has(name)) throw new Error(`qwen3: unexpected parameter '${name}' for this config`);
    this.params = params;
  }

  /** Random initialisation: normal(0, std) matrices and embeddings, unit norms. */
  static init(config: Qwen3Config, options: { seed?: number; std?: number } = {}): Qwen3Model {
    validateQwen3Config(config);
    const generator = new T.Generator(options.seed ?? 0);
    const std = options.std ?? 0.02;
    const params = new Map<string, Tensor>();
    for (const [name, shape] of qwen3ParameterShapes(config)) {
      const p = name.endsWith('norm.weight') ? T.ones(shape) : T.randn(shape, { std, generator });
      p.requiresGrad = true;
      p.name = name;
      params.set(name, T.keep(p));
    }
    return new Qwen3Model(config, params);
  }

  private p(name: string): Tensor {
    return this.params.get(name)!;
  }

  /** The LM head weight [vocab, hidden] (the embedding when tied). */
  get lmHead(): Tensor {
    return this.config.tieWordEmbeddings ? this.p('model.embed_tokens.weight') : this.p('lm_head.weight');
  }

  /** Final hidden states [batch, seq, hidden] (after the last norm) for input ids [batch, seq]. */
  hidden(inputIds: Tensor, options: ForwardOptions = {}): Tensor {
    if (inputIds.rank !== 2)
      throw new RangeError(`qwen3: input ids must be [batch, seq], got [${inputIds.shape.join(', ')}]`);
    const [batch, seq] = inputIds.shape as [number, number];
    const positions = options.positions ?? defaultPositions(batch, seq);
    let x = T.embedding(this.p('model.embed_tokens.weight'), inputIds);
    for (let i = 0; i < this.config.numLayers; i++) {
      const layer = (h: Tensor): Tensor => this.layer(i, h, positions, options.segments);
      x = options.recompute ? T.checkpoint(layer, x) : layer(x);
    }
    return T.rmsnorm(x, this.p('model.norm.weight'), this.config.rmsNormEps);
  }

  /** Logits [batch, seq, vocab]. */
  forward(inputIds: Tensor, options: ForwardOptions = {}): Tensor {
    return T.linear(this.hidden(inputIds, options), this.lmHead);
  }

  private layer(i: number, x: Tensor, positions: Tensor, segments: Tensor | undefined): Tensor {
    const c = this.config;
    const p = (n: string): Tensor => this.p(`model.layers.${i}.${n}`);
    const [batch, seq] = x.shape as [number, number, number];
    const eps = c.rmsNormEps;

    const y = T.rmsnorm(x, p('input_layernorm.weight'), eps);
    const heads = (proj: string, n: number): Tensor => T.reshape(T.linear(y, p(proj)), [batch, seq, n, c.headDim]);
    const q = T.rope(
      T.rmsnorm(heads('self_attn.q_proj.weight', c.numHeads), p('self_attn.q_norm.weight'), eps),
      positions,
      c.ropeTheta,
    );
    const k = T.rope(
      T.rmsnorm(heads('self_attn.k_proj.weight', c.numKvHeads), p('self_attn.k_norm.weight'), eps),
      positions,
      c.ropeTheta,
    );
    const v = heads('self_attn.v_proj.weight', c.numKvHeads);
    const attended = T.attention(q, k, v, segments ? { segments } : {});
    const merged = T.reshape(attended, [batch, seq, c.numHeads * c.headDim]);
    const h = T.add(x, T.linear(merged, p('self_attn.o_proj.weight')));

    const z = T.rmsnorm(h, p('post_attention_layernorm.weight'), eps);
    const mlp = T.swiglu(T.linear(z, p('mlp.gate_proj.weight')), T.linear(z, p('mlp.up_proj.weight')));
    return T.add(h, T.linear(mlp, p('mlp.down_proj.weight')));
  }

  /** Number of parameter elements (the tied embedding counted once). */
  parameterCount(): number {
    let n = 0;
    for (const p of this.params.values()) n += p.size;
    return n;
  }
}

/** Positions 0..seq−1 in every row. */
export function defaultPositions(batch: number, seq: number): Tensor {
  const data = new Int32Array(batch * seq);
  for (let b = 0; b < batch; b++) for (let t = 0; t < seq; t++) data[b * seq + t] = t;
  return T.tensor(data, [batch, seq]);
}
