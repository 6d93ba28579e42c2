// Training throughput (forward + backward + AdamW, tokens/s) of the anchor's two Qwen3-style
// decoders, ours against PyTorch on the CPU, same thread count, same step count.
import * as T from '@prime-rl/tensor';
import { DecoderModel, qwen3Config } from '@prime-rl/lm';
import type { Benchmark, BenchContext, BenchResult } from '../types.js';
import { torchAnchor } from './torch-anchor.js';

interface TrainShape {
  label: string;
  vocab: number;
  dim: number;
  layers: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  ffn: number;
  batch: number;
  seq: number;
}

// The two configurations of anchors/torch_cpu_anchor.py.
const SHAPES: TrainShape[] = [
  { label: 'small', vocab: 512, dim: 256, layers: 4, heads: 4, kvHeads: 2, headDim: 64, ffn: 768, batch: 16, seq: 128 },
  {
    label: 'medium',
    vocab: 2048,
    dim: 512,
    layers: 8,
    heads: 8,
    kvHeads: 4,
    headDim: 64,
    ffn: 1536,
    batch: 8,
    seq: 256,
  },
];
const TIMED_STEPS = 5;

export function ourTrainThroughput(s: TrainShape, threads: number, steps = TIMED_STEPS): number {
  T.useBackend('cpu', { threads });
  const config = qwen3Config({
    vocabSize: s.vocab,
    hiddenSize: s.dim,
    numLayers: s.layers,
    numHeads: s.heads,
    numKvHeads: s.kvHeads,
    headDim: s.headDim,
    intermediateSize: s.ffn,
    rmsNormEps: 1e-6,
    ropeTheta: 1e6,
    tieWordEmbeddings: true,
  });
  const model = DecoderModel.init(config, { seed: 0 });
  const optimizer = new T.AdamW(model.params, { lr: 1e-3 });
  const ids = T.keep(T.randint([s.batch, s.seq + 1], s.vocab, new T.Generator(1)));
  const inputs = T.keep(T.contiguous(T.narrow(ids, 1, 0, s.seq)));
  const targets = T.keep(T.contiguous(T.narrow(ids, 1, 1, s.seq)));
  const step = (): void =>
    T.tidy(() => {
      const hidden = model.hidden(inputs);
      const { logprobs } = T.tokenLogprobs(hidden, model.lmHead, targets);
      const loss = T.neg(T.mean(logprobs));
      loss.backward();
      optimizer.step();
      optimizer.zeroGrad();
    });
  step();
  const start = performance.now();
  for (let i = 0; i < steps; i++) step();
  const seconds = (performance.now() - start) / 1000;
  for (const p of model.params.values()) p.dispose();
  [ids, inputs, targets].forEach((t) => t.dispose());
  return (s.batch * s.seq * steps) / seconds;
}

function trainBenchmark(s: TrainShape): Benchmark {
  return {
    name: `train ${s.label} (V=${s.vocab} d=${s.dim} L=${s.layers}, B=${s.batch} T=${s.seq}) fwd+bwd+AdamW`,
    unit: 'tokens/s',
    async run(ctx: BenchContext): Promise<BenchResult> {
      const anchor = torchAnchor(ctx.threads, ctx.progress);
      ctx.progress(`training ${s.label} with our cpu backend`);
      const ours = ourTrainThroughput(s, ctx.threads);
      if ('missing' in anchor) return { ours, anchor: 'PyTorch CPU', anchorValue: null, note: anchor.missing };
      const value = anchor.trainTokensPerSecond.get(`V=${s.vocab} d=${s.dim} L=${s.layers}`);
      return {
        ours,
        anchor: `PyTorch ${anchor.version} CPU`,
        anchorValue: value ?? null,
        ...(value === undefined ? { note: 'the anchor printed no figure for this model' } : {}),
      };
    },
  };
}

export const benchmarks: Benchmark[] = SHAPES.map(trainBenchmark);
