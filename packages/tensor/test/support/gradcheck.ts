// Central finite differences through the public op API: checks every backward rule's wiring
// (shapes, broadcasting, transposes, accumulation) against the forward it belongs to.
import assert from 'node:assert/strict';
import { Tensor, tensor, tidy, noGrad, sum, mul } from '../../src/index.js';
import { randn } from './data.js';

/**
 * For loss(xs) = Σ w ⊙ f(xs) with a fixed random w, compares autograd gradients of every input
 * with central differences (step h) and fails naming the input and element.
 */
export function gradcheck(
  label: string,
  f: (...xs: Tensor[]) => Tensor,
  inputs: Float32Array[],
  shapes: number[][],
  { h = 1e-2, rtol = 2e-2, atol = 2e-3, seed = 99 }: { h?: number; rtol?: number; atol?: number; seed?: number } = {},
): void {
  const outShape = noGrad(() =>
    tidy(() => {
      const out = f(...inputs.map((x, i) => tensor(x.slice(), shapes[i])));
      return [...out.shape];
    }),
  );
  const w = randn(
    outShape.reduce((a, b) => a * b, 1),
    seed,
  );
  const lossOf = (values: Float32Array[]): number =>
    noGrad(() =>
      tidy(() => {
        const out = f(...values.map((x, i) => tensor(x.slice(), shapes[i])));
        let total = 0;
        const o = out.toArray();
        for (let i = 0; i < o.length; i++) total += w[i]! * o[i]!;
        return total;
      }),
    );
  const analytic = tidy(() => {
    const xs = inputs.map((x, i) => {
      const t = tensor(x.slice(), shapes[i]);
      t.requiresGrad = true;
      return t;
    });
    const out = f(...xs);
    const loss = sum(mul(out, tensor(w.slice(), out.shape)));
    loss.backward();
    return xs.map((x) => (x.grad ? (x.grad.toArray() as Float32Array) : new Float32Array(x.size)));
  });
  inputs.forEach((x, i) => {
    for (let j = 0; j < x.length; j++) {
      const plus = inputs.map((v) => v.slice());
      const minus = inputs.map((v) => v.slice());
      plus[i]![j]! += h;
      minus[i]![j]! -= h;
      const numeric = (lossOf(plus) - lossOf(minus)) / (2 * h);
      const got = analytic[i]![j]!;
      if (!(Math.abs(got - numeric) <= atol + rtol * Math.abs(numeric)))
        assert.fail(`${label}: d/d input${i}[${j}] autograd ${got}, finite difference ${numeric}`);
    }
  });
}
