// AdamW with decoupled weight decay (PyTorch semantics; spec rl.md §8.1).
import { kernels } from '../backend/select.js';
import type { Tensor } from '../tensor.js';
import { Optimizer, type NamedParameters } from './optimizer.js';

export interface AdamWOptions {
  lr: number;
  betas?: [number, number];
  eps?: number;
  weightDecay?: number;
}

/** One AdamW update of one parameter (shared with Muon's AdamW part). */
export function adamwUpdate(
  p: Tensor,
  m: Float32Array,
  v: Float32Array,
  step: number,
  lr: number,
  [beta1, beta2]: [number, number],
  eps: number,
  weightDecay: number,
): void {
  const bc1 = 1 - beta1 ** step;
  const bc2 = 1 - beta2 ** step;
  kernels().adamw(p.f32(), p.grad!.f32(), m, v, p.size, lr, beta1, beta2, eps, weightDecay, bc1, bc2);
}

export class AdamW extends Optimizer {
  readonly betas: [number, number];
  readonly eps: number;
  readonly weightDecay: number;

  constructor(params: NamedParameters, options: AdamWOptions) {
    super(params, options.lr, 'adamw');
    this.betas = options.betas ?? [0.9, 0.999];
    this.eps = options.eps ?? 1e-8;
    this.weightDecay = options.weightDecay ?? 0.01;
  }

  step(): void {
    this.stepCount++;
    for (const [name, p] of this.params) {
      if (!p.grad) continue;
      const m = this.slot(name, 'exp_avg', p.size);
      const v = this.slot(name, 'exp_avg_sq', p.size);
      adamwUpdate(p, m, v, this.stepCount, this.lr, this.betas, this.eps, this.weightDecay);
    }
  }

  protected hyper(): Record<string, number> {
    return { beta1: this.betas[0], beta2: this.betas[1], eps: this.eps, weightDecay: this.weightDecay };
  }
}
