// Activation recompute: run a block without keeping its intermediate activations, and run it again
// (with recording) during backward. Trades one extra forward of the block for its activation memory.
import { Tensor, view } from '../tensor.js';
import { record } from './node.js';
import { enableGrad, isGradEnabled, noGrad } from './grad-mode.js';
import { backward } from './backward.js';
import { tidy } from '../scope.js';

/**
 * out = fn(...inputs), with fn's activations recomputed in backward instead of stored. fn must be
 * deterministic. Gradients reach the inputs and every tensor fn closes over (e.g. parameters).
 */
export function checkpoint(fn: (...inputs: Tensor[]) => Tensor, ...inputs: Tensor[]): Tensor {
  if (!isGradEnabled()) return fn(...inputs);
  // With no input on the gradient path, a recorded node would be dropped and the tensors fn closes over
  // (e.g. LoRA weights after a frozen embedding) would get no gradient: run fn normally instead.
  if (!inputs.some((x) => x.requiresGrad)) return fn(...inputs);
  const out = tidy(() => noGrad(() => fn(...inputs)));
  record('checkpoint', inputs, [out], ([g]) => {
    const detached = inputs.map((x) => {
      const d = view(x, x.shape, x.strides, x.offset);
      d.requiresGrad = x.requiresGrad;
      return d;
    });
    tidy(() => {
      const recomputed = enableGrad(() => fn(...detached));
      backward(recomputed, { grad: g! });
    });
    return detached.map((d) => {
      const grad = d.grad;
      d.grad = null;
      d.dispose();
      if (grad) grad.kept = false;
      return grad;
    });
  });
  return out;
}
