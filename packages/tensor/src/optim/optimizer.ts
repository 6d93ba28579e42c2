// The optimizer base: named parameters, zeroGrad, and a serialisable state for checkpoints.
import type { Tensor } from '../tensor.js';

export type NamedParameters = ReadonlyMap<string, Tensor> | Readonly<Record<string, Tensor>>;

/** Everything needed to resume an optimizer: plain numbers and Float32Arrays keyed by name. */
export interface OptimizerState {
  type: string;
  step: number;
  hyper: Record<string, number | boolean>;
  /** `<param name>.<slot>` → values (e.g. "layers.0.q.exp_avg"). */
  tensors: Record<string, Float32Array>;
}

export function toEntries(params: NamedParameters): [string, Tensor][] {
  const entries = params instanceof Map ? [...params.entries()] : Object.entries(params);
  for (const [name, p] of entries) {
    if (p.dtype !== 'f32')
      throw new TypeError(`optimizer: parameter '${name}' is ${p.dtype}; trainable parameters must be f32`);
    if (!p.isContiguous || p.offset !== 0 || p.storage.data.length !== p.size)
      throw new TypeError(`optimizer: parameter '${name}' must own a contiguous buffer (not a view)`);
  }
  return entries.filter(([, p]) => p.requiresGrad);
}

export abstract class Optimizer {
  readonly params: [string, Tensor][];
  /** Learning rate of the next step (a scheduler sets it). */
  lr: number;
  /** Number of steps taken. */
  stepCount = 0;
  protected readonly slots = new Map<string, Float32Array>();

  constructor(
    params: NamedParameters,
    lr: number,
    readonly type: string,
  ) {
    if (!(lr >= 0)) throw new RangeError(`${type}: lr must be ≥ 0, got ${lr}`);
    this.params = toEntries(params);
    this.lr = lr;
  }

  /** One update of every parameter that has a gradient. */
  abstract step(): void;

  protected abstract hyper(): Record<string, number | boolean>;

  /** Zero-initialised per-parameter state, created on first use. */
  protected slot(name: string, kind: string, size: number): Float32Array {
    const key = `${name}.${kind}`;
    let s = this.slots.get(key);
    if (!s) this.slots.set(key, (s = new Float32Array(size)));
    return s;
  }

  /** Drops all gradients (their buffers go back to the pool). */
  zeroGrad(): void {
    for (const [, p] of this.params) {
      p.grad?.dispose();
      p.grad = null;
    }
  }

  stateDict(): OptimizerState {
    const tensors: Record<string, Float32Array> = {};
    for (const [k, v] of this.slots) tensors[k] = v.slice();
    return { type: this.type, step: this.stepCount, hyper: this.hyper(), tensors };
  }

  loadStateDict(state: OptimizerState): void {
    if (state.type !== this.type)
      throw new Error(`loadStateDict: state is for a '${state.type}' optimizer, this is '${this.type}'`);
    const sizes = new Map(this.params.map(([n, p]) => [n, p.size]));
    for (const [key, values] of Object.entries(state.tensors)) {
      const dot = key.lastIndexOf('.');
      const name = key.slice(0, dot);
      const size = sizes.get(name);
      if (size === undefined) throw new Error(`loadStateDict: state entry '${key}' names no trainable parameter`);
      if (values.length !== size)
        throw new Error(
          `loadStateDict: state entry '${key}' has ${values.length} values, parameter '${name}' has ${size}`,
        );
    }
    this.slots.clear();
    for (const [key, values] of Object.entries(state.tensors)) this.slots.set(key, Float32Array.from(values));
    this.stepCount = state.step;
  }
}
