// attention / attentionBackward: the ref kernel against a float64 implementation built from an
// explicit mask matrix and against central finite differences; the native kernel against ref.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { backendKernels } from '../src/backend/select.js';
import type { Kernels } from '../src/backend/kernels.js';
import { assertClose, randn, relativeError } from './support/data.js';

const ref = backendKernels('ref');
const cpu = backendKernels('cpu');

interface Shape {
  batch: number;
  seq: number;
  heads: number;
  kvHeads: number;
  dim: number;
}

/** Segment ids from run lengths per batch row; ids are arbitrary (not sorted, not from 0). */
function segmentsFromLengths(rows: number[][], seq: number): Int32Array {
  const out = new Int32Array(rows.length * seq);
  rows.forEach((lengths, b) => {
    assert.equal(
      lengths.reduce((a, n) => a + n, 0),
      seq,
    );
    let t = 0;
    lengths.forEach((n, i) => {
      for (let j = 0; j < n; j++) out[b * seq + t++] = 1000 - 7 * i + 3 * b;
    });
  });
  return out;
}

/** Float64 attention from an explicit [T, T] mask per batch row: the definition, nothing clever. */
function naiveAttention(
  q: ArrayLike<number>,
  k: ArrayLike<number>,
  v: ArrayLike<number>,
  segments: Int32Array,
  { batch, seq, heads, kvHeads, dim }: Shape,
  scale: number,
): { out: Float64Array; lse: Float64Array } {
  const out = new Float64Array(batch * seq * heads * dim);
  const lse = new Float64Array(batch * heads * seq);
  for (let b = 0; b < batch; b++) {
    const mask: boolean[][] = [];
    for (let t = 0; t < seq; t++) {
      mask.push([]);
      for (let s = 0; s < seq; s++) mask[t]!.push(s <= t && segments[b * seq + s] === segments[b * seq + t]);
    }
    for (let h = 0; h < heads; h++) {
      const kvh = Math.floor(h / (heads / kvHeads));
      for (let t = 0; t < seq; t++) {
        const scores: number[] = [];
        for (let s = 0; s < seq; s++) {
          let dot = 0;
          for (let d = 0; d < dim; d++)
            dot += q[((b * seq + t) * heads + h) * dim + d]! * k[((b * seq + s) * kvHeads + kvh) * dim + d]!;
          scores.push(mask[t]![s] ? dot * scale : -Infinity);
        }
        const max = Math.max(...scores);
        const weights = scores.map((x) => Math.exp(x - max));
        const sum = weights.reduce((a, w) => a + w, 0);
        lse[(b * heads + h) * seq + t] = max + Math.log(sum);
        for (let d = 0; d < dim; d++) {
          let acc = 0;
          for (let s = 0; s < seq; s++) acc += (weights[s]! / sum) * v[((b * seq + s) * kvHeads + kvh) * dim + d]!;
          out[((b * seq + t) * heads + h) * dim + d] = acc;
        }
      }
    }
  }
  return { out, lse };
}

interface Inputs {
  q: Float32Array;
  k: Float32Array;
  v: Float32Array;
  dOut: Float32Array;
}

function randomInputs({ batch, seq, heads, kvHeads, dim }: Shape, seed: number): Inputs {
  return {
    q: randn(batch * seq * heads * dim, seed, 1.5),
    k: randn(batch * seq * kvHeads * dim, seed + 1, 1.5),
    v: randn(batch * seq * kvHeads * dim, seed + 2),
    dOut: randn(batch * seq * heads * dim, seed + 3),
  };
}

function forward(kernels: Kernels, x: Inputs, segments: Int32Array, shape: Shape, scale: number) {
  const { batch, seq, heads, kvHeads, dim } = shape;
  const out = new Float32Array(batch * seq * heads * dim);
  const lse = new Float32Array(batch * heads * seq);
  kernels.attention(x.q, x.k, x.v, segments, batch, seq, heads, kvHeads, dim, scale, out, lse);
  return { out, lse };
}

function backward(kernels: Kernels, x: Inputs, segments: Int32Array, shape: Shape, scale: number) {
  const { batch, seq, heads, kvHeads, dim } = shape;
  const { out, lse } = forward(kernels, x, segments, shape, scale);
  // NaN-filled outputs: the kernel must write every element, not accumulate.
  const dq = new Float32Array(x.q.length).fill(NaN);
  const dk = new Float32Array(x.k.length).fill(NaN);
  const dv = new Float32Array(x.v.length).fill(NaN);
  kernels.attentionBackward(
    x.q,
    x.k,
    x.v,
    segments,
    out,
    lse,
    x.dOut,
    batch,
    seq,
    heads,
    kvHeads,
    dim,
    scale,
    dq,
    dk,
    dv,
  );
  return { out, lse, dq, dk, dv };
}

test('ref attention: a hand-computed case (two segments, one of a single token)', () => {
  // T = 3, one head, D = 2; segments [4, 4, 9]: token 2 sees only itself.
  const q = new Float32Array([1, 0, 0.5, -1, 2, 2]);
  const k = new Float32Array([1, 2, -1, 0.5, 3, 3]);
  const v = new Float32Array([1, -1, 2, 4, -3, 5]);
  const out = new Float32Array(6);
  const lse = new Float32Array(3);
  ref.attention(q, k, v, new Int32Array([4, 4, 9]), 1, 3, 1, 1, 2, 0.5, out, lse);
  // t = 1: scores 0.5·(0.5·1 − 1·2) = −0.75 and 0.5·(−0.5 − 0.5) = −0.5.
  const w0 = Math.exp(-0.75);
  const w1 = Math.exp(-0.5);
  const expected = [1, -1, (w0 * 1 + w1 * 2) / (w0 + w1), (w0 * -1 + w1 * 4) / (w0 + w1), -3, 5];
  assertClose(out, expected, 'out', { rtol: 1e-6 });
  assertClose(lse, [0.5, Math.log(w0 + w1), 0.5 * 12], 'lse', { rtol: 1e-6 });
});

test('ref attention matches the float64 masked-matrix definition (GQA 1, 2, 4; several segments per row)', () => {
  const seq = 9;
  // Row 0: a single-token segment between two longer ones; row 1: one token, then the rest.
  const segments = segmentsFromLengths(
    [
      [3, 1, 5],
      [1, 4, 4],
    ],
    seq,
  );
  for (const kvHeads of [4, 2, 1]) {
    const shape = { batch: 2, seq, heads: 4, kvHeads, dim: 5 };
    const x = randomInputs(shape, 10 + kvHeads);
    const scale = 1 / Math.sqrt(5);
    const { out, lse } = forward(ref, x, segments, shape, scale);
    const expected = naiveAttention(x.q, x.k, x.v, segments, shape, scale);
    assertClose(out, expected.out, `out (kvHeads ${kvHeads})`, { rtol: 1e-6, atol: 1e-6 });
    assertClose(lse, expected.lse, `lse (kvHeads ${kvHeads})`, { rtol: 1e-6, atol: 1e-6 });
  }
});

test('ref attentionBackward matches central finite differences in float64', () => {
  const shape = { batch: 2, seq: 5, heads: 4, kvHeads: 2, dim: 3 };
  const segments = segmentsFromLengths([[2, 1, 2], [5]], shape.seq);
  const scale = 0.7;
  const x = randomInputs(shape, 3);
  const { dq, dk, dv } = backward(ref, x, segments, shape, scale);
  // loss = Σ out ⊙ dOut, differentiated numerically in float64.
  const params = { q: Float64Array.from(x.q), k: Float64Array.from(x.k), v: Float64Array.from(x.v) };
  const loss = () => {
    const out = naiveAttention(params.q, params.k, params.v, segments, shape, scale).out;
    let total = 0;
    for (let i = 0; i < out.length; i++) total += out[i]! * x.dOut[i]!;
    return total;
  };
  const eps = 1e-6;
  for (const [name, analytic] of [
    ['q', dq],
    ['k', dk],
    ['v', dv],
  ] as const) {
    const p = params[name];
    const numeric = new Float64Array(p.length);
    for (let i = 0; i < p.length; i++) {
      const saved = p[i]!;
      p[i] = saved + eps;
      const up = loss();
      p[i] = saved - eps;
      const down = loss();
      p[i] = saved;
      numeric[i] = (up - down) / (2 * eps);
    }
    assertClose(analytic, numeric, `d${name}`, { rtol: 1e-4, atol: 1e-5 });
  }
});

test('attention rejects a segment id that comes back after another, and heads not a multiple of kvHeads', () => {
  const shape = { batch: 2, seq: 5, heads: 2, kvHeads: 1, dim: 2 };
  const x = randomInputs(shape, 1);
  const broken = new Int32Array([0, 0, 1, 1, 1, 3, 3, 4, 4, 3]);
  for (const kernels of [ref, cpu]) {
    assert.throws(
      () => forward(kernels, x, broken, shape, 1),
      /segments must be contiguous runs, but batch row 1 has segment id 3 again at position 4/,
      kernels.name,
    );
    const { batch, seq, heads, kvHeads, dim } = shape;
    const [out, lse] = [new Float32Array(x.q.length), new Float32Array(batch * heads * seq)];
    const [dq, dk, dv] = [new Float32Array(x.q.length), new Float32Array(x.k.length), new Float32Array(x.v.length)];
    assert.throws(
      () =>
        kernels.attentionBackward(
          x.q,
          x.k,
          x.v,
          broken,
          out,
          lse,
          x.dOut,
          batch,
          seq,
          heads,
          kvHeads,
          dim,
          1,
          dq,
          dk,
          dv,
        ),
      /attentionBackward: segments must be contiguous runs/,
      kernels.name,
    );
    const odd = { ...shape, heads: 3, kvHeads: 2 };
    const y = randomInputs(odd, 2);
    assert.throws(
      () => forward(kernels, y, new Int32Array(10), odd, 1),
      /heads \(3\) must be a multiple of kvHeads \(2\)/,
      kernels.name,
    );
  }
});

const nativeCases: { name: string; shape: Shape; lengths: number[][]; scale?: number }[] = [
  {
    name: 'T 77, D 8, GQA 2',
    shape: { batch: 2, seq: 77, heads: 4, kvHeads: 2, dim: 8 },
    lengths: [[30, 1, 46], [77]],
  },
  {
    name: 'T 150, D 64, GQA 2, segments across block edges',
    shape: { batch: 1, seq: 150, heads: 2, kvHeads: 1, dim: 64 },
    lengths: [[63, 1, 20, 66]],
  },
  {
    name: 'T 70, D 20, GQA 4, negative scale',
    shape: { batch: 2, seq: 70, heads: 4, kvHeads: 1, dim: 20 },
    lengths: [
      [1, 1, 68],
      [69, 1],
    ],
    scale: -0.3,
  },
  {
    name: 'T 200, D 32, 29 short segments (masked tiles inside blocks)',
    shape: { batch: 1, seq: 200, heads: 2, kvHeads: 2, dim: 32 },
    lengths: [[...Array<number>(28).fill(7), 4]],
  },
  {
    name: 'T 3, D 1, no grouping',
    shape: { batch: 1, seq: 3, heads: 3, kvHeads: 3, dim: 1 },
    lengths: [[3]],
  },
];

for (const { name, shape, lengths, scale = 1 / Math.sqrt(shape.dim) } of nativeCases) {
  test(`cpu attention forward and backward match ref (${name})`, () => {
    const segments = segmentsFromLengths(lengths, shape.seq);
    const x = randomInputs(shape, shape.seq + shape.dim);
    const expected = backward(ref, x, segments, shape, scale);
    const actual = backward(cpu, x, segments, shape, scale);
    for (const key of ['out', 'lse', 'dq', 'dk', 'dv'] as const) {
      const err = relativeError(actual[key], expected[key]);
      assert.ok(err < 1e-5, `${key}: relative error ${err}`);
    }
    assertClose(actual.out, expected.out, 'out', { rtol: 1e-4, atol: 1e-6 });
    assertClose(actual.lse, expected.lse, 'lse', { rtol: 1e-5, atol: 1e-6 });
  });
}

test('cpu attention: 1 and 2 threads give identical bits', () => {
  const shape = { batch: 2, seq: 130, heads: 4, kvHeads: 2, dim: 64 };
  const segments = segmentsFromLengths([[40, 1, 89], [130]], shape.seq);
  const x = randomInputs(shape, 77);
  const before = cpu.threads();
  try {
    cpu.setThreads(1);
    const one = backward(cpu, x, segments, shape, 0.125);
    cpu.setThreads(2);
    const two = backward(cpu, x, segments, shape, 0.125);
    for (const key of ['out', 'lse', 'dq', 'dk', 'dv'] as const)
      assert.deepEqual(new Uint32Array(two[key].buffer), new Uint32Array(one[key].buffer), key);
  } finally {
    cpu.setThreads(before);
  }
});
