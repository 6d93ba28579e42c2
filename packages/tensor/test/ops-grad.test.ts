// Every op's backward rule against central finite differences of its forward, on the ref backend.
import { test } from 'node:test';
import * as T from '../src/index.js';
import { gradcheck } from './support/gradcheck.js';
import { randn, randInt } from './support/data.js';

T.useBackend('ref');

const positive = (n: number, seed: number): Float32Array => randn(n, seed).map((v) => 0.5 + Math.abs(v));

test('broadcasting binary ops', () => {
  const a = randn(12, 1);
  const b = randn(4, 2);
  const bPos = positive(4, 3);
  gradcheck('add', (x, y) => T.add(x!, y!), [a, b], [[3, 4], [4]]);
  gradcheck(
    'sub',
    (x, y) => T.sub(x!, y!),
    [a, randn(3, 4)],
    [
      [3, 4],
      [3, 1],
    ],
  );
  gradcheck(
    'mul',
    (x, y) => T.mul(x!, y!),
    [a, b],
    [
      [3, 4],
      [1, 4],
    ],
  );
  gradcheck('div', (x, y) => T.div(x!, y!), [a, bPos], [[3, 4], [4]]);
  gradcheck('pow', (x, y) => T.pow(x!, y!), [positive(12, 5), randn(4, 6)], [[3, 4], [4]]);
  gradcheck('maximum', (x, y) => T.maximum(x!, y!), [a, b], [[3, 4], [4]]);
  gradcheck('minimum', (x, y) => T.minimum(x!, y!), [a, b], [[3, 4], [4]]);
  gradcheck('scalar operand', (x) => T.mul(T.add(x!, 2), 3), [a], [[12]]);
});

test('unary and scalar ops', () => {
  const x = randn(10, 7);
  const p = positive(10, 8);
  for (const [name, f, input] of [
    ['neg', T.neg, x],
    ['exp', T.exp, x],
    ['log', T.log, p],
    ['sqrt', T.sqrt, p],
    ['rsqrt', T.rsqrt, p],
    ['reciprocal', T.reciprocal, p],
    ['square', T.square, x],
    ['sigmoid', T.sigmoid, x],
    ['silu', T.silu, x],
    ['tanh', T.tanh, x],
  ] as const)
    gradcheck(name, (t) => f(t!), [input], [[2, 5]]);
  gradcheck('affine', (t) => T.affine(t!, -1.5, 0.25), [x], [[10]]);
  gradcheck('powScalar', (t) => T.powScalar(t!, 3), [x], [[10]]);
  // Inputs kept away from the bounds: finite differences across a kink mean nothing.
  const spaced = Float32Array.from([-0.9, -0.5, -0.1, 0, 0.2, 0.35, 0.6, 0.9, -0.2, 0.1]);
  gradcheck('clamp', (t) => T.clamp(t!, -0.3, 0.4), [spaced], [[10]]);
});

test('reductions', () => {
  const x = randn(24, 11);
  gradcheck('sum all', (t) => T.sum(t!), [x], [[2, 3, 4]]);
  gradcheck('sum dim 1', (t) => T.sum(t!, 1), [x], [[2, 3, 4]]);
  gradcheck('sum dims keep', (t) => T.sum(t!, [0, 2], true), [x], [[2, 3, 4]]);
  gradcheck('mean', (t) => T.mean(t!, -1), [x], [[2, 3, 4]]);
  gradcheck('max', (t) => T.max(t!, 1), [x], [[2, 3, 4]]);
});

test('matmul and linear, including transposed and broadcast operands', () => {
  gradcheck(
    'matmul 2d',
    (a, b) => T.matmul(a!, b!),
    [randn(6, 1), randn(8, 2)],
    [
      [3, 2],
      [2, 4],
    ],
  );
  gradcheck(
    'matmul batched',
    (a, b) => T.matmul(a!, b!),
    [randn(24, 3), randn(24, 4)],
    [
      [2, 3, 4],
      [2, 4, 3],
    ],
  );
  gradcheck(
    'matmul shared right',
    (a, b) => T.matmul(a!, b!),
    [randn(24, 5), randn(8, 6)],
    [
      [2, 3, 4],
      [4, 2],
    ],
  );
  gradcheck(
    'matmul shared left',
    (a, b) => T.matmul(a!, b!),
    [randn(12, 5), randn(24, 6)],
    [
      [3, 4],
      [2, 4, 3],
    ],
  );
  gradcheck(
    'matmul transposed views',
    (a, b) => T.matmul(T.transpose(a!), T.transpose(b!)),
    [randn(12, 7), randn(20, 8)],
    [
      [4, 3],
      [5, 4],
    ],
  );
  gradcheck(
    'linear',
    (x, w) => T.linear(x!, w!),
    [randn(30, 9), randn(15, 10)],
    [
      [2, 3, 5],
      [3, 5],
    ],
  );
});

test('views and data movement', () => {
  const x = randn(24, 12);
  gradcheck('reshape', (t) => T.mul(T.reshape(t!, [4, -1]), T.tensor(randn(24, 1), [4, 6])), [x], [[2, 3, 4]]);
  gradcheck('permute', (t) => T.contiguous(T.permute(t!, [2, 0, 1])), [x], [[2, 3, 4]]);
  gradcheck('narrow', (t) => T.narrow(t!, 1, 1, 2), [x], [[2, 3, 4]]);
  gradcheck(
    'cat',
    (a, b) => T.cat([a!, b!], 1),
    [x, randn(8, 13)],
    [
      [2, 3, 4],
      [2, 1, 4],
    ],
  );
  gradcheck('unsqueeze/squeeze', (t) => T.squeeze(T.mul(T.unsqueeze(t!, 1), 2), 1), [x], [[6, 4]]);
  gradcheck('expand', (t) => T.expand(t!, [2, 3, 4]), [randn(4, 14)], [[1, 4]]);
});

test('transformer ops', () => {
  const ids = T.tensor(Int32Array.from([3, 1, 3, 0, 2]), [5]);
  gradcheck('embedding', (w) => T.embedding(w!, ids), [randn(20, 15)], [[4, 5]]);
  gradcheck('rmsnorm', (x, w) => T.rmsnorm(x!, w!, 1e-6), [randn(12, 16), randn(4, 17)], [[3, 4], [4]], { h: 3e-3 });
  const positions = T.tensor(Int32Array.from([0, 1, 2, 0, 1, 0]), [2, 3]);
  gradcheck('rope', (x) => T.rope(x!, positions, 10000), [randn(48, 18)], [[2, 3, 2, 4]]);
  gradcheck(
    'swiglu',
    (g, u) => T.swiglu(g!, u!),
    [randn(10, 19), randn(10, 20)],
    [
      [2, 5],
      [2, 5],
    ],
  );
  gradcheck('softmax', (x) => T.softmax(x!), [randn(12, 21)], [[3, 4]]);
  gradcheck('logSoftmax', (x) => T.logSoftmax(x!), [randn(12, 22)], [[3, 4]]);
  const idx = T.tensor(Int32Array.from([1, 0, 3]), [3]);
  gradcheck('gatherLast', (x) => T.gatherLast(x!, idx), [randn(12, 23)], [[3, 4]]);
  gradcheck('crossEntropy', (x) => T.crossEntropy(x!, idx), [randn(12, 24)], [[3, 4]]);
});

test('attention over packed documents', () => {
  const segments = T.tensor(Int32Array.from([0, 0, 0, 0, 0, 0, 1, 1, 2, 2]), [2, 5]);
  const [b, t, h, kv, d] = [2, 5, 4, 2, 3];
  gradcheck(
    'attention',
    (q, k, v) => T.attention(q!, k!, v!, { segments }),
    [randn(b * t * h * d, 25), randn(b * t * kv * d, 26), randn(b * t * kv * d, 27)],
    [
      [b, t, h, d],
      [b, t, kv, d],
      [b, t, kv, d],
    ],
  );
});

test('tokenLogprobs: both outputs, with temperature and chunking', () => {
  const targets = T.tensor(randInt(6, 7, 28), [2, 3]);
  const shapes = [
    [2, 3, 5],
    [7, 5],
  ];
  const inputs = [randn(30, 29), randn(35, 30)];
  gradcheck(
    'logprobs',
    (hd, w) => T.tokenLogprobs(hd!, w!, targets, { temperature: 0.7, chunk: 4 }).logprobs,
    inputs,
    shapes,
  );
  gradcheck(
    'entropy',
    (hd, w) => T.tokenLogprobs(hd!, w!, targets, { temperature: 0.7, chunk: 4 }).entropy,
    inputs,
    shapes,
  );
  gradcheck(
    'both',
    (hd, w) => {
      const { logprobs, entropy } = T.tokenLogprobs(hd!, w!, targets, { temperature: 1.3, chunk: 2 });
      return T.add(logprobs, T.mul(entropy, 0.5));
    },
    inputs,
    shapes,
  );
});

test('checkpointed blocks give the same gradients as plain ones', () => {
  const w = randn(16, 31);
  gradcheck(
    'checkpoint',
    (x, weight) => T.checkpoint((y) => T.silu(T.matmul(y!, weight!)), x!),
    [randn(8, 32), w],
    [
      [2, 4],
      [4, 4],
    ],
  );
});
