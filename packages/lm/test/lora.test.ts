// LoRA on the decoder: a fresh adapter changes nothing, training moves only the adapters, merge and
// unmerge agree with the adapter forward, module patterns select what they say, dropout is seeded.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as T from '@prime-rl/tensor';
import type { Tensor } from '@prime-rl/tensor';
import { DecoderModel, loadPretrained, savePretrained, type DecoderConfig } from '../src/index.js';
import {
  attachLora,
  attachedLora,
  dropout,
  loraConfig,
  matchModules,
  moduleMatches,
  type LoraHandle,
} from '../src/lora/index.js';
import { relativeError, temporaryDirectory } from './support/compare.js';
import { SHAPE, TIED, UNTIED } from './support/lora-models.js';

const IDS = Int32Array.from({ length: 2 * 12 }, (_, i) => (i * 7 + 3) % SHAPE.vocabSize);

function logitsOf(model: DecoderModel): Float32Array {
  return T.tidy(() => T.noGrad(() => model.forward(T.tensor(IDS.slice(), [2, 12])).toArray() as Float32Array));
}

/** Logits with autograd on (what a training step sees; dropout needs it). */
function trainingLogitsOf(model: DecoderModel): Float32Array {
  return T.tidy(() => model.forward(T.tensor(IDS.slice(), [2, 12])).toArray() as Float32Array);
}

function snapshot(params: ReadonlyMap<string, Tensor>): Map<string, Float32Array> {
  return new Map([...params].map(([name, p]) => [name, p.toArray() as Float32Array]));
}

/** A few AdamW steps of next-token prediction on the handle's parameters only. */
function trainSteps(model: DecoderModel, handle: LoraHandle, steps: number): number[] {
  const optimizer = new T.AdamW(handle.params, { lr: 1e-2 });
  const losses: number[] = [];
  for (let s = 0; s < steps; s++)
    losses.push(
      T.tidy(() => {
        const inputs = T.tensor(IDS.slice(), [2, 12]);
        const targets = T.tensor(
          IDS.map((id) => (id + 1) % SHAPE.vocabSize),
          [2, 12],
        );
        const { logprobs } = T.tokenLogprobs(model.hidden(inputs), model.lmHead, targets);
        const loss = T.neg(T.mean(logprobs));
        loss.backward();
        const trainable = new Set(handle.params.values());
        for (const [name, p] of model.params)
          if (!trainable.has(p)) assert.equal(p.grad, null, `base parameter ${name} got a gradient`);
        optimizer.step();
        optimizer.zeroGrad();
        return loss.item();
      }),
    );
  return losses;
}

/** Random B matrices, so the adapters change the output without training. */
function randomizeB(handle: LoraHandle, seed: number): void {
  const generator = new T.Generator(seed);
  for (const adapter of handle.adapters.values())
    T.tidy(() => T.copyInto(T.randn(adapter.loraB.shape, { std: 0.2, generator }), adapter.loraB));
}

function freshModel(config: DecoderConfig = TIED): DecoderModel {
  return DecoderModel.init(config, { seed: 3, std: 0.1 });
}

for (const backend of ['ref', 'cpu'] as const) {
  test(`a fresh LoRA leaves the logits unchanged; training moves only the adapters (${backend})`, () => {
    T.useBackend(backend, { threads: 2 });
    const model = freshModel();
    const before = logitsOf(model);
    const baseWeights = snapshot(model.params);
    const handle = attachLora(model, { rank: 4, alpha: 8 }, { seed: 1 });
    assert.deepEqual(logitsOf(model), before, 'B = 0: bit-identical logits');
    assert.equal(handle.adapters.size, 2 * 7);
    assert.equal(handle.params.size, 2 * 2 * 7);
    for (const p of model.params.values()) assert.equal(p.requiresGrad, false);
    for (const p of handle.params.values()) assert.equal(p.requiresGrad, true);

    const losses = trainSteps(model, handle, 5);
    assert.ok(losses[4]! < losses[0]!, `loss ${losses[0]} → ${losses[4]}`);
    for (const [name, values] of snapshot(model.params))
      assert.deepEqual(values, baseWeights.get(name), `base weight ${name} changed`);
    const after = logitsOf(model);
    assert.ok(relativeError(after, before) > 1e-4, 'the adapters changed the logits');
    handle.detach();
  });

  test(`merge and mergedParams agree with the adapter forward; unmerge restores the weights (${backend})`, async () => {
    T.useBackend(backend, { threads: 2 });
    const model = freshModel();
    const handle = attachLora(model, { rank: 4, alpha: 16 }, { seed: 2 });
    randomizeB(handle, 9);
    handle.train(false);
    const adapted = logitsOf(model);
    const baseWeights = snapshot(model.params);

    const merged = handle.mergedParams();
    assert.notEqual(merged, model.params);
    for (const [name, values] of snapshot(model.params))
      assert.deepEqual(values, baseWeights.get(name), `mergedParams touched ${name}`);
    const qName = 'model.layers.0.self_attn.q_proj.weight';
    assert.notEqual(merged.get(qName), model.params.get(qName));
    assert.equal(merged.get('model.norm.weight'), model.params.get('model.norm.weight'));
    const standalone = new DecoderModel(model.config, merged);
    assert.ok(relativeError(logitsOf(standalone), adapted) < 1e-5, 'merged weights give the adapter logits');

    // A merged Hugging Face directory loads back to the same logits.
    const dir = await temporaryDirectory('lm-lora-merged-');
    await savePretrained(model, dir, { params: merged });
    const reloaded = await loadPretrained(dir);
    assert.ok(relativeError(logitsOf(reloaded.model), adapted) < 1e-5);
    reloaded.model.dispose();
    handle.disposeMergedParams(merged);
    assert.equal(model.params.get(qName)!.isDisposed, false);

    handle.merge();
    assert.equal(handle.merged, true);
    assert.ok(relativeError(logitsOf(model), adapted) < 1e-5, 'merged forward ≈ adapter forward');
    assert.ok(relativeError(model.params.get(qName)!.toArray() as Float32Array, baseWeights.get(qName)!) > 1e-3);
    handle.merge(); // no-op when merged
    handle.unmerge();
    assert.equal(handle.merged, false);
    for (const [name, values] of snapshot(model.params))
      assert.ok(relativeError(values, baseWeights.get(name)!) < 1e-6, `unmerge restores ${name}`);
    assert.ok(relativeError(logitsOf(model), adapted) < 1e-5);
    handle.detach();
  });
}

test('detach restores the model and frees every adapter tensor', () => {
  T.useBackend('cpu', { threads: 2 });
  const model = freshModel(UNTIED);
  const before = logitsOf(model);
  const head = model.params.get('lm_head.weight')!;
  const live = T.liveTensors().tensors;
  const handle = attachLora(model, { rank: 2, modulesToSave: ['lm_head'] }, { seed: 4 });
  randomizeB(handle, 5);
  assert.equal(attachedLora(model), handle);
  assert.throws(() => attachLora(model), /already has a LoRA attached/);
  handle.merge();
  assert.notDeepEqual(logitsOf(model), before);
  handle.detach(); // unmerges first
  assert.equal(handle.attached, false);
  assert.equal(model.adapters.size, 0);
  assert.equal(attachedLora(model), undefined);
  assert.equal(model.params.get('lm_head.weight'), head, 'the original lm_head is back');
  for (const p of model.params.values()) assert.equal(p.requiresGrad, true, 'requiresGrad restored');
  assert.ok(relativeError(logitsOf(model), before) < 1e-5);
  assert.equal(T.liveTensors().tensors, live, 'no tensors left behind');
  assert.throws(() => handle.merge(), /detached/);
});

test('modules_to_save trains a copy of lm_head (untied) while the original stays as it was', () => {
  T.useBackend('cpu', { threads: 2 });
  const model = freshModel(UNTIED);
  const original = model.params.get('lm_head.weight')!;
  const originalValues = original.toArray();
  const handle = attachLora(model, { rank: 2, modulesToSave: ['lm_head'] }, { seed: 6 });
  const copy = handle.params.get('base_model.model.lm_head.weight')!;
  assert.ok(copy);
  assert.equal(model.params.get('lm_head.weight'), copy);
  assert.equal(model.lmHead, copy);
  assert.equal(copy.requiresGrad, true);
  assert.equal(original.requiresGrad, false);
  trainSteps(model, handle, 3);
  assert.notDeepEqual(copy.toArray(), originalValues, 'the copy trained');
  assert.deepEqual(original.toArray(), originalValues, 'the original did not');
  const merged = handle.mergedParams();
  assert.equal(merged.get('lm_head.weight'), copy);
  handle.disposeMergedParams(merged);
  handle.detach();
});

test('target patterns: last name component, full name, dotted suffix, regular expression', () => {
  T.useBackend('cpu', { threads: 2 });
  const model = freshModel();
  const targetsOf = (targetModules: string[]): string[] => {
    const handle = attachLora(model, { rank: 2, targetModules });
    const targets = [...handle.adapters.keys()];
    handle.detach();
    return targets;
  };
  assert.deepEqual(targetsOf(['q_proj']), ['model.layers.0.self_attn.q_proj', 'model.layers.1.self_attn.q_proj']);
  assert.deepEqual(targetsOf(['model.layers.1.mlp.down_proj']), ['model.layers.1.mlp.down_proj']);
  assert.deepEqual(targetsOf(['mlp.up_proj', 'o_proj']), [
    'model.layers.0.self_attn.o_proj',
    'model.layers.0.mlp.up_proj',
    'model.layers.1.self_attn.o_proj',
    'model.layers.1.mlp.up_proj',
  ]);
  assert.deepEqual(targetsOf(['model\\.layers\\.[01]\\.self_attn\\.(q|v)_proj']), [
    'model.layers.0.self_attn.q_proj',
    'model.layers.0.self_attn.v_proj',
    'model.layers.1.self_attn.q_proj',
    'model.layers.1.self_attn.v_proj',
  ]);
  assert.deepEqual(targetsOf(['.*1\\.mlp\\..*']), [
    'model.layers.1.mlp.gate_proj',
    'model.layers.1.mlp.up_proj',
    'model.layers.1.mlp.down_proj',
  ]);
  // A regular expression must match the whole name, not a part of it.
  assert.equal(moduleMatches('q_pro', 'model.layers.0.self_attn.q_proj'), false);
  assert.equal(moduleMatches('layers\\.0', 'model.layers.0.self_attn.q_proj'), false);
  assert.equal(moduleMatches('proj', 'model.layers.0.self_attn.q_proj'), false);
  assert.deepEqual(loraConfig().targetModules, [
    'q_proj',
    'k_proj',
    'v_proj',
    'o_proj',
    'gate_proj',
    'up_proj',
    'down_proj',
  ]);
});

test('pattern errors name the pattern and what is available', () => {
  T.useBackend('cpu', { threads: 2 });
  const model = freshModel();
  assert.throws(
    () => attachLora(model, { targetModules: ['q_proj', 'qkv_proj'] }),
    (error: Error) =>
      /target_modules: 'qkv_proj' matches no module/.test(error.message) &&
      /available: q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj/.test(error.message),
  );
  assert.throws(
    () => attachLora(model, { targetModules: ['q_proj('] }),
    /target_modules: 'q_proj\(' is not a valid regular expression/,
  );
  // lm_head is not adapter-capable, and with tied embeddings it is not a module at all.
  assert.throws(() => attachLora(model, { targetModules: ['lm_head'] }), /'lm_head' matches no module/);
  assert.throws(
    () => attachLora(model, { modulesToSave: ['lm_head'] }),
    (error: Error) =>
      /modules_to_save: 'lm_head' matches no module/.test(error.message) && /embed_tokens/.test(error.message),
  );
  assert.throws(
    () => attachLora(model, { targetModules: ['q_proj'], modulesToSave: ['model.layers.0.self_attn.q_proj'] }),
    /selected by both target_modules and modules_to_save/,
  );
  assert.throws(() => attachLora(model, { rank: 0 }), /rank must be a positive integer/);
  assert.throws(() => attachLora(model, { dropout: 1.5 }), /dropout must be in \[0, 1\]/);
  assert.throws(
    () => matchModules(['['], ['a.b'], 'modules_to_save'),
    /modules_to_save: '\[' is not a valid regular expression/,
  );
  assert.equal(model.adapters.size, 0, 'failed attaches leave no adapters behind');
  assert.equal(attachedLora(model), undefined);
});

test('dropout: only in training mode, seeded and reproducible; eval mode equals no dropout', () => {
  T.useBackend('cpu', { threads: 2 });
  const model = freshModel();
  const run = (p: number, seed: number, training: boolean): Float32Array[] => {
    const handle = attachLora(model, { rank: 4, dropout: p }, { seed, training });
    randomizeB(handle, 11);
    const outputs = [trainingLogitsOf(model), trainingLogitsOf(model)];
    handle.detach();
    return outputs;
  };
  const [train1, train2] = run(0.5, 7, true);
  const [again1, again2] = run(0.5, 7, true);
  const [eval1, eval2] = run(0.5, 7, false);
  const [plain] = run(0, 7, true);
  assert.deepEqual(again1, train1, 'same seed, same masks');
  assert.deepEqual(again2, train2);
  assert.notDeepEqual(train1, train2, 'a new mask on each forward');
  assert.notDeepEqual(train1, eval1, 'training mode drops');
  assert.deepEqual(eval1, eval2);
  assert.deepEqual(eval1, plain, 'eval mode is dropout-free');

  // train() toggles on a live handle.
  const handle = attachLora(model, { rank: 4, dropout: 0.5 }, { seed: 7, training: false });
  randomizeB(handle, 11);
  assert.deepEqual(logitsOf(model), plain);
  handle.train(true);
  assert.equal(handle.training, true);
  assert.notDeepEqual(trainingLogitsOf(model), plain);
  // Masks cannot be replayed by activation recompute, and no-grad forwards belong in eval mode.
  assert.throws(() => logitsOf(model), /dropout in training mode needs autograd on/);
  assert.throws(
    () => T.tidy(() => model.hidden(T.tensor(IDS.slice(), [2, 12]), { recompute: true })),
    /cannot be combined with activation recompute/,
  );
  handle.train(false);
  assert.deepEqual(logitsOf(model), plain);
  handle.detach();
});

function recomputeMatchesStored(modulesToSave: string[]): void {
  T.useBackend('cpu', { threads: 2 });
  const model = freshModel();
  const gradients = (recompute: boolean): Map<string, Float32Array> => {
    const handle = attachLora(model, { rank: 4, modulesToSave }, { seed: 12 });
    randomizeB(handle, 13);
    T.tidy(() => {
      const inputs = T.tensor(IDS.slice(), [2, 12]);
      const { logprobs } = T.tokenLogprobs(model.hidden(inputs, { recompute }), model.lmHead, inputs);
      T.neg(T.mean(logprobs)).backward();
    });
    const grads = new Map([...handle.params].map(([name, p]) => [name, p.grad!.toArray() as Float32Array]));
    handle.detach();
    return grads;
  };
  const stored = gradients(false);
  const recomputed = gradients(true);
  for (const [name, grad] of stored) assert.ok(relativeError(recomputed.get(name)!, grad) < 1e-6, name);
}

test('activation recompute gives the same LoRA gradients as stored activations (trainable embedding)', () => {
  recomputeMatchesStored(['embed_tokens']);
});

// With the embedding frozen no layer-0 input requires grad; checkpoint then runs that block normally so
// the adapters inside it still get gradients.
test('activation recompute gives the same LoRA gradients as stored activations (frozen embedding)', () => {
  recomputeMatchesStored([]);
});

test('the dropout op: zeros with probability p, scales survivors by 1/(1−p), passes gradients through the mask', () => {
  T.useBackend('cpu', { threads: 2 });
  T.tidy(() => {
    const x = T.ones([4000]);
    x.requiresGrad = true;
    const y = dropout(x, 0.25, new T.Generator(1));
    const values = y.toArray() as Float32Array;
    const kept = values.filter((v) => v !== 0);
    assert.ok(kept.every((v) => Math.abs(v - 1 / 0.75) < 1e-6));
    assert.ok(Math.abs(kept.length / values.length - 0.75) < 0.03, `kept ${kept.length / values.length}`);
    T.sum(y).backward();
    assert.deepEqual(x.grad!.toArray(), values);
    assert.equal(dropout(x, 0, new T.Generator(1)), x);
    assert.ok((dropout(x, 1, new T.Generator(1)).toArray() as Float32Array).every((v) => v === 0));
  });
});
