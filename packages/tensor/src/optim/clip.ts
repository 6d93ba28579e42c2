// Global-norm gradient clipping (spec rl.md §7.6).
import { kernels } from '../backend/select.js';
import type { Tensor } from '../tensor.js';

/** The L2 norm over all gradients: sqrt(Σ‖g‖²), accumulated in float64. */
export function gradNorm(params: Iterable<Tensor>): number {
  let total = 0;
  for (const p of params) if (p.grad) total += kernels().sumSquares(p.grad.f32(), p.grad.size);
  return Math.sqrt(total);
}

/**
 * Scales all gradients by maxNorm / (norm + 1e-6) when the global norm exceeds maxNorm. Returns
 * the norm before clipping (the value to log).
 */
export function clipGradNorm(params: Iterable<Tensor>, maxNorm: number): number {
  const list = [...params];
  const norm = gradNorm(list);
  if (norm > maxNorm) {
    const scale = maxNorm / (norm + 1e-6);
    for (const p of list) if (p.grad) kernels().affine(p.grad.f32(), p.grad.f32(), p.grad.size, scale, 0);
  }
  return norm;
}
