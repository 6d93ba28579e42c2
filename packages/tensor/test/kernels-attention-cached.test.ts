// attentionCached: equals packed causal attention when a sequence's keys sit in a cache slot, the
// native kernel matches ref, and a token's result does not depend on what else is in the call.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { backendKernels } from '../src/backend/select.js';
import { assertClose, randn } from './support/data.js';

const ref = backendKernels('ref');
const cpu = backendKernels('cpu');

const HEADS = 4;
const KV = 2;
const DIM = 24;
const SLOTS = 3;
const CAPACITY = 40;

/** A cache whose slot s holds `lengths[s]` random keys/values, and the per-slot k/v arrays. */
function makeCache(lengths: number[], seed: number) {
  const k = new Float32Array(SLOTS * CAPACITY * KV * DIM);
  const v = new Float32Array(k.length);
  k.set(randn(k.length, seed));
  v.set(randn(v.length, seed + 1));
  return { k, v, lengths };
}

/** Slot s's first n keys or values as a packed [1, n, KV, D] array. */
function slotRows(cache: Float32Array, slot: number, n: number): Float32Array {
  return cache.slice(slot * CAPACITY * KV * DIM, (slot * CAPACITY + n) * KV * DIM);
}

for (const [name, kernels] of [
  ['ref', ref],
  ['cpu', cpu],
] as const) {
  test(`${name} attentionCached equals packed causal attention over the slot`, () => {
    const n = 29;
    const cache = makeCache([0, n, 0], 5);
    const q = randn(n * HEADS * DIM, 9);
    const slots = new Int32Array(n).fill(1);
    const positions = Int32Array.from({ length: n }, (_, i) => i);
    const out = new Float32Array(q.length);
    kernels.attentionCached(q, cache.k, cache.v, slots, positions, n, HEADS, KV, DIM, SLOTS, CAPACITY, 0.3, out);
    const expected = new Float32Array(q.length);
    const lse = new Float32Array(HEADS * n);
    ref.attention(
      q,
      slotRows(cache.k, 1, n),
      slotRows(cache.v, 1, n),
      new Int32Array(n),
      1,
      n,
      HEADS,
      KV,
      DIM,
      0.3,
      expected,
      lse,
    );
    assertClose(out, expected, 'out', { rtol: 1e-5, atol: 1e-6 });
  });
}

test('cpu attentionCached matches ref on a mixed batch (decode tokens of several slots)', () => {
  const cache = makeCache([], 21);
  const slots = Int32Array.from([2, 0, 1, 1, 2, 0, 1]);
  const positions = Int32Array.from([0, 17, 3, 39, 25, 5, 11]);
  const q = randn(slots.length * HEADS * DIM, 23);
  const expected = new Float32Array(q.length);
  const out = new Float32Array(q.length);
  const args = [slots.length, HEADS, KV, DIM, SLOTS, CAPACITY, 1 / Math.sqrt(DIM)] as const;
  ref.attentionCached(q, cache.k, cache.v, slots, positions, ...args, expected);
  cpu.attentionCached(q, cache.k, cache.v, slots, positions, ...args, out);
  assertClose(out, expected, 'out', { rtol: 1e-5, atol: 1e-6 });
});

test('cpu attentionCached gives each token the same bits alone as in a batch, on 1 or 2 threads', () => {
  const cache = makeCache([], 31);
  const tokens = 64;
  const slots = Int32Array.from({ length: tokens }, (_, i) => i % SLOTS);
  const positions = Int32Array.from({ length: tokens }, (_, i) => (i * 7) % CAPACITY);
  const q = randn(tokens * HEADS * DIM, 33);
  const batched = new Float32Array(q.length);
  const before = cpu.threads();
  try {
    cpu.setThreads(2);
    cpu.attentionCached(q, cache.k, cache.v, slots, positions, tokens, HEADS, KV, DIM, SLOTS, CAPACITY, 0.2, batched);
    cpu.setThreads(1);
    for (const i of [0, 13, 63]) {
      const alone = new Float32Array(HEADS * DIM);
      const row = q.subarray(i * HEADS * DIM, (i + 1) * HEADS * DIM);
      cpu.attentionCached(
        row,
        cache.k,
        cache.v,
        slots.subarray(i, i + 1),
        positions.subarray(i, i + 1),
        1,
        HEADS,
        KV,
        DIM,
        SLOTS,
        CAPACITY,
        0.2,
        alone,
      );
      assert.deepEqual(alone, batched.subarray(i * HEADS * DIM, (i + 1) * HEADS * DIM), `token ${i}`);
    }
  } finally {
    cpu.setThreads(before);
  }
});

test('attentionCached rejects a slot or position outside the cache, naming the token', () => {
  const cache = makeCache([], 1);
  const q = new Float32Array(2 * HEADS * DIM);
  const out = new Float32Array(q.length);
  for (const kernels of [ref, cpu]) {
    assert.throws(
      () =>
        kernels.attentionCached(
          q,
          cache.k,
          cache.v,
          Int32Array.from([0, 3]),
          Int32Array.from([0, 1]),
          2,
          HEADS,
          KV,
          DIM,
          SLOTS,
          CAPACITY,
          1,
          out,
        ),
      /token 1 has slot 3/,
    );
    assert.throws(
      () =>
        kernels.attentionCached(
          q,
          cache.k,
          cache.v,
          Int32Array.from([0, 1]),
          Int32Array.from([CAPACITY, 1]),
          2,
          HEADS,
          KV,
          DIM,
          SLOTS,
          CAPACITY,
          1,
          out,
        ),
      /token 0 has position 40/,
    );
  }
});
