// Matrix products: batched matmul with broadcasting over batch dims, and linear (x·Wᵀ). Transposed
// views are passed to GEMM as transpose flags, never copied.
import { Tensor, empty, view } from '../tensor.js';
import { broadcastShapes, formatShape, numel } from '../shape.js';
import { record } from '../autograd/node.js';
import { kernels } from '../backend/select.js';
import { buf, contiguousOrCopy, copyContiguous, expectF32 } from './util.js';
import { sumTo } from './reduce.js';
import { transpose, reshape } from './shape.js';

interface MatrixOperand {
  tensor: Tensor; // the tensor whose storage is read (x itself, or a contiguous copy)
  owned: boolean; // tensor is a temporary copy to dispose after the product
  trans: boolean;
  ld: number;
  batchStride: number;
}

/** How GEMM reads the last two dims of t (rows × cols), or null if they are not a plain/transposed layout. */
function matrixLayout(t: Tensor): { trans: boolean; ld: number } | null {
  const rows = t.shape[t.rank - 2]!;
  const cols = t.shape[t.rank - 1]!;
  const rs = t.strides[t.rank - 2]!;
  const cs = t.strides[t.rank - 1]!;
  if ((cs === 1 || cols === 1) && rs >= cols && (rs > 0 || rows === 1))
    return { trans: false, ld: Math.max(rs, cols, 1) };
  if ((rs === 1 || rows === 1) && cs >= rows && (cs > 0 || cols === 1))
    return { trans: true, ld: Math.max(cs, rows, 1) };
  return null;
}

/** A single stride s with offset(p) = p·s over the flattened broadcast batch, if one exists. */
function flatBatchStride(t: Tensor, batch: readonly number[]): number | null {
  const lead = batch.length - (t.rank - 2);
  const strides = batch.map((size, i) => {
    const d = i - lead;
    return d < 0 || t.shape[d] === 1 ? 0 : t.strides[d]!;
  });
  if (strides.every((s) => s === 0)) return 0;
  const s = strides[strides.length - 1]!;
  let expected = s;
  for (let i = batch.length - 1; i >= 0; i--) {
    if (batch[i] !== 1 && strides[i] !== expected) return null;
    expected *= batch[i]!;
  }
  return s;
}

function prepare(t: Tensor, batch: readonly number[]): MatrixOperand {
  const layout = matrixLayout(t);
  const stride = layout ? flatBatchStride(t, batch) : null;
  if (layout && stride !== null)
    return { tensor: t, owned: false, trans: layout.trans, ld: layout.ld, batchStride: stride };
  // Materialise as a contiguous [batch..., rows, cols] tensor.
  const rows = t.shape[t.rank - 2]!;
  const cols = t.shape[t.rank - 1]!;
  const fullShape = [...batch, rows, cols];
  const c = copyContiguous(t.rank - 2 === batch.length ? t : expandView(t, fullShape));
  return { tensor: c, owned: true, trans: false, ld: cols, batchStride: rows * cols };
}

function expandView(t: Tensor, shape: number[]): Tensor {
  const lead = shape.length - t.rank;
  const strides = shape.map((_, i) => (i < lead || t.shape[i - lead] === 1 ? 0 : t.strides[i - lead]!));
  return view(t, shape, strides, t.offset);
}

/** a @ b without recording. */
export function matmulNoGrad(a: Tensor, b: Tensor, accumulateInto?: Tensor): Tensor {
  expectF32(a, 'matmul', 'left operand');
  expectF32(b, 'matmul', 'right operand');
  if (a.rank < 2 || b.rank < 2)
    throw new RangeError(
      `matmul: operands must have rank ≥ 2, got ${formatShape(a.shape)} and ${formatShape(b.shape)}`,
    );
  const m = a.shape[a.rank - 2]!;
  const k = a.shape[a.rank - 1]!;
  const n = b.shape[b.rank - 1]!;
  if (b.shape[b.rank - 2] !== k)
    throw new RangeError(`matmul: inner dimensions differ: ${formatShape(a.shape)} @ ${formatShape(b.shape)}`);
  const batch = broadcastShapes(a.shape.slice(0, -2), b.shape.slice(0, -2), 'matmul batch dims');
  const outShape = [...batch, m, n];
  let out: Tensor;
  if (accumulateInto) {
    if (!accumulateInto.isContiguous || accumulateInto.shape.join() !== outShape.join())
      throw new RangeError(`matmul: accumulator must be a contiguous ${formatShape(outShape)}`);
    out = accumulateInto;
  } else out = empty(outShape);
  const batchCount = numel(batch);
  if (out.size === 0) return out;
  if (k === 0) {
    if (!accumulateInto) kernels().fill(buf(out), out.size, 0);
    return out;
  }
  // A 2-D right operand shared by a batch whose rows are evenly strided: one big GEMM (linear layers).
  const pa = prepare(a, batch);
  const pb = prepare(b, batch);
  let count = batchCount;
  let rows = m;
  if (pb.batchStride === 0 && !pa.trans && batchCount > 1 && pa.batchStride === m * pa.ld) {
    count = 1;
    rows = m * batchCount;
  }
  kernels().gemm(
    count,
    pa.trans,
    pb.trans,
    rows,
    n,
    k,
    1,
    pa.tensor.f32(),
    pa.tensor.offset,
    pa.ld,
    pa.batchStride,
    pb.tensor.f32(),
    pb.tensor.offset,
    pb.ld,
    pb.batchStride,
    accumulateInto ? 1 : 0,
    out.f32(),
    out.offset,
    n,
    m * n,
  );
  if (pa.owned) pa.tensor.dispose();
  if (pb.owned) pb.tensor.dispose();
  return out;
}

/** Batched matrix product with broadcasting over leading dims (like torch.matmul for rank ≥ 2). */
export function matmul(a: Tensor, b: Tensor): Tensor {
  const out = matmulNoGrad(a, b);
  record('matmul', [a, b], [out], ([g]) => [
    a.requiresGrad ? gradLeft(g!, a, b) : null,
    b.requiresGrad ? gradRight(g!, a, b) : null,
  ]);
  return out;
}

function gradLeft(g: Tensor, a: Tensor, b: Tensor): Tensor {
  const bt = transpose(b, -2, -1);
  const full = matmulNoGrad(g, bt);
  bt.dispose();
  const r = sumTo(full, a.shape);
  if (r !== full) full.dispose();
  return r;
}

function gradRight(g: Tensor, a: Tensor, b: Tensor): Tensor {
  if (b.rank === 2 && a.rank > 2) {
    // Σ over the batch of aᵀ·g, as one GEMM over the flattened rows.
    const k = a.shape[a.rank - 1]!;
    const n = g.shape[g.rank - 1]!;
    const a2 = a.isContiguous ? view(a, [a.size / k, k], [k, 1], a.offset) : reshape(a, [-1, k]);
    const g2 = g.isContiguous ? view(g, [g.size / n, n], [n, 1], g.offset) : reshape(g, [-1, n]);
    const a2t = transpose(a2, 0, 1);
    const r = matmulNoGrad(a2t, g2);
    [a2, g2, a2t].forEach((t) => t.dispose());
    return r;
  }
  const at = transpose(a, -2, -1);
  const full = matmulNoGrad(at, g);
  at.dispose();
  const r = sumTo(full, b.shape);
  if (r !== full) full.dispose();
  return r;
}

/** x · Wᵀ for a weight W of shape [out, in] (PyTorch's nn.Linear layout, no bias). */
export function linear(x: Tensor, weight: Tensor): Tensor {
  if (weight.rank !== 2) throw new RangeError(`linear: weight must be 2-D [out, in], got ${formatShape(weight.shape)}`);
  if (x.shape[x.rank - 1] !== weight.shape[1])
    throw new RangeError(
      `linear: input ${formatShape(x.shape)} does not match weight ${formatShape(weight.shape)} (in = ${weight.shape[1]})`,
    );
  const wt = view(
    weight,
    [weight.shape[1]!, weight.shape[0]!],
    [weight.strides[1]!, weight.strides[0]!],
    weight.offset,
  );
  const out = matmulNoGrad(x, wt);
  record('linear', [x, weight], [out], ([g]) => {
    const gx = x.requiresGrad ? matmulNoGrad(g!, weight) : null;
    let gw: Tensor | null = null;
    if (weight.requiresGrad) {
      // dW = gᵀ · x over all rows: [out, rows] · [rows, in]
      const n = weight.shape[0]!;
      const k = weight.shape[1]!;
      const gc = contiguousOrCopy(g!);
      const xc = contiguousOrCopy(x);
      const gT = view(gc, [n, gc.size / n], [1, n], gc.offset);
      const x2 = view(xc, [xc.size / k, k], [k, 1], xc.offset);
      gw = matmulNoGrad(gT, x2);
      [gT, x2].forEach((t) => t.dispose());
      if (gc !== g) gc.dispose();
      if (xc !== x) xc.dispose();
    }
    return [gx, gw];
  });
  wt.dispose();
  return out;
}
