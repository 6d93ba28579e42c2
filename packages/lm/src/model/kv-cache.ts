// Key/value cache for inference: per layer, keys and values of every cached token, laid out
// [slots, capacity, kvHeads, headDim]. A slot holds one sequence; a token's entry sits at its
// position, so sequences of different lengths share one cache and one decode call.
import * as T from '@prime-rl/tensor';
import type { Tensor } from '@prime-rl/tensor';
import type { DecoderConfig } from './config.js';

export class KVCache {
  readonly keys: Tensor[] = [];
  readonly values: Tensor[] = [];
  private readonly rowSize: number;

  constructor(
    readonly layers: number,
    readonly kvHeads: number,
    readonly headDim: number,
    /** Number of sequences held at once. */
    readonly slots: number,
    /** Tokens per sequence (prompt + generated). */
    readonly capacity: number,
  ) {
    for (const [v, name] of [
      [slots, 'slots'],
      [capacity, 'capacity'],
    ] as const)
      if (!Number.isInteger(v) || v < 1) throw new RangeError(`KVCache: ${name} must be a positive integer, got ${v}`);
    // Not zero-filled: a slot's positions are always written before they are attended to, and an
    // untouched allocation costs no resident memory until a sequence reaches it.
    for (let i = 0; i < layers; i++) {
      this.keys.push(T.keep(T.empty([slots, capacity, kvHeads, headDim])));
      this.values.push(T.keep(T.empty([slots, capacity, kvHeads, headDim])));
    }
    this.rowSize = kvHeads * headDim;
  }

  static forModel(config: DecoderConfig, slots: number, capacity: number): KVCache {
    return new KVCache(config.numLayers, config.numKvHeads, config.headDim, slots, capacity);
  }

  /** Bytes held by the cache. */
  get bytes(): number {
    return 2 * this.layers * this.slots * this.capacity * this.rowSize * 4;
  }

  /** Throws unless the cache was made for this model's shapes. */
  check(config: DecoderConfig): void {
    if (config.numLayers !== this.layers || config.numKvHeads !== this.kvHeads || config.headDim !== this.headDim)
      throw new RangeError(
        `KVCache: made for ${this.layers} layers × ${this.kvHeads} kv heads × ${this.headDim} dims, ` +
          `but the model has ${config.numLayers} × ${config.numKvHeads} × ${config.headDim}`,
      );
  }

  /** Stores token i's key and value ([1, N, KV, D] tensors) at (slots[i], positions[i]) of layer `layer`. */
  write(layer: number, k: Tensor, v: Tensor, slots: Int32Array, positions: Int32Array): void {
    const row = this.rowSize;
    for (const [source, target] of [
      [k, this.keys[layer]!],
      [v, this.values[layer]!],
    ] as const) {
      const src = T.contiguous(source);
      const from = src.f32('KVCache.write').subarray(src.offset, src.offset + src.size);
      const to = target.f32('KVCache.write');
      for (let i = 0; i < slots.length; i++) {
        const slot = slots[i]!;
        const position = positions[i]!;
        if (!(slot >= 0 && slot < this.slots))
          throw new RangeError(`KVCache: token ${i} has slot ${slot}, outside [0, ${this.slots})`);
        if (!(position >= 0 && position < this.capacity))
          throw new RangeError(
            `KVCache: token ${i} has position ${position}, outside the capacity of ${this.capacity} tokens`,
          );
        to.set(from.subarray(i * row, (i + 1) * row), (slot * this.capacity + position) * row);
      }
      if (src !== source) src.dispose();
    }
  }

  /** Frees the cache's memory. */
  dispose(): void {
    for (const t of [...this.keys, ...this.values]) t.dispose();
    this.keys.length = 0;
    this.values.length = 0;
  }
}
