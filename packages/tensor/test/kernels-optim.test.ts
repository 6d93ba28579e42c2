// Optimizer kernels. ref is checked against a float64 transcription of the PyTorch update rules run
// over several steps; cpu against ref on odd sizes, and 1 vs 2 threads for identical bits.
import test from 'node:test';
import assert from 'node:assert/strict';
import type { Kernels } from '../src/backend/kernels.js';
import { backendKernels } from '../src/backend/select.js';
import { assertClose, randn } from './support/data.js';

const ref = backendKernels('ref');
const cpu = backendKernels('cpu');

interface AdamConfig {
  lr: number;
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
}

/** torch.optim.AdamW, one tensor, written out in float64 (state kept in float64 throughout). */
function adamw64(p: number[], grads: number[][], c: AdamConfig): { p: number[]; m: number[]; v: number[] } {
  const m = p.map(() => 0);
  const v = p.map(() => 0);
  const param = p.slice();
  grads.forEach((g, index) => {
    const step = index + 1;
    for (let i = 0; i < param.length; i++) {
      param[i] = param[i]! * (1 - c.lr * c.weightDecay);
      m[i] = c.beta1 * m[i]! + (1 - c.beta1) * g[i]!;
      v[i] = c.beta2 * v[i]! + (1 - c.beta2) * g[i]! * g[i]!;
      const bias1 = 1 - c.beta1 ** step;
      const bias2 = 1 - c.beta2 ** step;
      const denom = Math.sqrt(v[i]!) / Math.sqrt(bias2) + c.eps;
      param[i] = param[i]! - (c.lr / bias1) * (m[i]! / denom);
    }
  });
  return { p: param, m, v };
}

interface SgdConfig {
  lr: number;
  momentum: number;
  weightDecay: number;
  nesterov: boolean;
}

/** torch.optim.SGD (dampening 0), one tensor, in float64. */
function sgd64(p: number[], grads: number[][], c: SgdConfig): { p: number[]; buf: number[] } {
  const param = p.slice();
  let buf: number[] | undefined;
  for (const g of grads) {
    const d = g.map((gi, i) => (c.weightDecay !== 0 ? gi + c.weightDecay * param[i]! : gi));
    let step = d;
    if (c.momentum !== 0) {
      buf = buf === undefined ? d.slice() : buf.map((b, i) => c.momentum * b + d[i]!);
      const b = buf;
      step = c.nesterov ? d.map((di, i) => di + c.momentum * b[i]!) : b;
    }
    for (let i = 0; i < param.length; i++) param[i] = param[i]! - c.lr * step[i]!;
  }
  return { p: param, buf: buf ?? [] };
}

function runAdamw(k: Kernels, p0: Float32Array, grads: Float32Array[], c: AdamConfig) {
  const n = p0.length;
  const p = p0.slice();
  const m = new Float32Array(n);
  const v = new Float32Array(n);
  grads.forEach((g, index) => {
    const step = index + 1;
    k.adamw(p, g, m, v, n, c.lr, c.beta1, c.beta2, c.eps, c.weightDecay, 1 - c.beta1 ** step, 1 - c.beta2 ** step);
  });
  return { p, m, v };
}

function runSgd(k: Kernels, p0: Float32Array, grads: Float32Array[], c: SgdConfig) {
  const n = p0.length;
  const p = p0.slice();
  // With momentum 0 the buffer is never touched: pass an empty one to prove it.
  const buf = new Float32Array(c.momentum !== 0 ? n : 0);
  grads.forEach((g, index) => k.sgd(p, g, buf, n, c.lr, c.momentum, c.weightDecay, c.nesterov, index === 0));
  return { p, buf };
}

const ADAM_CONFIGS: AdamConfig[] = [
  { lr: 1e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.01 },
  { lr: 0.05, beta1: 0.8, beta2: 0.95, eps: 1e-6, weightDecay: 0 },
  { lr: 3e-4, beta1: 0, beta2: 0.5, eps: 1e-3, weightDecay: 0.1 },
];

const SGD_CONFIGS: SgdConfig[] = [
  { lr: 0.1, momentum: 0, weightDecay: 0, nesterov: false },
  { lr: 0.1, momentum: 0, weightDecay: 0.05, nesterov: false },
  { lr: 0.05, momentum: 0.9, weightDecay: 0, nesterov: false },
  { lr: 0.05, momentum: 0.9, weightDecay: 0.01, nesterov: false },
  { lr: 0.05, momentum: 0.9, weightDecay: 0.01, nesterov: true },
  { lr: 0.2, momentum: 0.5, weightDecay: 0, nesterov: true },
];

function gradients(n: number, steps: number, seed: number): Float32Array[] {
  return Array.from({ length: steps }, (_, s) => randn(n, seed + 17 * s, 0.5 + s));
}

test('adamw: ref follows the float64 transcription over several steps', () => {
  const p0 = randn(64, 1, 2);
  const grads = gradients(64, 5, 2);
  for (const c of ADAM_CONFIGS) {
    const want = adamw64(
      Array.from(p0),
      grads.map((g) => Array.from(g)),
      c,
    );
    // one step by hand for the first element: m̂ = g, v̂ = g², so p moves by lr·g/(|g| + eps)
    const first = runAdamw(ref, p0, grads.slice(0, 1), c);
    const g0 = grads[0]![0]!;
    const byHand = p0[0]! * (1 - c.lr * c.weightDecay) - (c.lr * g0) / (Math.abs(g0) + c.eps);
    assert.ok(Math.abs(first.p[0]! - byHand) <= 1e-6 * Math.abs(byHand), `first step ${first.p[0]} vs ${byHand}`);
    const got = runAdamw(ref, p0, grads, c);
    assertClose(got.m, want.m, `ref adamw m ${JSON.stringify(c)}`, { rtol: 1e-6, atol: 1e-7 });
    assertClose(got.v, want.v, `ref adamw v ${JSON.stringify(c)}`, { rtol: 1e-6, atol: 1e-9 });
    assertClose(got.p, want.p, `ref adamw p ${JSON.stringify(c)}`, { rtol: 1e-6, atol: 1e-7 });
  }
});

test('sgd: ref follows the float64 transcription (first step, momentum 0, nesterov, weight decay)', () => {
  const p0 = randn(64, 3, 2);
  const grads = gradients(64, 4, 4);
  for (const c of SGD_CONFIGS) {
    const want = sgd64(
      Array.from(p0),
      grads.map((g) => Array.from(g)),
      c,
    );
    const got = runSgd(ref, p0, grads, c);
    assertClose(got.p, want.p, `ref sgd p ${JSON.stringify(c)}`, { rtol: 1e-6, atol: 1e-7 });
    if (c.momentum !== 0)
      assertClose(got.buf, want.buf, `ref sgd buf ${JSON.stringify(c)}`, { rtol: 1e-6, atol: 1e-7 });
  }
  // The first step with momentum copies g' into the buffer, whatever it held before.
  const p = Float32Array.of(1, 2);
  const buf = Float32Array.of(100, 100);
  ref.sgd(p, Float32Array.of(0.5, -1), buf, 2, 0.1, 0.9, 0.5, false, true);
  assert.deepEqual(Array.from(buf), [1, 0]); // g' = g + 0.5·p
  assert.deepEqual(Array.from(p), [Math.fround(0.9), 2]);
  ref.sgd(p, Float32Array.of(0, 0), buf, 2, 0.1, 0.9, 0, true, false);
  // buf = 0.9·[1, 0] + 0 = [0.9, 0]; nesterov d = 0 + 0.9·buf = [0.81, 0]
  assert.deepEqual(Array.from(buf), [Math.fround(0.9), 0]);
  assert.deepEqual(Array.from(p), [Math.fround(Math.fround(0.9) - 0.1 * (0 + 0.9 * Math.fround(0.9))), 2]);
});

test('adamw and sgd: cpu matches ref at odd sizes; 1 and 2 threads agree', () => {
  for (const n of [0, 1, 7, 16, 17, 1001, 100_003]) {
    const p0 = randn(n, 10 + n, 2);
    const grads = gradients(n, 3, 20 + n);
    for (const c of ADAM_CONFIGS) {
      const want = runAdamw(ref, p0, grads, c);
      cpu.setThreads(1);
      const one = runAdamw(cpu, p0, grads, c);
      cpu.setThreads(2);
      const two = runAdamw(cpu, p0, grads, c);
      for (const key of ['p', 'm', 'v'] as const) {
        assert.deepEqual(two[key], one[key], `cpu adamw ${key} n=${n}: 1 vs 2 threads`);
        assertClose(two[key], want[key], `cpu adamw ${key} n=${n} ${JSON.stringify(c)}`, { rtol: 2e-6, atol: 1e-7 });
      }
    }
    for (const c of SGD_CONFIGS) {
      const want = runSgd(ref, p0, grads, c);
      cpu.setThreads(1);
      const one = runSgd(cpu, p0, grads, c);
      cpu.setThreads(2);
      const two = runSgd(cpu, p0, grads, c);
      for (const key of ['p', 'buf'] as const) {
        assert.deepEqual(two[key], one[key], `cpu sgd ${key} n=${n}: 1 vs 2 threads`);
        // ref keeps g' = g + wd·p in float64, cpu rounds it to f32 (as PyTorch does): with values of
        // order 1 that is ~1e-7 absolute, which momentum sums can leave on a small buffer entry
        assertClose(two[key], want[key], `cpu sgd ${key} n=${n} ${JSON.stringify(c)}`, { rtol: 2e-6, atol: 1e-6 });
      }
    }
  }
});

test('adamw and sgd: cpu checks array lengths', () => {
  const a = new Float32Array(4);
  assert.throws(
    () => cpu.adamw(a, a, a, new Float32Array(3), 4, 1e-3, 0.9, 0.999, 1e-8, 0, 0.1, 0.001),
    /needs at least 4/,
  );
  assert.throws(() => cpu.sgd(a, a, new Float32Array(0), 4, 0.1, 0.9, 0, false, true), /needs at least 4/);
  cpu.sgd(a, a, new Float32Array(0), 4, 0.1, 0, 0, false, true); // momentum 0: no buffer needed
});
