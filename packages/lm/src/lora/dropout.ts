// Inverted dropout (PyTorch's nn.Dropout in training mode): each element is zeroed with probability p
// and the survivors are scaled by 1 / (1 − p), so the expected value is unchanged. The tensor library
// has no dropout op; a mask from a seeded generator and an autograd-recorded multiply give one.
import * as T from '@prime-rl/tensor';
import type { Tensor } from '@prime-rl/tensor';

/** x with dropout probability p applied, drawing the mask from `generator` (p = 0 returns x itself). */
export function dropout(x: Tensor, p: number, generator: T.Generator): Tensor {
  if (!(p >= 0 && p <= 1)) throw new RangeError(`dropout: probability must be in [0, 1], got ${p}`);
  if (p === 0) return x;
  const mask = new Float32Array(x.size);
  // p = 1 zeroes everything (no 1 / 0 scale).
  const keptValue = p < 1 ? 1 / (1 - p) : 0;
  for (let i = 0; i < mask.length; i++) mask[i] = generator.uniform() < p ? 0 : keptValue;
  return T.mul(x, T.tensor(mask, x.shape));
}
