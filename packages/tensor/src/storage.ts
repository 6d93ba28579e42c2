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

/**
 * Free buffers by dtype and length. The pool holds at most `limitBytes`; past that it drops the
 * buffers of the least recently used lengths first, so a workload whose shapes keep changing (an
 * inference server: every step has another token count) recycles what repeats and lets the rest go
 * to the garbage collector instead of filling the pool with lengths that never come back.
 */
class BufferPool {
  /** Per length, its free buffers; Map order is least recently used first. */
  private readonly free = new Map<string, { bytes: number; buffers: AnyData[] }>();
  private pooledBytes = 0;
  /** Most bytes held in free buffers. */
  limitBytes = 2 * 1024 ** 3;
  stats = { allocated: 0, reused: 0, allocatedBytes: 0, evictedBytes: 0 };

  take(dtype: DType, n: number): AnyData {
    const k = key(dtype, n);
    const entry = this.free.get(k);
    const buffer = entry?.buffers.pop();
    if (entry && buffer) {
      this.pooledBytes -= entry.bytes;
      this.touch(k, entry);
      this.stats.reused++;
      return buffer;
    }
    this.stats.allocated++;
    this.stats.allocatedBytes += n * bytesPerElement(dtype);
    return allocate(dtype, n);
  }

  give(dtype: DType, data: AnyData): void {
    const bytes = data.length * bytesPerElement(dtype);
    if (data.length === 0 || bytes > this.limitBytes) return;
    const k = key(dtype, data.length);
    const entry = this.free.get(k) ?? { bytes, buffers: [] };
    entry.buffers.push(data);
    this.touch(k, entry);
    this.pooledBytes += bytes;
    this.evict();
  }

  /** Sets the limit (bytes) and evicts down to it. */
  setLimit(bytes: number): void {
    if (!(bytes >= 0)) throw new RangeError(`pool limit must be a non-negative number of bytes, got ${bytes}`);
    this.limitBytes = bytes;
    this.evict();
  }

  /** Drops every pooled buffer. */
  clear(): void {
    this.free.clear();
    this.pooledBytes = 0;
  }

  get bytesPooled(): number {
    return this.pooledBytes;
  }

  private touch(k: string, entry: { bytes: number; buffers: AnyData[] }): void {
    this.free.delete(k);
    if (entry.buffers.length > 0) this.free.set(k, entry);
  }

  private evict(): void {
    for (const [k, entry] of this.free) {
      if (this.pooledBytes <= this.limitBytes) return;
      while (entry.buffers.length > 0 && this.pooledBytes > this.limitBytes) {
        entry.buffers.pop();
        this.pooledBytes -= entry.bytes;
        this.stats.evictedBytes += entry.bytes;
      }
      if (entry.buffers.length === 0) this.free.delete(k);
    }
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
