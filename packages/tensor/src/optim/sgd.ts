// SGD with momentum / Nesterov and coupled L2 weight decay (PyTorch semantics; spec rl.md §8.1).
import { kernels } from '../backend/select.js';
import { Optimizer, type NamedParameters } from './optimizer.js';

export interface SGDOptions {
  lr: number;
  momentum?: number;
  nesterov?: boolean;
  weightDecay?: number;
}

export class SGD extends Optimizer {
  readonly momentum: number;
  readonly nesterov: boolean;
  readonly weightDecay: number;

  constructor(params: NamedParameters, options: SGDOptions) {
    super(params, options.lr, 'sgd');
    this.momentum = options.momentum ?? 0.9;
    this.nesterov = options.nesterov ?? true;
    this.weightDecay = options.weightDecay ?? 0.01;
    if (this.nesterov && this.momentum <= 0) throw new RangeError('sgd: nesterov needs momentum > 0');
  }

  step(): void {
    this.stepCount++;
    for (const [name, p] of this.params) {
      if (!p.grad) continue;
      const first = !this.slots.has(`${name}.momentum_buffer`);
      const buf = this.slot(name, 'momentum_buffer', p.size);
      kernels().sgd(p.f32(), p.grad.f32(), buf, p.size, this.lr, this.momentum, this.weightDecay, this.nesterov, first);
    }
  }

  protected hyper(): Record<string, number | boolean> {
    return { momentum: this.momentum, nesterov: this.nesterov, weightDecay: this.weightDecay };
  }
}
