// The Tensor: a typed view (shape, strides, offset) over reference-counted host storage, plus the
// autograd links (requiresGrad, grad, the node that produced it).
import { type AnyData, type DType } from './dtype.js';
import { contiguousStrides, formatShape, isContiguous, numel, checkShape, type Shape } from './shape.js';
import { newStorage, Storage, wrapStorage } from './storage.js';
import { track } from './scope.js';
import type { Node } from './autograd/node.js';
import { kernels } from './backend/select.js';

let nextId = 1;
let live = 0;
let liveElements = 0;

export class Tensor {
  readonly isTensor = true;
  readonly id = nextId++;
  readonly size: number;
  requiresGrad = false;
  /** Accumulated gradient (leaf tensors that require grad). */
  grad: Tensor | null = null;
  /** The autograd node that produced this tensor, and which of its outputs it is. */
  node: Node | null = null;
  outputIndex = 0;
  /** Set when an op recorded this tensor as an output (so it is not a leaf, even after its graph is freed). */
  fromOp = false;
  /** Kept tensors are never disposed by a scope. */
  kept = false;
  name: string | undefined;
  private disposed = false;

  constructor(
    readonly storage: Storage,
    readonly shape: Shape,
    readonly strides: readonly number[],
    readonly offset: number,
  ) {
    this.size = numel(shape);
    storage.retain();
    live++;
    liveElements += this.size;
    track(this);
  }

  get dtype(): DType {
    return this.storage.dtype;
  }
  get rank(): number {
    return this.shape.length;
  }
  get isDisposed(): boolean {
    return this.disposed;
  }
  get isContiguous(): boolean {
    return isContiguous(this.shape, this.strides);
  }

  /** The raw storage buffer (shared by views; index with offset/strides). */
  get data(): AnyData {
    this.assertAlive('data');
    return this.storage.data;
  }

  /** Storage as Float32Array; throws if the dtype is not f32. */
  f32(where = 'f32'): Float32Array {
    this.assertAlive(where);
    if (this.dtype !== 'f32') throw new TypeError(`${where}: expected an f32 tensor, got ${this.dtype}`);
    return this.storage.data as Float32Array;
  }

  i32(where = 'i32'): Int32Array {
    this.assertAlive(where);
    if (this.dtype !== 'i32') throw new TypeError(`${where}: expected an i32 tensor, got ${this.dtype}`);
    return this.storage.data as Int32Array;
  }

  assertAlive(where: string): void {
    if (this.disposed) throw new Error(`${where}: tensor ${this.describe()} was disposed`);
  }

  describe(): string {
    return `${this.name ? this.name + ' ' : ''}#${this.id} ${this.dtype}${formatShape(this.shape)}`;
  }

  /** Releases this tensor's hold on its storage (and its gradient). Idempotent. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    live--;
    liveElements -= this.size;
    this.storage.release();
    this.node = null;
    if (this.grad) {
      this.grad.dispose();
      this.grad = null;
    }
  }

  /** The values in row-major order, as a fresh array of the tensor's dtype. */
  toArray(): AnyData {
    this.assertAlive('toArray');
    if (this.isContiguous) return this.storage.data.slice(this.offset, this.offset + this.size);
    if (this.dtype !== 'f32') return gatherGeneric(this);
    const out = new Float32Array(this.size);
    kernels().stridedCopy(this.storage.data as Float32Array, this.offset, this.shape, this.strides, out);
    return out;
  }

  /** The single value of a one-element tensor. */
  item(): number {
    if (this.size !== 1) throw new RangeError(`item: tensor ${this.describe()} has ${this.size} elements, not 1`);
    this.assertAlive('item');
    return this.storage.data[this.offset]!;
  }

  toString(): string {
    return `Tensor(${this.describe()})`;
  }
}

function gatherGeneric(t: Tensor): AnyData {
  const src = t.storage.data;
  const out = src.slice(0, 0) as AnyData;
  const result = new (out.constructor as new (n: number) => AnyData)(t.size);
  const index = new Array<number>(t.rank).fill(0);
  for (let i = 0; i < t.size; i++) {
    let at = t.offset;
    for (let d = 0; d < t.rank; d++) at += index[d]! * t.strides[d]!;
    result[i] = src[at]!;
    for (let d = t.rank - 1; d >= 0; d--) {
      if (++index[d]! < t.shape[d]!) break;
      index[d] = 0;
    }
  }
  return result;
}

/** Live (undisposed) tensor count and their total elements: for leak tests and memory reports. */
export function liveTensors(): { tensors: number; elements: number } {
  return { tensors: live, elements: liveElements };
}

// ---- factories -------------------------------------------------------------------------------------

/** A new contiguous tensor with arbitrary contents (a reused buffer). */
export function empty(shape: Shape, dtype: DType = 'f32'): Tensor {
  checkShape(shape, 'empty');
  return new Tensor(newStorage(dtype, numel(shape)), [...shape], contiguousStrides(shape), 0);
}

export function full(shape: Shape, value: number, dtype: DType = 'f32'): Tensor {
  const t = empty(shape, dtype);
  if (dtype === 'f32') kernels().fill(t.storage.data as Float32Array, t.size, value);
  else t.storage.data.fill(value);
  return t;
}

export function zeros(shape: Shape, dtype: DType = 'f32'): Tensor {
  return full(shape, 0, dtype);
}

export function ones(shape: Shape, dtype: DType = 'f32'): Tensor {
  return full(shape, 1, dtype);
}

/**
 * A tensor over the given values. Typed arrays of the right dtype are wrapped without copying
 * (the caller must not reuse them); plain number arrays are copied.
 */
export function tensor(values: AnyData | readonly number[], shape?: Shape, dtype?: DType): Tensor {
  const inferred: DType =
    dtype ?? (values instanceof Int32Array ? 'i32' : values instanceof Uint16Array ? 'bf16' : 'f32');
  const finalShape = shape ?? [values.length];
  checkShape(finalShape, 'tensor');
  if (numel(finalShape) !== values.length)
    throw new RangeError(`tensor: ${values.length} values do not fill shape ${formatShape(finalShape)}`);
  let data: AnyData;
  if (inferred === 'f32') data = values instanceof Float32Array ? values : Float32Array.from(values);
  else if (inferred === 'i32') data = values instanceof Int32Array ? values : Int32Array.from(values);
  else if (values instanceof Uint16Array) data = values;
  else throw new TypeError('tensor: bf16 values must be given as a Uint16Array of bf16 bits');
  return new Tensor(wrapStorage(inferred, data), [...finalShape], contiguousStrides(finalShape), 0);
}

export function scalar(value: number): Tensor {
  return tensor([value], []);
}

/** A view sharing `base`'s storage. */
export function view(base: Tensor, shape: Shape, strides: readonly number[], offset: number): Tensor {
  base.assertAlive('view');
  return new Tensor(base.storage, [...shape], [...strides], offset);
}
