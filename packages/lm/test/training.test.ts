// Training the Qwen3 decoder on the native backend: deterministic for a given seed and thread count,
// loss goes down, and memory stays flat (no tensor or buffer growth) across steps.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as T from '@prime-rl/tensor';
import { DecoderModel, qwen3Config } from '../src/index.js';

const CONFIG = qwen3Config({
  vocabSize: 64,
  hiddenSize: 32,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
  headDim: 8,
  intermediateSize: 48,
  rmsNormEps: 1e-6,
  ropeTheta: 1e6,
  tieWordEmbeddings: true,
});

function train(steps: number, options: { recompute?: boolean | number; threads?: number } = {}) {
  T.useBackend('cpu', { threads: options.threads ?? 2 });
  const model = DecoderModel.init(CONFIG, { seed: 7, std: 0.1 });
  const opt = new T.AdamW(model.params, { lr: 3e-3 });
  // Two packed documents per row; the targets are the inputs themselves (learn to copy).
  const ids = T.keep(T.randint([4, 16], CONFIG.vocabSize, new T.Generator(11)));
  const segments = T.keep(
    T.tensor(
      Int32Array.from({ length: 64 }, (_, i) => (i % 16 < 9 ? 0 : 1)),
      [4, 16],
    ),
  );
  const positions = T.keep(
    T.tensor(
      Int32Array.from({ length: 64 }, (_, i) => (i % 16 < 9 ? i % 16 : (i % 16) - 9)),
      [4, 16],
    ),
  );
  const losses: number[] = [];
  const memory: { live: number; allocated: number }[] = [];
  for (let s = 0; s < steps; s++) {
    losses.push(
      T.tidy(() => {
        const hidden = model.hidden(ids, { positions, segments, recompute: options.recompute ?? false });
        const { logprobs } = T.tokenLogprobs(hidden, model.lmHead, ids, { chunk: 16 });
        const loss = T.neg(T.mean(logprobs));
        loss.backward();
        T.clipGradNorm(model.params.values(), 1.0);
        opt.step();
        opt.zeroGrad();
        return loss.item();
      }),
    );
    memory.push({ live: T.liveTensors().tensors, allocated: T.pool.stats.allocated });
  }
  const weights = [...model.params.values()].map((p) => p.toArray() as Float32Array);
  for (const p of model.params.values()) p.dispose();
  [ids, segments, positions].forEach((t) => t.dispose());
  return { losses, weights, memory };
}

test('same seed and thread count give bit-identical training', () => {
  const a = train(4);
  const b = train(4);
  assert.deepEqual(a.losses, b.losses);
  a.weights.forEach((w, i) => assert.deepEqual(w, b.weights[i]));
});

test('the loss falls and memory stays flat across steps', () => {
  const { losses, memory } = train(40);
  assert.ok(losses[39]! < losses[0]! * 0.7, `loss ${losses[0]} → ${losses[39]}`);
  assert.deepEqual(memory[39], memory[5], 'no live tensors or fresh buffers after warm-up');
});

test('recomputing activations gives the same training as storing them', () => {
  const stored = train(3);
  const recomputed = train(3, { recompute: true });
  assert.deepEqual(recomputed.losses, stored.losses);
  const everyOther = train(3, { recompute: 2 });
  assert.deepEqual(everyOther.losses, stored.losses);
  assert.deepEqual(everyOther.weights, stored.weights);
});
