// Muon (spec rl.md §8.1): momentum, then Newton–Schulz orthogonalisation of the update for 2-D
// weights; AdamW for everything else (norms, embeddings, LM head, 1-D tensors).
import { kernels } from '../backend/select.js';
import { adamwUpdate } from './adamw.js';
import { Optimizer, type NamedParameters } from './optimizer.js';
import type { Tensor } from '../tensor.js';

export interface MuonOptions {
  lr: number;
  /** Momentum of the Muon part (default 0.95). */
  mu?: number;
  nesterov?: boolean;
  /** Betas of the AdamW part (default [0.9, 0.95]). */
  betas?: [number, number];
  eps?: number;
  weightDecay?: number;
}

/** The quintic Newton–Schulz coefficients, one triple per iteration. */
export const NEWTON_SCHULZ_COEFFICIENTS: readonly (readonly [number, number, number])[] = [
  [4.0848, -6.8946, 2.927],
  [3.9505, -6.3029, 2.6377],
  [3.7418, -5.5913, 2.3037],
  [2.8769, -3.1427, 1.2046],
  [2.8366, -3.0525, 1.2012],
];

/** Whether a parameter is optimised by Muon (2-D or more, not the embedding or LM head). */
export function usesMuon(name: string, p: Tensor): boolean {
  return p.rank >= 2 && !name.includes('lm_head') && !name.includes('embed_tokens');
}

/** bf16 rounding of every value (the update is orthogonalised from bf16 values, as the reference does). */
function roundToBf16(x: Float32Array): void {
  const bits = new Uint16Array(x.length);
  kernels().f32ToBf16(x, bits, x.length);
  kernels().bf16ToF32(bits, x, x.length);
}

/**
 * Approximately orthogonalises the rows×cols matrix u (in place semantics: returns a new array):
 * X = u / (‖u‖_F + 1e-7), transposed so rows ≤ cols; then per (a, b, c): A = X·Xᵀ,
 * B = b·A + c·A·A, X = a·X + B·X.
 */
export function newtonSchulz(u: Float32Array, rows: number, cols: number): Float32Array {
  const k = kernels();
  const transposed = rows > cols;
  const r = transposed ? cols : rows;
  const c = transposed ? rows : cols;
  let x = new Float32Array(r * c);
  if (transposed) for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) x[j * rows + i] = u[i * cols + j]!;
  else x.set(u);
  const norm = Math.sqrt(k.sumSquares(x, x.length));
  k.affine(x, x, x.length, 1 / (norm + 1e-7), 0);
  const a = new Float32Array(r * r);
  const b = new Float32Array(r * r);
  let next = new Float32Array(r * c);
  for (const [ca, cb, cc] of NEWTON_SCHULZ_COEFFICIENTS) {
    // A = X·Xᵀ
    k.gemm(1, false, true, r, r, c, 1, x, 0, c, 0, x, 0, c, 0, 0, a, 0, r, 0);
    // B = b·A + c·A·A
    b.set(a);
    k.gemm(1, false, false, r, r, r, cc, a, 0, r, 0, a, 0, r, 0, cb, b, 0, r, 0);
    // X' = a·X + B·X
    next.set(x);
    k.gemm(1, false, false, r, c, r, 1, b, 0, r, 0, x, 0, c, 0, ca, next, 0, c, 0);
    [x, next] = [next, x];
  }
  if (!transposed) return x;
  const out = new Float32Array(rows * cols);
  for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) out[i * cols + j] = x[j * rows + i]!;
  return out;
}

export class Muon extends Optimizer {
  readonly mu: number;
  readonly nesterov: boolean;
  readonly betas: [number, number];
  readonly eps: number;
  readonly weightDecay: number;

  constructor(params: NamedParameters, options: MuonOptions) {
    super(params, options.lr, 'muon');
    this.mu = options.mu ?? 0.95;
    this.nesterov = options.nesterov ?? false;
    this.betas = options.betas ?? [0.9, 0.95];
    this.eps = options.eps ?? 1e-8;
    this.weightDecay = options.weightDecay ?? 0.01;
  }

  step(): void {
    this.stepCount++;
    const k = kernels();
    for (const [name, p] of this.params) {
      if (!p.grad) continue;
      if (!usesMuon(name, p)) {
        const m = this.slot(name, 'exp_avg', p.size);
        const v = this.slot(name, 'exp_avg_sq', p.size);
        adamwUpdate(p, m, v, this.stepCount, this.lr, this.betas, this.eps, this.weightDecay);
        continue;
      }
      const g = p.grad.f32();
      const momentum = this.slot(name, 'momentum_buffer', p.size);
      // M ← μ·M + G; U = M, or G + μ·M with Nesterov.
      k.affine(momentum, momentum, p.size, this.mu, 0);
      k.axpy(1, g, momentum, p.size);
      const update = momentum.slice();
      if (this.nesterov) {
        k.affine(update, update, p.size, this.mu, 0);
        k.axpy(1, g, update, p.size);
      }
      const cols = p.shape[p.rank - 1]!;
      const rows = p.shape[p.rank - 2]!;
      const matrices = p.size / (rows * cols);
      const w = p.f32();
      const lrAdjusted = this.lr * 0.2 * Math.sqrt(Math.max(rows, cols));
      // Decoupled decay with the base lr, then the orthogonalised step.
      k.affine(w, w, p.size, 1 - this.lr * this.weightDecay, 0);
      roundToBf16(update);
      for (let i = 0; i < matrices; i++) {
        const o = newtonSchulz(update.subarray(i * rows * cols, (i + 1) * rows * cols), rows, cols);
        k.axpy(-lrAdjusted, o, w.subarray(i * rows * cols, (i + 1) * rows * cols), rows * cols);
      }
    }
  }

  protected hyper(): Record<string, number | boolean> {
    return {
      mu: this.mu,
      nesterov: this.nesterov,
      beta1: this.betas[0],
      beta2: this.betas[1],
      eps: this.eps,
      weightDecay: this.weightDecay,
    };
  }
}
