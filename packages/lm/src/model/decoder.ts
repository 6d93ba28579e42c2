// The dense decoder (Qwen3, Qwen2, Llama) on @prime-rl/tensor: RMSNorm, optional q/k-norm, RoPE,
// grouped-query attention over packed documents, SwiGLU MLP, optionally tied embeddings. One forward
// for training (packed rows, autograd) and one for inference (new tokens against a KV cache).
import * as T from '@prime-rl/tensor';
import type { Tensor } from '@prime-rl/tensor';
import {
  LAYER_LINEARS,
  decoderParameterShapes,
  linearHasBias,
  validateDecoderConfig,
  type DecoderConfig,
} from './config.js';
import type { KVCache } from './kv-cache.js';

export interface ForwardOptions {
  /** Position of each token within its document, [batch, seq] i32 (default 0..seq−1 per row). */
  positions?: Tensor;
  /** Document id of each token, [batch, seq] i32 (default: one document per row). */
  segments?: Tensor;
  /**
   * Recompute layers' activations in backward instead of storing them: true for every layer, or N for
   * every N-th layer (layers 0, N, 2N, … — `model.ac.freq`).
   */
  recompute?: boolean | number;
}

/**
 * Changes what a linear layer computes (LoRA): given the layer input and the base output
 * x·Wᵀ (+ b), returns the output to use instead.
 */
export interface LinearAdapter {
  forward(x: Tensor, base: Tensor): Tensor;
}

/** New tokens for `forwardCached`: any mix of sequences, each token with its cache slot and position. */
export interface CachedBatch {
  ids: Int32Array;
  slots: Int32Array;
  positions: Int32Array;
}

export class DecoderModel {
  readonly params: Map<string, Tensor>;
  /** LoRA and similar adapters by module name (e.g. `model.layers.0.self_attn.q_proj`). */
  readonly adapters = new Map<string, LinearAdapter>();

  constructor(
    readonly config: DecoderConfig,
    params: Map<string, Tensor>,
  ) {
    validateDecoderConfig(config);
    const expected = decoderParameterShapes(config);
    const arch = config.architecture;
    for (const [name, shape] of expected) {
      const p = params.get(name);
      if (!p) throw new Error(`${arch}: missing parameter '${name}'`);
      if (p.shape.join() !== shape.join())
        throw new RangeError(
          `${arch}: parameter '${name}' has shape [${p.shape.join(', ')}], expected [${shape.join(', ')}]`,
        );
      if (p.dtype !== 'f32') throw new TypeError(`${arch}: parameter '${name}' is ${p.dtype}; convert to f32 first`);
    }
    for (const name of params.keys())
      if (!expected.has(name)) throw new Error(`${arch}: unexpected parameter '${name}' for this config`);
    this.params = params;
  }

  /** Random initialisation: normal(0, std) matrices and embeddings, zero biases, unit norms. */
  static init(config: DecoderConfig, options: { seed?: number; std?: number } = {}): DecoderModel {
    validateDecoderConfig(config);
    const generator = new T.Generator(options.seed ?? 0);
    const std = options.std ?? 0.02;
    const params = new Map<string, Tensor>();
    for (const [name, shape] of decoderParameterShapes(config)) {
      const p = name.endsWith('norm.weight')
        ? T.ones(shape)
        : name.endsWith('.bias')
          ? T.zeros(shape)
          : T.randn(shape, { std, generator });
      p.requiresGrad = true;
      p.name = name;
      params.set(name, T.keep(p));
    }
    return new DecoderModel(config, params);
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
      throw new RangeError(
        `${this.config.architecture}: input ids must be [batch, seq], got [${inputIds.shape.join(', ')}]`,
      );
    const [batch, seq] = inputIds.shape as [number, number];
    const positions = options.positions ?? defaultPositions(batch, seq);
    let x = T.embedding(this.p('model.embed_tokens.weight'), inputIds);
    for (let i = 0; i < this.config.numLayers; i++) {
      const layer = (h: Tensor): Tensor =>
        this.layer(i, h, positions, (q, k, v) =>
          T.attention(q, k, v, options.segments ? { segments: options.segments } : {}),
        );
      x = recomputes(options.recompute, i) ? T.checkpoint(layer, x) : layer(x);
    }
    return T.rmsnorm(x, this.p('model.norm.weight'), this.config.rmsNormEps);
  }

  /** Logits [batch, seq, vocab]. */
  forward(inputIds: Tensor, options: ForwardOptions = {}): Tensor {
    return T.linear(this.hidden(inputIds, options), this.lmHead);
  }

  /**
   * Inference step: runs `batch.ids` (N tokens of any sequences), writes their keys and values into
   * `cache` at (slot, position), and returns the logits [rows.length, vocab] of the tokens at indices
   * `rows` (default: all N). No autograd.
   */
  forwardCached(batch: CachedBatch, cache: KVCache, rows?: Int32Array): Tensor {
    const n = batch.ids.length;
    if (batch.slots.length !== n || batch.positions.length !== n)
      throw new RangeError(
        `forwardCached: ids (${n}), slots (${batch.slots.length}) and positions (${batch.positions.length}) differ in length`,
      );
    cache.check(this.config);
    return T.noGrad(() =>
      T.tidy(() => {
        const ids = T.tensor(batch.ids, [1, n]);
        const positions = T.tensor(batch.positions, [1, n]);
        const slots = T.tensor(batch.slots, [n]);
        const flatPositions = T.tensor(batch.positions, [n]);
        let x = T.embedding(this.p('model.embed_tokens.weight'), ids);
        for (let i = 0; i < this.config.numLayers; i++) {
          x = this.layer(i, x, positions, (q, k, v) => {
            cache.write(i, k, v, batch.slots, batch.positions);
            const [, , heads, dim] = q.shape as [number, number, number, number];
            const attended = T.attentionCached(
              T.reshape(q, [n, heads, dim]),
              cache.keys[i]!,
              cache.values[i]!,
              slots,
              flatPositions,
            );
            return T.reshape(attended, [1, n, heads, dim]);
          });
        }
        let h = T.reshape(x, [n, this.config.hiddenSize]);
        if (rows) h = T.embedding(h, T.tensor(rows, [rows.length]));
        const normed = T.rmsnorm(h, this.p('model.norm.weight'), this.config.rmsNormEps);
        return T.keep(T.linear(normed, this.lmHead));
      }),
    );
  }

  /** A linear layer by module name: base x·Wᵀ (+ b), then its adapter if one is attached. */
  linear(module: string, x: Tensor, hasBias: boolean): Tensor {
    let y = T.linear(x, this.p(`${module}.weight`));
    if (hasBias) y = T.add(y, this.p(`${module}.bias`));
    const adapter = this.adapters.get(module);
    return adapter ? adapter.forward(x, y) : y;
  }

  private layer(i: number, x: Tensor, positions: Tensor, attend: (q: Tensor, k: Tensor, v: Tensor) => Tensor): Tensor {
    const c = this.config;
    const prefix = `model.layers.${i}.`;
    const p = (n: string): Tensor => this.p(prefix + n);
    const lin = (name: (typeof LAYER_LINEARS)[number], input: Tensor): Tensor =>
      this.linear(prefix + name, input, linearHasBias(c, name));
    const [batch, seq] = x.shape as [number, number, number];
    const eps = c.rmsNormEps;

    const y = T.rmsnorm(x, p('input_layernorm.weight'), eps);
    const heads = (proj: 'self_attn.q_proj' | 'self_attn.k_proj' | 'self_attn.v_proj', n: number): Tensor =>
      T.reshape(lin(proj, y), [batch, seq, n, c.headDim]);
    let q = heads('self_attn.q_proj', c.numHeads);
    let k = heads('self_attn.k_proj', c.numKvHeads);
    if (c.qkNorm) {
      q = T.rmsnorm(q, p('self_attn.q_norm.weight'), eps);
      k = T.rmsnorm(k, p('self_attn.k_norm.weight'), eps);
    }
    q = T.rope(q, positions, c.ropeTheta);
    k = T.rope(k, positions, c.ropeTheta);
    const v = heads('self_attn.v_proj', c.numKvHeads);
    const attended = attend(q, k, v);
    const merged = T.reshape(attended, [batch, seq, c.numHeads * c.headDim]);
    const h = T.add(x, lin('self_attn.o_proj', merged));

    const z = T.rmsnorm(h, p('post_attention_layernorm.weight'), eps);
    const mlp = T.swiglu(lin('mlp.gate_proj', z), lin('mlp.up_proj', z));
    return T.add(h, lin('mlp.down_proj', mlp));
  }

  /** Number of parameter elements (the tied embedding counted once). */
  parameterCount(): number {
    let n = 0;
    for (const p of this.params.values()) n += p.size;
    return n;
  }

  /** Frees the parameters (the model is unusable afterwards). */
  dispose(): void {
    for (const p of this.params.values()) p.dispose();
  }
}

function recomputes(recompute: boolean | number | undefined, layer: number): boolean {
  if (typeof recompute === 'number') {
    if (!Number.isInteger(recompute) || recompute < 1)
      throw new RangeError(`recompute frequency must be a positive integer, got ${recompute}`);
    return layer % recompute === 0;
  }
  return recompute === true;
}

/** Positions 0..seq−1 in every row. */
export function defaultPositions(batch: number, seq: number): Tensor {
  const data = new Int32Array(batch * seq);
  for (let b = 0; b < batch; b++) for (let t = 0; t < seq; t++) data[b * seq + t] = t;
  return T.tensor(data, [batch, seq]);
}
