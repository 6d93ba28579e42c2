// Fused transformer ops: embedding, RMSNorm, RoPE, SwiGLU, softmax / log-softmax, row gather.
// Each is one kernel forward and one kernel backward.
import { Tensor, empty, zeros } from '../tensor.js';
import { formatShape } from '../shape.js';
import { record } from '../autograd/node.js';
import { kernels } from '../backend/select.js';
import { buf, contiguousOrCopy as contiguousInput, expectF32, expectI32, ibuf } from './util.js';

function lastDim(t: Tensor): number {
  return t.shape[t.rank - 1] ?? 1;
}

/** weight[ids]: ids of any shape → [...ids.shape, dim]. */
export function embedding(weight: Tensor, ids: Tensor): Tensor {
  expectF32(weight, 'embedding', 'weight');
  expectI32(ids, 'embedding', 'ids');
  if (weight.rank !== 2)
    throw new RangeError(`embedding: weight must be [vocab, dim], got ${formatShape(weight.shape)}`);
  const dim = weight.shape[1]!;
  const w = contiguousInput(weight);
  const idc = contiguousInput(ids);
  const out = empty([...ids.shape, dim]);
  kernels().embedding(buf(w), ibuf(idc), idc.size, dim, buf(out));
  if (w !== weight) w.dispose();
  record(
    'embedding',
    [weight],
    [out],
    ([g]) => {
      const gc = contiguousInput(g!);
      const dw = zeros(weight.shape);
      kernels().embeddingBackward(buf(gc), ibuf(idc), idc.size, dim, buf(dw));
      if (gc !== g) gc.dispose();
      return [dw];
    },
    () => {
      if (idc !== ids) idc.dispose();
    },
  );
  return out;
}

/** RMSNorm over the last dim: x / sqrt(mean(x²) + eps) · weight. */
export function rmsnorm(x: Tensor, weight: Tensor, eps = 1e-6): Tensor {
  expectF32(x, 'rmsnorm');
  expectF32(weight, 'rmsnorm', 'weight');
  const dim = lastDim(x);
  if (weight.rank !== 1 || weight.shape[0] !== dim)
    throw new RangeError(
      `rmsnorm: weight ${formatShape(weight.shape)} does not match the last dim of ${formatShape(x.shape)}`,
    );
  const xc = contiguousInput(x);
  const w = contiguousInput(weight);
  const rows = x.size / Math.max(dim, 1);
  const out = empty(x.shape);
  const rstd = empty([rows]);
  kernels().rmsnorm(buf(xc), buf(w), rows, dim, eps, buf(out), buf(rstd));
  record(
    'rmsnorm',
    [x, weight],
    [out],
    ([g]) => {
      const gc = contiguousInput(g!);
      const dx = empty(x.shape);
      const dw = zeros([dim]);
      kernels().rmsnormBackward(buf(gc), buf(xc), buf(w), buf(rstd), rows, dim, buf(dx), buf(dw), false);
      if (gc !== g) gc.dispose();
      return [x.requiresGrad ? dx : (dx.dispose(), null), weight.requiresGrad ? dw : (dw.dispose(), null)];
    },
    () => {
      rstd.dispose();
      if (xc !== x) xc.dispose();
      if (w !== weight) w.dispose();
    },
  );
  return out;
}

/**
 * Rotary position embedding (Hugging Face rotate_half layout) on x of shape [..., tokens, heads, dim]
 * with positions of shape [..., tokens] (i32): each document of a packed row restarts at 0.
 */
export function rope(x: Tensor, positions: Tensor, theta = 10000): Tensor {
  expectF32(x, 'rope');
  expectI32(positions, 'rope', 'positions');
  if (x.rank < 3) throw new RangeError(`rope: x must be [..., tokens, heads, dim], got ${formatShape(x.shape)}`);
  const dim = x.shape[x.rank - 1]!;
  const heads = x.shape[x.rank - 2]!;
  const tokens = x.size / Math.max(dim * heads, 1);
  if (dim % 2 !== 0) throw new RangeError(`rope: head dim must be even, got ${dim}`);
  if (positions.size !== tokens)
    throw new RangeError(
      `rope: positions ${formatShape(positions.shape)} do not match the ${tokens} tokens of ${formatShape(x.shape)}`,
    );
  const xc = contiguousInput(x);
  const pos = contiguousInput(positions);
  const out = empty(x.shape);
  kernels().rope(buf(xc), ibuf(pos), tokens, heads, dim, theta, false, buf(out));
  if (xc !== x) xc.dispose();
  record(
    'rope',
    [x],
    [out],
    ([g]) => {
      const gc = contiguousInput(g!);
      const dx = empty(x.shape);
      kernels().rope(buf(gc), ibuf(pos), tokens, heads, dim, theta, true, buf(dx));
      if (gc !== g) gc.dispose();
      return [dx];
    },
    () => {
      if (pos !== positions) pos.dispose();
    },
  );
  return out;
}

/** silu(gate) · up. */
export function swiglu(gate: Tensor, up: Tensor): Tensor {
  expectF32(gate, 'swiglu', 'gate');
  expectF32(up, 'swiglu', 'up');
  if (gate.shape.join() !== up.shape.join())
    throw new RangeError(`swiglu: gate ${formatShape(gate.shape)} and up ${formatShape(up.shape)} differ`);
  const g = contiguousInput(gate);
  const u = contiguousInput(up);
  const out = empty(gate.shape);
  kernels().swiglu(buf(g), buf(u), buf(out), out.size);
  record(
    'swiglu',
    [gate, up],
    [out],
    ([grad]) => {
      const gc = contiguousInput(grad!);
      const dg = empty(gate.shape);
      const du = empty(up.shape);
      kernels().swigluBackward(buf(g), buf(u), buf(gc), buf(dg), buf(du), out.size, false);
      if (gc !== grad) gc.dispose();
      return [gate.requiresGrad ? dg : (dg.dispose(), null), up.requiresGrad ? du : (du.dispose(), null)];
    },
    () => {
      if (g !== gate) g.dispose();
      if (u !== up) u.dispose();
    },
  );
  return out;
}

function rowwise(
  name: string,
  x: Tensor,
  forward: (x: Float32Array, rows: number, n: number, out: Float32Array) => void,
  backwardKernel: (y: Float32Array, dy: Float32Array, rows: number, n: number, dx: Float32Array, acc: boolean) => void,
): Tensor {
  expectF32(x, name);
  const n = lastDim(x);
  const rows = x.size / Math.max(n, 1);
  const xc = contiguousInput(x);
  const out = empty(x.shape);
  forward(buf(xc), rows, n, buf(out));
  if (xc !== x) xc.dispose();
  record(name, [x], [out], ([g]) => {
    const gc = contiguousInput(g!);
    const dx = empty(x.shape);
    backwardKernel(buf(out), buf(gc), rows, n, buf(dx), false);
    if (gc !== g) gc.dispose();
    return [dx];
  });
  return out;
}

/** Softmax over the last dim. */
export function softmax(x: Tensor): Tensor {
  const k = kernels();
  return rowwise('softmax', x, k.softmax.bind(k), k.softmaxBackward.bind(k));
}

/** Log-softmax over the last dim. */
export function logSoftmax(x: Tensor): Tensor {
  const k = kernels();
  return rowwise('logSoftmax', x, k.logSoftmax.bind(k), k.logSoftmaxBackward.bind(k));
}

/** out[..., r] = x[..., r, idx[..., r]]: picks one entry of the last dim per row. */
export function gatherLast(x: Tensor, idx: Tensor): Tensor {
  expectF32(x, 'gatherLast');
  expectI32(idx, 'gatherLast', 'idx');
  const n = lastDim(x);
  const rows = x.size / Math.max(n, 1);
  if (idx.size !== rows || idx.shape.join() !== x.shape.slice(0, -1).join())
    throw new RangeError(
      `gatherLast: idx ${formatShape(idx.shape)} must have shape ${formatShape(x.shape.slice(0, -1))}`,
    );
  const xc = contiguousInput(x);
  const ic = contiguousInput(idx);
  const out = empty(idx.shape);
  kernels().gatherRows(buf(xc), ibuf(ic), rows, n, buf(out));
  if (xc !== x) xc.dispose();
  record(
    'gatherLast',
    [x],
    [out],
    ([g]) => {
      const gc = contiguousInput(g!);
      const dx = zeros(x.shape);
      kernels().gatherRowsBackward(buf(gc), ibuf(ic), rows, n, buf(dx));
      if (gc !== g) gc.dispose();
      return [dx];
    },
    () => {
      if (ic !== idx) ic.dispose();
    },
  );
  return out;
}
