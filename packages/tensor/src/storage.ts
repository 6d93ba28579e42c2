// Host memory for tensors, owned explicitly. A Storage is reference-counted by the tensors (views)
// that use it; when the count drops to zero its buffer goes back to a pool keyed by dtype and
// length, so a training loop that repeats the same shapes reuses the same buffers and resident
// memory stays flat instead of waiting for the garbage collector.
import { allocate, bytesPerElement, type AnyData, type DType } from './dtype.js';

export class Storage {
  refs = 0;
  constructor(
    readonly dtype: DType,
    public data: AnyData,
  ) {}

  retain(): void {
    this.refs++;
  }

  release(): void {
    if (--this.refs === 0) {
      pool.give(this.dtype, this.data);
      this.data = EMPTY[this.dtype];
    }
  }
}

const EMPTY: Record<DType, AnyData> = {
  f32: new Float32Array(0),
  bf16: new Uint16Array(0),
  i32: new Int32Array(0),
};

class BufferPool {
  private readonly free = new Map<string, AnyData[]>();
  private pooledBytes = 0;
  /** Buffers beyond this many bytes are dropped (left to the garbage collector) instead of pooled. */
  limitBytes = 2 * 1024 ** 3;
  stats = { allocated: 0, reused: 0, allocatedBytes: 0 };

  take(dtype: DType, n: number): AnyData {
    const list = this.free.get(key(dtype, n));
    const buffer = list?.pop();
    if (buffer) {
      this.pooledBytes -= n * bytesPerElement(dtype);
      this.stats.reused++;
      return buffer;
    }
    this.stats.allocated++;
    this.stats.allocatedBytes += n * bytesPerElement(dtype);
    return allocate(dtype, n);
  }

  give(dtype: DType, data: AnyData): void {
    const bytes = data.length * bytesPerElement(dtype);
    if (data.length === 0 || this.pooledBytes + bytes > this.limitBytes) return;
    const k = key(dtype, data.length);
    let list = this.free.get(k);
    if (!list) this.free.set(k, (list = []));
    list.push(data);
    this.pooledBytes += bytes;
  }

  /** Drops every pooled buffer. */
  clear(): void {
    this.free.clear();
    this.pooledBytes = 0;
  }

  get bytesPooled(): number {
    return this.pooledBytes;
  }
}

function key(dtype: DType, n: number): string {
  return `${dtype}:${n}`;
}

export const pool = new BufferPool();

/** A fresh storage of n elements; contents are arbitrary (a reused buffer), not zero. */
export function newStorage(dtype: DType, n: number): Storage {
  return new Storage(dtype, pool.take(dtype, n));
}

/** A storage that wraps caller-provided data (never returned to the pool). */
export function wrapStorage(dtype: DType, data: AnyData): Storage {
  const s = new Storage(dtype, data);
  s.retain(); // the caller's reference: the pool never recycles memory it does not own
  return s;
}
