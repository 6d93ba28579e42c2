// Autograd mechanics and memory ownership: accumulation, shared inputs, no-grad, freed graphs,
// scopes, and flat memory over many training steps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as T from '../src/index.js';

T.useBackend('ref');

function param(values: number[], shape?: number[]): T.Tensor {
  const p = T.keep(T.tensor(values, shape));
  p.requiresGrad = true;
  return p;
}

test('gradients accumulate across backward passes until cleared', () => {
  const x = param([1, 2, 3]);
  T.tidy(() => T.sum(T.mul(x, x)).backward());
  assert.deepEqual([...x.grad!.toArray()], [2, 4, 6]);
  T.tidy(() => T.sum(T.mul(x, 3)).backward());
  assert.deepEqual([...x.grad!.toArray()], [5, 7, 9]);
  x.grad!.dispose();
  x.grad = null;
  T.tidy(() => T.sum(x).backward());
  assert.deepEqual([...x.grad!.toArray()], [1, 1, 1]);
});

test('a tensor used by several ops gets the sum of their gradients', () => {
  const x = param([0.5, -1]);
  T.tidy(() => {
    const y = T.exp(x);
    const z = T.add(T.mul(y, y), T.add(y, x)); // e^{2x} + e^x + x
    T.sum(z).backward();
  });
  const g = x.grad!.toArray();
  [0.5, -1].forEach((v, i) => assert.ok(Math.abs(g[i]! - (2 * Math.exp(2 * v) + Math.exp(v) + 1)) < 1e-5));
});

test('noGrad records nothing; detach cuts the graph', () => {
  const x = param([1, 2]);
  const y = T.noGrad(() => T.mul(x, 2));
  assert.equal(y.requiresGrad, false);
  assert.equal(y.node, null);
  const d = T.detach(T.mul(x, 2));
  assert.equal(d.requiresGrad, false);
  assert.throws(() => T.sum(d).backward(), /does not require grad/);
});

test('backward through a freed graph fails clearly; retainGraph allows a second pass', () => {
  const x = param([1, 2]);
  const loss = T.sum(T.square(x));
  loss.backward({ retainGraph: true });
  loss.backward();
  assert.deepEqual([...x.grad!.toArray()], [4, 8]);
  assert.throws(() => loss.backward(), /already freed/);
});

test('non-scalar roots need an explicit gradient of the same shape', () => {
  const x = param([1, 2, 3]);
  const y = T.mul(x, 2);
  assert.throws(() => y.backward(), /not a scalar/);
  y.backward({ grad: T.tensor([1, 0, -1]) });
  assert.deepEqual([...x.grad!.toArray()], [2, 0, -2]);
});

test('tidy disposes what it made except results and kept tensors', () => {
  const before = T.liveTensors().tensors;
  let inner: T.Tensor | undefined;
  const result = T.tidy(() => {
    const a = T.ones([4]);
    inner = T.add(a, 1);
    return { out: T.mul(inner, 2) };
  });
  assert.equal(inner!.isDisposed, true);
  assert.equal(result.out.isDisposed, false);
  assert.deepEqual([...result.out.toArray()], [4, 4, 4, 4]);
  result.out.dispose();
  assert.equal(T.liveTensors().tensors, before);
  assert.throws(() => inner!.toArray(), /was disposed/);
});

test('a tidy that throws still frees its tensors', () => {
  const before = T.liveTensors().tensors;
  assert.throws(() =>
    T.tidy(() => {
      T.ones([8]);
      throw new Error('boom');
    }),
  );
  assert.equal(T.liveTensors().tensors, before);
});

test('training steps in tidy reuse buffers: live tensors and allocations stay flat', () => {
  T.manualSeed(3);
  const w = T.keep(T.randn([16, 8], { std: 0.1 }));
  w.requiresGrad = true;
  const x = T.keep(T.randn([4, 16]));
  const opt = new T.AdamW({ w }, { lr: 1e-2 });
  const step = (): number =>
    T.tidy(() => {
      const loss = T.mean(T.square(T.silu(T.matmul(x, w))));
      loss.backward();
      opt.step();
      opt.zeroGrad();
      return loss.item();
    });
  for (let i = 0; i < 5; i++) step();
  const live = T.liveTensors();
  const allocated = T.pool.stats.allocated;
  let last = 0;
  for (let i = 0; i < 2000; i++) last = step();
  assert.deepEqual(T.liveTensors(), live);
  assert.equal(T.pool.stats.allocated, allocated, 'every buffer after warm-up came from the pool');
  assert.ok(Number.isFinite(last));
});

test('checkpoint recomputes in backward and matches the stored-activation gradients', () => {
  const w = param([0.1, -0.2, 0.3, 0.4], [2, 2]);
  const x = param([1, 2, -1, 0.5], [2, 2]);
  const block = (h: T.Tensor): T.Tensor => T.silu(T.matmul(h, w));
  T.tidy(() => T.sum(T.square(block(block(x)))).backward());
  const plain = [w.grad!.toArray(), x.grad!.toArray()];
  w.grad!.dispose();
  x.grad!.dispose();
  w.grad = x.grad = null;
  T.tidy(() => T.sum(T.square(T.checkpoint(block, T.checkpoint(block, x)))).backward());
  assert.deepEqual([w.grad!.toArray(), x.grad!.toArray()], plain);
});

test('ops reject bad input with errors that name the op and the shapes', () => {
  assert.throws(() => T.add(T.ones([2, 3]), T.ones([4])), /add: shapes \[2, 3\] and \[4\] do not broadcast/);
  assert.throws(() => T.matmul(T.ones([2, 3]), T.ones([4, 2])), /matmul: inner dimensions differ/);
  assert.throws(() => T.exp(T.tensor(Int32Array.from([1]))), /exp: input must be f32, got i32/);
  assert.throws(() => T.reshape(T.ones([6]), [4, -1]), /cannot infer -1/);
  assert.throws(() => T.ones([2]).item(), /has 2 elements, not 1/);
});
