// The small Qwen3 shapes the LoRA tests attach adapters to (tied and untied LM head).
import { qwen3Config } from '../../src/index.js';

export const SHAPE = {
  vocabSize: 48,
  hiddenSize: 32,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
  headDim: 8,
  intermediateSize: 40,
  rmsNormEps: 1e-6,
  ropeTheta: 1e6,
};
export const TIED = qwen3Config({ ...SHAPE, tieWordEmbeddings: true });
export const UNTIED = qwen3Config({ ...SHAPE, tieWordEmbeddings: false });
