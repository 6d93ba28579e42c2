// Seeded randomness of the data pipeline. Every random choice comes from a generator seeded by
// (config seed, epoch, purpose), so an epoch's order can be recomputed from the loader state alone.
import { Generator } from '@prime-rl/tensor';

/** Mixes a seed with further integers into one 32-bit seed (murmur3-style finalisation). */
export function deriveSeed(seed: number, ...parts: number[]): number {
  let h = seed >>> 0;
  for (const part of [...parts, parts.length]) {
    h = Math.imul(h ^ (part >>> 0), 0x9e3779b1) >>> 0;
    h = (h ^ (h >>> 15)) >>> 0;
    h = Math.imul(h, 0x85ebca6b) >>> 0;
    h = (h ^ (h >>> 13)) >>> 0;
  }
  return h;
}

export function seededGenerator(seed: number, ...parts: number[]): Generator {
  return new Generator(deriveSeed(seed, ...parts));
}

/** A uniformly random permutation of 0..n-1 (Fisher–Yates). */
export function permutation(n: number, generator: Generator): Int32Array {
  const order = new Int32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = generator.int(i + 1);
    const swap = order[i]!;
    order[i] = order[j]!;
    order[j] = swap;
  }
  return order;
}
