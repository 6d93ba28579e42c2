// Optimizers and schedules against float64 transcriptions of spec rl.md §8, plus clipping and
// state round trips.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as T from '../src/index.js';
import { assertClose, randn } from './support/data.js';

T.useBackend('ref');

function paramWithGrad(values: Float32Array, grad: Float32Array, shape?: number[]): T.Tensor {
  const p = T.keep(T.tensor(values.slice(), shape));
  p.requiresGrad = true;
  p.grad = T.keep(T.tensor(grad.slice(), shape));
  return p;
}

test('AdamW matches the PyTorch update over several steps', () => {
  const p0 = randn(7, 1);
  const grads = [randn(7, 2), randn(7, 3), randn(7, 4)];
  const [lr, b1, b2, eps, wd] = [0.01, 0.9, 0.999, 1e-8, 0.1];
  const w = T.keep(T.tensor(p0.slice()));
  w.requiresGrad = true;
  const opt = new T.AdamW({ w }, { lr, betas: [b1, b2], eps, weightDecay: wd });
  const ref = Float64Array.from(p0);
  const m = new Float64Array(7);
  const v = new Float64Array(7);
  grads.forEach((g, step) => {
    w.grad = T.keep(T.tensor(g.slice()));
    opt.step();
    opt.zeroGrad();
    const k = step + 1;
    for (let i = 0; i < 7; i++) {
      m[i] = b1 * m[i]! + (1 - b1) * g[i]!;
      v[i] = b2 * v[i]! + (1 - b2) * g[i]! ** 2;
      const mh = m[i]! / (1 - b1 ** k);
      const vh = v[i]! / (1 - b2 ** k);
      ref[i] = ref[i]! * (1 - lr * wd) - (lr * mh) / (Math.sqrt(vh) + eps);
    }
  });
  assertClose(w.toArray(), ref, 'adamw', { rtol: 1e-5, atol: 1e-6 });
});

test('SGD with momentum, Nesterov and coupled weight decay', () => {
  for (const nesterov of [true, false]) {
    const p0 = randn(5, 5);
    const grads = [randn(5, 6), randn(5, 7), randn(5, 8)];
    const [lr, mu, wd] = [0.1, 0.9, 0.01];
    const w = T.keep(T.tensor(p0.slice()));
    w.requiresGrad = true;
    const opt = new T.SGD({ w }, { lr, momentum: mu, nesterov, weightDecay: wd });
    const ref = Float64Array.from(p0);
    const b = new Float64Array(5);
    grads.forEach((g, step) => {
      w.grad = T.keep(T.tensor(g.slice()));
      opt.step();
      opt.zeroGrad();
      for (let i = 0; i < 5; i++) {
        const gi = g[i]! + wd * ref[i]!;
        b[i] = step === 0 ? gi : mu * b[i]! + gi;
        const d = nesterov ? gi + mu * b[i]! : b[i]!;
        ref[i] = ref[i]! - lr * d;
      }
    });
    assertClose(w.toArray(), ref, `sgd nesterov=${nesterov}`, { rtol: 1e-5, atol: 1e-6 });
  }
});

test('Newton–Schulz orthogonalises: singular values land near 1', () => {
  for (const [rows, cols] of [
    [8, 12],
    [12, 8],
  ] as const) {
    const u = randn(rows * cols, 9);
    const o = T.newtonSchulz(u, rows, cols);
    // O·Oᵀ (the smaller side) should be close to the identity: the quintic iteration leaves
    // singular values in roughly [0.7, 1.2].
    const small = Math.min(rows, cols);
    for (let i = 0; i < small; i++) {
      let diag = 0;
      for (let j = 0; j < Math.max(rows, cols); j++) {
        const a = rows <= cols ? o[i * cols + j]! : o[j * cols + i]!;
        diag += a * a;
      }
      assert.ok(diag > 0.45 && diag < 1.5, `${rows}x${cols}: squared singular direction norm ${diag}`);
    }
  }
});

test('Muon routes 2-D weights to Muon and the rest (norms, embeddings, lm_head) to AdamW', () => {
  const shapes: Record<string, number[]> = {
    'model.layers.0.mlp.up_proj.weight': [6, 4],
    'model.embed_tokens.weight': [10, 4],
    'lm_head.weight': [10, 4],
    'model.norm.weight': [4],
  };
  const params: Record<string, T.Tensor> = {};
  let seed = 20;
  for (const [name, shape] of Object.entries(shapes)) {
    const n = shape.reduce((a, b) => a * b, 1);
    params[name] = paramWithGrad(randn(n, seed++), randn(n, seed++), shape);
  }
  const before = Object.fromEntries(Object.entries(params).map(([k, p]) => [k, p.toArray() as Float32Array]));
  const lr = 0.02;
  const opt = new T.Muon(params, { lr, weightDecay: 0 });
  opt.step();
  const state = opt.stateDict();
  assert.ok(state.tensors['model.layers.0.mlp.up_proj.weight.momentum_buffer']);
  assert.ok(state.tensors['model.embed_tokens.weight.exp_avg']);
  assert.ok(state.tensors['lm_head.weight.exp_avg_sq']);
  assert.ok(state.tensors['model.norm.weight.exp_avg']);
  assert.equal(state.tensors['model.layers.0.mlp.up_proj.weight.exp_avg'], undefined);
  // First AdamW step moves every element by lr (sign of the gradient), whatever the gradient scale.
  const norm = params['model.norm.weight']!;
  const g = norm.grad!.toArray();
  const after = norm.toArray();
  for (let i = 0; i < 4; i++)
    assert.ok(Math.abs(before['model.norm.weight']![i]! - after[i]! - lr * Math.sign(g[i]!)) < 1e-5);
  // The Muon step has the RMS-matched size: lr · 0.2 · sqrt(max(rows, cols)) times an orthogonal update.
  const w = params['model.layers.0.mlp.up_proj.weight']!;
  const delta = (w.toArray() as Float32Array).map((v, i) => before['model.layers.0.mlp.up_proj.weight']![i]! - v);
  const o = T.newtonSchulz(
    (() => {
      const u = w.grad!.toArray() as Float32Array;
      const bits = new Uint16Array(u.length);
      T.kernels().f32ToBf16(u, bits, u.length);
      T.kernels().bf16ToF32(bits, u, u.length);
      return u;
    })(),
    6,
    4,
  );
  const scale = lr * 0.2 * Math.sqrt(6);
  assertClose(
    delta,
    o.map((v) => v * scale),
    'muon step',
    { rtol: 1e-4, atol: 1e-6 },
  );
});

test('optimizer state round-trips and is validated', () => {
  const make = (): { opt: T.AdamW; w: T.Tensor } => {
    const w = paramWithGrad(randn(6, 30), randn(6, 31), [2, 3]);
    return { opt: new T.AdamW({ w }, { lr: 0.01 }), w };
  };
  const a = make();
  a.opt.step();
  const state = a.opt.stateDict();
  const b = make();
  b.w.f32().set(a.w.f32()); // parameters come from the model checkpoint, state from the optimizer's
  b.opt.loadStateDict(state);
  a.opt.step();
  b.opt.step();
  assert.deepEqual(b.w.toArray(), a.w.toArray());
  assert.equal(b.opt.stepCount, 2);
  assert.throws(() => b.opt.loadStateDict({ ...state, type: 'sgd' }), /state is for a 'sgd' optimizer/);
  assert.throws(
    () => b.opt.loadStateDict({ ...state, tensors: { 'w.exp_avg': new Float32Array(5) } }),
    /'w.exp_avg' has 5 values, parameter 'w' has 6/,
  );
  assert.throws(
    () => b.opt.loadStateDict({ ...state, tensors: { 'v.exp_avg': new Float32Array(6) } }),
    /names no trainable parameter/,
  );
});

test('global-norm clipping returns the pre-clip norm and scales to max_norm', () => {
  const a = paramWithGrad(new Float32Array(2), Float32Array.from([3, 0]));
  const b = paramWithGrad(new Float32Array(1), Float32Array.from([4]));
  const norm = T.clipGradNorm([a, b], 1);
  assert.ok(Math.abs(norm - 5) < 1e-6);
  assert.ok(Math.abs(T.gradNorm([a, b]) - 1) < 1e-5);
  const before = T.gradNorm([a, b]);
  assert.equal(T.clipGradNorm([a, b], 10), before, 'under the limit: unchanged');
});

test('schedules follow spec §8.2', () => {
  const lr = 1e-3;
  assert.equal(T.learningRateAt({ type: 'constant' }, lr, 100), lr);
  const linear = { type: 'linear' as const, warmupSteps: 10, decaySteps: 10, minLr: 0, maxSteps: 40 };
  const f0 = 1e-8;
  assert.ok(Math.abs(T.learningRateAt(linear, lr, 0) - lr * f0) < 1e-15, 'first update ≈ 0');
  assert.ok(Math.abs(T.learningRateAt(linear, lr, 5) - lr * (f0 + (1 - f0) * 0.5)) < 1e-12);
  assert.equal(T.learningRateAt(linear, lr, 10), lr);
  assert.equal(T.learningRateAt(linear, lr, 29), lr);
  assert.equal(T.learningRateAt(linear, lr, 30), lr);
  assert.ok(Math.abs(T.learningRateAt(linear, lr, 39) - lr * f0) < 1e-15, 'reaches min_lr at the last step');
  const withMin = { ...linear, minLr: 1e-4 };
  assert.ok(Math.abs(T.learningRateAt(withMin, lr, 39) - 1e-4) < 1e-12);
  const cosine = { type: 'cosine' as const, warmupSteps: 2, minLr: 1e-5, maxSteps: 12 };
  assert.ok(Math.abs(T.learningRateAt(cosine, lr, 2) - lr) < 1e-12);
  assert.ok(Math.abs(T.learningRateAt(cosine, lr, 7) - (1e-5 + (lr - 1e-5) / 2)) < 1e-12);
  const s = new T.Scheduler(cosine, lr);
  s.step();
  s.step();
  assert.ok(Math.abs(s.lr() - lr) < 1e-12);
  const s2 = new T.Scheduler(cosine, lr);
  s2.loadStateDict(s.stateDict());
  assert.equal(s2.lr(), s.lr());
  assert.throws(() => T.validateSchedule({ ...linear, decaySteps: 35 }, 40), /exceeds max_steps/);
  assert.throws(() => T.validateSchedule({ ...cosine, warmupSteps: 12 }, 12), /cosine needs warmup_steps/);
  assert.throws(() => T.validateSchedule({ ...linear, decaySteps: 5 }, undefined), /decay_steps needs max_steps/);
});
