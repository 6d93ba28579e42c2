// Attention of new tokens against a key/value cache: the decoding half of inference. Not
// differentiable (inference only); training uses `attention` over packed sequences.
import { Tensor, empty } from '../tensor.js';
import { formatShape } from '../shape.js';
import { kernels } from '../backend/select.js';
import { buf, contiguousOrCopy, expectF32, expectI32, ibuf } from './util.js';

export interface CachedAttentionOptions {
  /** Score scale; default 1/sqrt(head dim). */
  scale?: number;
}

/**
 * q [N, H, D] holds N new tokens (any mix of sequences); kCache and vCache are
 * [slots, capacity, KV, D]. Token i attends keys 0..positions[i] of slot slots[i] (both i32 [N]);
 * its own key and value must already be in the cache. Returns [N, H, D].
 */
export function attentionCached(
  q: Tensor,
  kCache: Tensor,
  vCache: Tensor,
  slots: Tensor,
  positions: Tensor,
  options: CachedAttentionOptions = {},
): Tensor {
  expectF32(q, 'attentionCached', 'q');
  expectF32(kCache, 'attentionCached', 'kCache');
  expectF32(vCache, 'attentionCached', 'vCache');
  expectI32(slots, 'attentionCached', 'slots');
  expectI32(positions, 'attentionCached', 'positions');
  if (q.rank !== 3)
    throw new RangeError(`attentionCached: q must be [tokens, heads, dim], got ${formatShape(q.shape)}`);
  if (kCache.rank !== 4)
    throw new RangeError(
      `attentionCached: kCache must be [slots, capacity, kvHeads, dim], got ${formatShape(kCache.shape)}`,
    );
  if (kCache.shape.join() !== vCache.shape.join())
    throw new RangeError(
      `attentionCached: kCache ${formatShape(kCache.shape)} and vCache ${formatShape(vCache.shape)} differ`,
    );
  const [tokens, heads, dim] = q.shape as [number, number, number];
  const [numSlots, capacity, kvHeads, cacheDim] = kCache.shape as [number, number, number, number];
  if (cacheDim !== dim) throw new RangeError(`attentionCached: cache head dim ${cacheDim} does not match q's ${dim}`);
  for (const [t, name] of [
    [slots, 'slots'],
    [positions, 'positions'],
  ] as const)
    if (t.shape.join() !== String(tokens))
      throw new RangeError(`attentionCached: ${name} must be [${tokens}], got ${formatShape(t.shape)}`);
  const out = empty([tokens, heads, dim]);
  const qc = contiguousOrCopy(q);
  const sc = contiguousOrCopy(slots);
  const pc = contiguousOrCopy(positions);
  // The caches are written in place by the caller, so they must not be copies.
  if (!kCache.isContiguous || !vCache.isContiguous)
    throw new RangeError('attentionCached: kCache and vCache must be contiguous');
  kernels().attentionCached(
    buf(qc),
    buf(kCache),
    buf(vCache),
    ibuf(sc),
    ibuf(pc),
    tokens,
    heads,
    kvHeads,
    dim,
    numSlots,
    capacity,
    options.scale ?? 1 / Math.sqrt(dim),
    buf(out),
  );
  for (const [copy, original] of [
    [qc, q],
    [sc, slots],
    [pc, positions],
  ] as const)
    if (copy !== original) copy.dispose();
  return out;
}
