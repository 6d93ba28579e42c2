// Causal grouped-query attention over packed variable-length sequences (one fused kernel each way).
import { Tensor, empty, zeros } from '../tensor.js';
import { formatShape } from '../shape.js';
import { record } from '../autograd/node.js';
import { kernels } from '../backend/select.js';
import { buf, contiguousOrCopy, copyContiguous, expectF32, expectI32, ibuf } from './util.js';

export interface AttentionOptions {
  /**
   * Document id of each token, [batch, seq] i32. A token attends only to earlier tokens of its own
   * document; each document is one contiguous run. Default: one document per row.
   */
  segments?: Tensor;
  /** Score scale; default 1/sqrt(head dim). */
  scale?: number;
}

/**
 * softmax(q·kᵀ·scale + causal/document mask)·v with q [B, T, H, D] and k, v [B, T, KV, D]
 * (H a multiple of KV: query head h uses kv head ⌊h / (H/KV)⌋). Returns [B, T, H, D].
 */
export function attention(q: Tensor, k: Tensor, v: Tensor, options: AttentionOptions = {}): Tensor {
  for (const [t, name] of [
    [q, 'q'],
    [k, 'k'],
    [v, 'v'],
  ] as const) {
    expectF32(t, 'attention', name);
    if (t.rank !== 4)
      throw new RangeError(`attention: ${name} must be [batch, seq, heads, dim], got ${formatShape(t.shape)}`);
  }
  const [batch, seq, heads, dim] = q.shape as [number, number, number, number];
  const kvHeads = k.shape[2]!;
  if (k.shape.join() !== v.shape.join())
    throw new RangeError(`attention: k ${formatShape(k.shape)} and v ${formatShape(v.shape)} differ`);
  if (k.shape[0] !== batch || k.shape[1] !== seq || k.shape[3] !== dim)
    throw new RangeError(`attention: k ${formatShape(k.shape)} does not match q ${formatShape(q.shape)}`);
  if (kvHeads === 0 || heads % kvHeads !== 0)
    throw new RangeError(`attention: ${heads} query heads are not a multiple of ${kvHeads} kv heads`);
  let segments = options.segments;
  let ownSegments = false;
  if (segments) {
    expectI32(segments, 'attention', 'segments');
    if (segments.shape.join() !== [batch, seq].join())
      throw new RangeError(`attention: segments must be [${batch}, ${seq}], got ${formatShape(segments.shape)}`);
    if (!segments.isContiguous) {
      segments = copyContiguous(segments);
      ownSegments = true;
    }
  } else {
    segments = zeros([batch, seq], 'i32');
    ownSegments = true;
  }
  const scale = options.scale ?? 1 / Math.sqrt(dim);
  const qc = contiguousOrCopy(q);
  const kc = contiguousOrCopy(k);
  const vc = contiguousOrCopy(v);
  const out = empty(q.shape);
  const lse = empty([batch, heads, seq]);
  const seg = segments;
  kernels().attention(buf(qc), buf(kc), buf(vc), ibuf(seg), batch, seq, heads, kvHeads, dim, scale, buf(out), buf(lse));
  record(
    'attention',
    [q, k, v],
    [out],
    ([g]) => {
      const gc = contiguousOrCopy(g!);
      const dq = empty(q.shape);
      const dk = empty(k.shape);
      const dv = empty(v.shape);
      kernels().attentionBackward(
        buf(qc),
        buf(kc),
        buf(vc),
        ibuf(seg),
        buf(out),
        buf(lse),
        buf(gc),
        batch,
        seq,
        heads,
        kvHeads,
        dim,
        scale,
        buf(dq),
        buf(dk),
        buf(dv),
      );
      if (gc !== g) gc.dispose();
      const keep = (t: Tensor, input: Tensor): Tensor | null => (input.requiresGrad ? t : (t.dispose(), null));
      return [keep(dq, q), keep(dk, k), keep(dv, v)];
    },
    () => {
      lse.dispose();
      if (ownSegments) seg.dispose();
      if (qc !== q) qc.dispose();
      if (kc !== k) kc.dispose();
      if (vc !== v) vc.dispose();
    },
  );
  return out;
}
