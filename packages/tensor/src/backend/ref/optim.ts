// Optimizer steps in float64 arithmetic over the f32 state, following the Kernels contract
// (PyTorch semantics). The moments are stored (rounded to f32) before the parameter update reads
// them, as PyTorch's in-place updates do.
import type { F32, Kernels } from '../kernels.js';

export const optimKernels: Pick<Kernels, 'adamw' | 'sgd'> = {
  adamw(
    p: F32,
    g: F32,
    m: F32,
    v: F32,
    n: number,
    lr: number,
    beta1: number,
    beta2: number,
    eps: number,
    weightDecay: number,
    bc1: number,
    bc2: number,
  ): void {
    for (let i = 0; i < n; i++) {
      const grad = g[i]!;
      m[i] = beta1 * m[i]! + (1 - beta1) * grad;
      v[i] = beta2 * v[i]! + (1 - beta2) * grad * grad;
      const mHat = m[i]! / bc1;
      const vHat = v[i]! / bc2;
      p[i] = p[i]! * (1 - lr * weightDecay) - (lr * mHat) / (Math.sqrt(vHat) + eps);
    }
  },

  sgd(
    p: F32,
    g: F32,
    buf: F32,
    n: number,
    lr: number,
    momentum: number,
    weightDecay: number,
    nesterov: boolean,
    first: boolean,
  ): void {
    for (let i = 0; i < n; i++) {
      // As PyTorch: no wd·p term at all when wd = 0; the buffer is untouched when momentum = 0.
      const grad = weightDecay !== 0 ? g[i]! + weightDecay * p[i]! : g[i]!;
      let step = grad;
      if (momentum !== 0) {
        buf[i] = first ? grad : momentum * buf[i]! + grad;
        step = nesterov ? grad + momentum * buf[i]! : buf[i]!;
      }
      p[i] = p[i]! - lr * step;
    }
  },
};
