// Log-probabilities of target tokens and entropies straight from hidden states and the LM head,
// one chunk of logits at a time; cross-entropy for supervised training.
import { Tensor, empty, zeros } from '../tensor.js';
import { formatShape } from '../shape.js';
import { record } from '../autograd/node.js';
import { kernels } from '../backend/select.js';
import { buf, contiguousOrCopy, expectF32, expectI32, ibuf } from './util.js';
import { logSoftmax, gatherLast } from './nn.js';
import { neg } from './elementwise.js';
import { mean, sum } from './reduce.js';

export interface TokenLogprobOptions {
  /** Sampling temperature τ: logits are divided by it (default 1). */
  temperature?: number;
  /** Rows of logits materialised at once (default 256). */
  chunk?: number;
}

/**
 * For hidden [..., dim], LM head weight [vocab, dim] and targets [...] (i32):
 * logprobs = log softmax(hidden·Wᵀ / τ)[target] and entropy = H(softmax(hidden·Wᵀ / τ)), both
 * shaped like targets. Differentiable with respect to hidden and weight through both outputs.
 */
export function tokenLogprobs(
  hidden: Tensor,
  weight: Tensor,
  targets: Tensor,
  options: TokenLogprobOptions = {},
): { logprobs: Tensor; entropy: Tensor } {
  expectF32(hidden, 'tokenLogprobs', 'hidden');
  expectF32(weight, 'tokenLogprobs', 'weight');
  expectI32(targets, 'tokenLogprobs', 'targets');
  const temperature = options.temperature ?? 1;
  const chunk = options.chunk ?? 256;
  if (!(temperature > 0)) throw new RangeError(`tokenLogprobs: temperature must be > 0, got ${temperature}`);
  if (!Number.isInteger(chunk) || chunk < 1)
    throw new RangeError(`tokenLogprobs: chunk must be a positive integer, got ${chunk}`);
  if (weight.rank !== 2)
    throw new RangeError(`tokenLogprobs: weight must be [vocab, dim], got ${formatShape(weight.shape)}`);
  const [vocab, dim] = weight.shape as [number, number];
  if (hidden.shape[hidden.rank - 1] !== dim)
    throw new RangeError(`tokenLogprobs: hidden ${formatShape(hidden.shape)} does not end in the weight's dim ${dim}`);
  if (hidden.shape.slice(0, -1).join() !== targets.shape.join())
    throw new RangeError(
      `tokenLogprobs: targets ${formatShape(targets.shape)} must have shape ${formatShape(hidden.shape.slice(0, -1))}`,
    );
  const rows = targets.size;
  const h = contiguousOrCopy(hidden);
  const w = contiguousOrCopy(weight);
  const t = contiguousOrCopy(targets);
  const logprobs = empty(targets.shape);
  const entropy = empty(targets.shape);
  const lse = empty([rows]);
  const invT = 1 / temperature;
  kernels().tokenLogprobs(
    buf(h),
    buf(w),
    ibuf(t),
    rows,
    dim,
    vocab,
    invT,
    chunk,
    buf(logprobs),
    buf(entropy),
    buf(lse),
  );
  record(
    'tokenLogprobs',
    [hidden, weight],
    [logprobs, entropy],
    ([gLogprobs, gEntropy]) => {
      const dLp = gLogprobs ? contiguousOrCopy(gLogprobs) : zeros([rows]);
      const dEnt = gEntropy ? contiguousOrCopy(gEntropy) : null;
      const dh = empty(hidden.shape);
      const dw = zeros(weight.shape);
      kernels().tokenLogprobsBackward(
        buf(h),
        buf(w),
        ibuf(t),
        rows,
        dim,
        vocab,
        invT,
        chunk,
        buf(lse),
        buf(entropy),
        buf(dLp),
        dEnt ? buf(dEnt) : null,
        buf(dh),
        buf(dw),
        false,
      );
      if (dLp !== gLogprobs) dLp.dispose();
      if (dEnt && dEnt !== gEntropy) dEnt.dispose();
      return [hidden.requiresGrad ? dh : (dh.dispose(), null), weight.requiresGrad ? dw : (dw.dispose(), null)];
    },
    () => {
      lse.dispose();
      if (h !== hidden) h.dispose();
      if (w !== weight) w.dispose();
      if (t !== targets) t.dispose();
    },
  );
  return { logprobs, entropy };
}

export type Reduction = 'none' | 'mean' | 'sum';

/** Cross-entropy of logits [..., vocab] against targets [...] (i32). */
export function crossEntropy(logits: Tensor, targets: Tensor, reduction: Reduction = 'mean'): Tensor {
  const lsm = logSoftmax(logits);
  const picked = gatherLast(lsm, targets);
  const losses = neg(picked);
  if (reduction === 'none') return losses;
  return reduction === 'mean' ? mean(losses) : sum(losses);
}
