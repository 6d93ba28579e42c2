// The LoRA adapter of one linear layer, as PEFT computes it:
//   y = x·Wᵀ (+ b) + (dropout(x)·Aᵀ)·Bᵀ · scale,   scale = alpha / rank,
// with A [rank, in] and B [out, rank]. PEFT's default init: A kaiming-uniform (a = √5, i.e.
// uniform(±1/√in)), B zeros, so a fresh adapter leaves the layer's output unchanged.
import * as T from '@prime-rl/tensor';
import type { Tensor } from '@prime-rl/tensor';
import type { LinearAdapter } from '../model/decoder.js';
import { dropout } from './dropout.js';

/** Mutable switches the adapters of one attachment share. */
export interface LoraState {
  /** Dropout is applied only while training. */
  training: boolean;
  /** The update is folded into the base weight: the adapter passes the base output through. */
  merged: boolean;
  /** Draws the dropout masks (seeded, so runs reproduce). */
  generator: T.Generator;
}

export class LoraLinear implements LinearAdapter {
  constructor(
    /** Module name, e.g. `model.layers.0.self_attn.q_proj`. */
    readonly module: string,
    /** [rank, in] */
    readonly loraA: Tensor,
    /** [out, rank] */
    readonly loraB: Tensor,
    readonly scale: number,
    readonly dropoutProbability: number,
    private readonly state: LoraState,
  ) {
    if (loraA.rank !== 2 || loraB.rank !== 2 || loraB.shape[1] !== loraA.shape[0])
      throw new RangeError(
        `LoRA ${module}: lora_A [${loraA.shape.join(', ')}] and lora_B [${loraB.shape.join(', ')}] do not form B·A`,
      );
  }

  /**
   * Fresh adapter tensors for a weight [out, in]: A uniform(±1/√in) from `generator`, B zeros, both
   * kept (owned by the caller).
   */
  static initWeights(
    outFeatures: number,
    inFeatures: number,
    rank: number,
    generator: T.Generator,
  ): { loraA: Tensor; loraB: Tensor } {
    const bound = 1 / Math.sqrt(inFeatures);
    const loraA = T.keep(T.rand([rank, inFeatures], { lo: -bound, hi: bound, generator }));
    const loraB = T.keep(T.zeros([outFeatures, rank]));
    return { loraA, loraB };
  }

  forward(x: Tensor, base: Tensor): Tensor {
    if (this.state.merged) return base;
    const dropping = this.state.training && this.dropoutProbability > 0;
    // Activation recompute (T.checkpoint) runs the forward once without autograd and again in backward;
    // the second run would draw other masks, so the gradients would not belong to the forward.
    if (dropping && !T.isGradEnabled())
      throw new Error(
        `LoRA ${this.module}: dropout in training mode needs autograd on (it cannot be combined with ` +
          'activation recompute, and a no-grad forward should use eval mode: handle.train(false))',
      );
    const input = dropping ? dropout(x, this.dropoutProbability, this.state.generator) : x;
    const update = T.linear(T.linear(input, this.loraA), this.loraB);
    return T.add(base, T.affine(update, this.scale));
  }

  /** scale·B·A [out, in], the change this adapter makes to the weight (no autograd). */
  delta(): Tensor {
    return T.noGrad(() => T.tidy(() => T.affine(T.matmul(this.loraB, this.loraA), this.scale)));
  }
}
