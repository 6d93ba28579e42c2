import type { Kernels } from '../kernels.js';

/** Checks one token's slot and position against the cache, naming the token. */
export function checkCachedToken(slot: number, position: number, index: number, numSlots: number, capacity: number) {
  if (!(slot >= 0 && slot < numSlots))
    throw new RangeError(`attentionCached: token ${index} has slot ${slot}, outside [0, ${numSlots})`);
  if (!(position >= 0 && position < capacity))
    throw new RangeError(`attentionCached: token ${index} has position ${position}, outside [0, ${capacity})`);
}

export const attentionCachedKernels: Pick<Kernels, 'attentionCached'> = {
  attentionCached(q, kCache, vCache, slots, positions, tokens, heads, kvHeads, dim, numSlots, capacity, scale, out) {
    if (!(kvHeads >= 1) || heads % kvHeads !== 0)
      throw new Error(`attentionCached: heads (${heads}) must be a multiple of kvHeads (${kvHeads})`);
    const group = heads / kvHeads;
    const scores = new Float64Array(capacity);
    for (let i = 0; i < tokens; i++) {
      const slot = slots[i]!;
      const last = positions[i]!;
      checkCachedToken(slot, last, i, numSlots, capacity);
      for (let h = 0; h < heads; h++) {
        const kvh = Math.floor(h / group);
        const qBase = (i * heads + h) * dim;
        const kvRow = (s: number): number => ((slot * capacity + s) * kvHeads + kvh) * dim;
        let max = -Infinity;
        for (let s = 0; s <= last; s++) {
          let dot = 0;
          const kBase = kvRow(s);
          for (let d = 0; d < dim; d++) dot += q[qBase + d]! * kCache[kBase + d]!;
          scores[s] = dot * scale;
          max = Math.max(max, scores[s]!);
        }
        let sum = 0;
        for (let s = 0; s <= last; s++) {
          scores[s] = Math.exp(scores[s]! - max);
          sum += scores[s]!;
        }
        for (let d = 0; d < dim; d++) {
          let acc = 0;
          for (let s = 0; s <= last; s++) acc += scores[s]! * vCache[kvRow(s) + d]!;
          out[qBase + d] = acc / sum;
        }
      }
    }
  },
};
