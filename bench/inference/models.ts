// The two models of the inference suite, each as our DecoderModel, a Hugging Face directory (for the
// PyTorch anchor) and an f32 GGUF file made by our exporter (for llama.cpp): the shipped tiny model, and
// the 26M anchor configuration (random init, written into a temporary directory removed at exit).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as T from '@prime-rl/tensor';
import { DecoderModel, Tokenizer, exportGguf, loadPretrained, qwen3Config, savePretrained } from '@prime-rl/lm';

export const SFT_DIR = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../examples/reverse-text/models/sft',
);

export interface BenchModel {
  label: string;
  description: string;
  model: DecoderModel;
  /** Hugging Face directory: config.json, model.safetensors, tokenizer files. */
  dir: string;
  /** The same weights as f32 GGUF. */
  gguf: string;
}

/** The 26M configuration of anchors/torch_cpu_anchor.py's medium model (Qwen3, q/k-norm, tied). */
export const ANCHOR_26M = qwen3Config({
  vocabSize: 2048,
  hiddenSize: 512,
  numLayers: 8,
  numHeads: 8,
  numKvHeads: 4,
  headDim: 64,
  intermediateSize: 1536,
  rmsNormEps: 1e-6,
  ropeTheta: 1e6,
  tieWordEmbeddings: true,
  maxPositionEmbeddings: 2048,
});

export const MODEL_LABELS = ['sft-tiny', 'qwen3-26m'] as const;
export type ModelLabel = (typeof MODEL_LABELS)[number];

let scratch: string | undefined;
function scratchDir(): string {
  if (!scratch) {
    scratch = mkdtempSync(path.join(tmpdir(), 'prime-rl-bench-inference-'));
    const dir = scratch;
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  return scratch;
}

const cache = new Map<ModelLabel, Promise<BenchModel>>();

async function prepare(label: ModelLabel, progress: (m: string) => void): Promise<BenchModel> {
  T.useBackend('cpu');
  const tokenizer = await Tokenizer.fromDir(SFT_DIR);
  const gguf = path.join(scratchDir(), `${label}.gguf`);
  if (label === 'sft-tiny') {
    const { model } = await loadPretrained(SFT_DIR);
    await exportGguf(model, tokenizer, gguf);
    return {
      label,
      description: 'examples/reverse-text/models/sft (Qwen3, 4 layers, d 128, vocab 272, 0.8M params)',
      model,
      dir: SFT_DIR,
      gguf,
    };
  }
  progress('making the 26M anchor model (random init) and its safetensors and GGUF files');
  const model = DecoderModel.init(ANCHOR_26M, { seed: 0 });
  const dir = path.join(scratchDir(), label);
  await savePretrained(model, dir);
  await tokenizer.save(dir);
  await exportGguf(model, tokenizer, gguf);
  return {
    label,
    description: 'the 26M anchor configuration (Qwen3, vocab 2048, d 512, 8 layers, 8/4 heads, ffn 1536, tied)',
    model,
    dir,
    gguf,
  };
}

export function benchModel(label: ModelLabel, progress: (m: string) => void): Promise<BenchModel> {
  let p = cache.get(label);
  if (!p) {
    p = prepare(label, progress);
    cache.set(label, p);
  }
  return p;
}
