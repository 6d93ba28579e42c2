// A small generic writer of GGUF v3 files (the llama.cpp / ggml model format): the magic "GGUF", version 3,
// the tensor and metadata counts, typed key/value metadata, tensor infos (name, dimensions innermost first,
// ggml type, offset into the data section), zero padding to the alignment, then each tensor's bytes at its
// aligned offset. Everything is little-endian. Files are written to a temporary name and renamed, so a
// reader never sees a half-written file.
import { endianness } from 'node:os';
import { writeAtomically } from '../formats/atomic-file.js';

export const GGUF_MAGIC = 0x46554747; // "GGUF" read as a little-endian u32
export const GGUF_VERSION = 3;
export const GGUF_DEFAULT_ALIGNMENT = 32;

/** Metadata value types, with the codes of the format (gguf_type). */
export const GGUF_VALUE_TYPES = {
  uint8: 0,
  int8: 1,
  uint16: 2,
  int16: 3,
  uint32: 4,
  int32: 5,
  float32: 6,
  bool: 7,
  string: 8,
  array: 9,
  uint64: 10,
  int64: 11,
  float64: 12,
} as const;

export type GgufScalarType = Exclude<keyof typeof GGUF_VALUE_TYPES, 'array'>;
export type GgufScalar = number | bigint | boolean | string;

/** One typed metadata value; arrays hold scalars of one type (arrays of arrays are not written). */
export type GgufValue =
  | { type: 'uint8' | 'int8' | 'uint16' | 'int16' | 'uint32' | 'int32' | 'float32' | 'float64'; value: number }
  | { type: 'uint64' | 'int64'; value: number | bigint }
  | { type: 'bool'; value: boolean }
  | { type: 'string'; value: string }
  | { type: 'array'; itemType: GgufScalarType; value: readonly GgufScalar[] };

/** Shorthands for typed metadata values. */
export const gguf = {
  u8: (value: number): GgufValue => ({ type: 'uint8', value }),
  i32: (value: number): GgufValue => ({ type: 'int32', value }),
  u32: (value: number): GgufValue => ({ type: 'uint32', value }),
  u64: (value: number | bigint): GgufValue => ({ type: 'uint64', value }),
  f32: (value: number): GgufValue => ({ type: 'float32', value }),
  f64: (value: number): GgufValue => ({ type: 'float64', value }),
  bool: (value: boolean): GgufValue => ({ type: 'bool', value }),
  str: (value: string): GgufValue => ({ type: 'string', value }),
  array: (itemType: GgufScalarType, value: readonly GgufScalar[]): GgufValue => ({ type: 'array', itemType, value }),
};

/** Tensor element types we write and read, with their ggml_type codes. */
export const GGML_TYPES = { F32: 0, F16: 1, BF16: 30 } as const;
export type GgmlTypeName = keyof typeof GGML_TYPES;
const ELEMENT_BYTES: Record<GgmlTypeName, number> = { F32: 4, F16: 2, BF16: 2 };

export interface GgufTensorSource {
  name: string;
  /** Row-major shape, outermost first (as PyTorch and safetensors write it); the file stores it reversed. */
  shape: readonly number[];
  type: GgmlTypeName;
  /** The elements in row-major order: Float32Array for F32, Uint16Array bit patterns for F16/BF16. Called once, while writing. */
  data: () => Float32Array | Uint16Array;
}

export interface GgufFile {
  /** Metadata in file order. `general.alignment` is written when alignment is not 32. */
  metadata: ReadonlyMap<string, GgufValue> | readonly (readonly [string, GgufValue])[];
  tensors: readonly GgufTensorSource[];
  alignment?: number;
}

export class GgufWriteError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GgufWriteError';
  }
}

const encoder = new TextEncoder();

/** Growable little-endian byte buffer for the header. */
class ByteSink {
  private buffer = new Uint8Array(1 << 16);
  private view = new DataView(this.buffer.buffer);
  length = 0;

  private reserve(n: number): void {
    if (this.length + n <= this.buffer.length) return;
    let size = this.buffer.length * 2;
    while (size < this.length + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buffer.subarray(0, this.length));
    this.buffer = next;
    this.view = new DataView(next.buffer);
  }
  u8(v: number): void {
    this.reserve(1);
    this.view.setUint8(this.length, v);
    this.length += 1;
  }
  i8(v: number): void {
    this.reserve(1);
    this.view.setInt8(this.length, v);
    this.length += 1;
  }
  u16(v: number): void {
    this.reserve(2);
    this.view.setUint16(this.length, v, true);
    this.length += 2;
  }
  i16(v: number): void {
    this.reserve(2);
    this.view.setInt16(this.length, v, true);
    this.length += 2;
  }
  u32(v: number): void {
    this.reserve(4);
    this.view.setUint32(this.length, v, true);
    this.length += 4;
  }
  i32(v: number): void {
    this.reserve(4);
    this.view.setInt32(this.length, v, true);
    this.length += 4;
  }
  f32(v: number): void {
    this.reserve(4);
    this.view.setFloat32(this.length, v, true);
    this.length += 4;
  }
  f64(v: number): void {
    this.reserve(8);
    this.view.setFloat64(this.length, v, true);
    this.length += 8;
  }
  u64(v: bigint): void {
    this.reserve(8);
    this.view.setBigUint64(this.length, v, true);
    this.length += 8;
  }
  i64(v: bigint): void {
    this.reserve(8);
    this.view.setBigInt64(this.length, v, true);
    this.length += 8;
  }
  bytes(b: Uint8Array): void {
    this.reserve(b.length);
    this.buffer.set(b, this.length);
    this.length += b.length;
  }
  string(s: string): void {
    const b = encoder.encode(s);
    this.u64(BigInt(b.length));
    this.bytes(b);
  }
  pad(alignment: number): void {
    const n = padding(this.length, alignment);
    this.reserve(n);
    this.buffer.fill(0, this.length, this.length + n);
    this.length += n;
  }
  result(): Uint8Array {
    return this.buffer.subarray(0, this.length);
  }
}

function padding(offset: number, alignment: number): number {
  return (alignment - (offset % alignment)) % alignment;
}

function checkInteger(key: string, type: string, v: number, min: number, max: number): void {
  if (!Number.isInteger(v) || v < min || v > max)
    throw new GgufWriteError(`metadata '${key}': ${v} is not a valid ${type}`);
}

function toBigInt(key: string, type: 'uint64' | 'int64', v: number | bigint): bigint {
  if (typeof v === 'number' && !Number.isSafeInteger(v))
    throw new GgufWriteError(`metadata '${key}': ${v} is not a valid ${type}`);
  const b = BigInt(v);
  const [min, max] = type === 'uint64' ? [0n, (1n << 64n) - 1n] : [-(1n << 63n), (1n << 63n) - 1n];
  if (b < min || b > max) throw new GgufWriteError(`metadata '${key}': ${v} is not a valid ${type}`);
  return b;
}

function writeScalar(sink: ByteSink, key: string, type: GgufScalarType, v: GgufScalar): void {
  const wrong = (): never => {
    throw new GgufWriteError(`metadata '${key}': ${JSON.stringify(String(v))} is not a ${type}`);
  };
  switch (type) {
    case 'string':
      if (typeof v !== 'string') wrong();
      return sink.string(v as string);
    case 'bool':
      if (typeof v !== 'boolean') wrong();
      return sink.u8(v ? 1 : 0);
    case 'uint64':
    case 'int64': {
      if (typeof v !== 'number' && typeof v !== 'bigint') wrong();
      const b = toBigInt(key, type, v as number | bigint);
      return type === 'uint64' ? sink.u64(b) : sink.i64(b);
    }
    default: {
      if (typeof v !== 'number') wrong();
      const n = v as number;
      switch (type) {
        case 'uint8':
          checkInteger(key, type, n, 0, 0xff);
          return sink.u8(n);
        case 'int8':
          checkInteger(key, type, n, -0x80, 0x7f);
          return sink.i8(n);
        case 'uint16':
          checkInteger(key, type, n, 0, 0xffff);
          return sink.u16(n);
        case 'int16':
          checkInteger(key, type, n, -0x8000, 0x7fff);
          return sink.i16(n);
        case 'uint32':
          checkInteger(key, type, n, 0, 0xffffffff);
          return sink.u32(n);
        case 'int32':
          checkInteger(key, type, n, -0x80000000, 0x7fffffff);
          return sink.i32(n);
        case 'float32':
          return sink.f32(n);
        case 'float64':
          return sink.f64(n);
      }
    }
  }
}

function writeValue(sink: ByteSink, key: string, value: GgufValue): void {
  sink.u32(GGUF_VALUE_TYPES[value.type]);
  if (value.type === 'array') {
    if (!(value.itemType in GGUF_VALUE_TYPES) || (value.itemType as string) === 'array')
      throw new GgufWriteError(`metadata '${key}': unsupported array item type '${String(value.itemType)}'`);
    sink.u32(GGUF_VALUE_TYPES[value.itemType]);
    sink.u64(BigInt(value.value.length));
    for (const item of value.value) writeScalar(sink, key, value.itemType, item);
  } else {
    if (!(value.type in GGUF_VALUE_TYPES))
      throw new GgufWriteError(`metadata '${key}': unknown value type '${String(value.type)}'`);
    writeScalar(sink, key, value.type, value.value);
  }
}

interface PlannedTensor {
  source: GgufTensorSource;
  offset: number;
  bytes: number;
}

/** The header bytes (through the padding before the data section) and where each tensor's data goes. */
export function encodeGgufHeader(file: GgufFile): { header: Uint8Array; tensors: PlannedTensor[]; alignment: number } {
  const alignment = file.alignment ?? GGUF_DEFAULT_ALIGNMENT;
  if (!Number.isInteger(alignment) || alignment < 1 || (alignment & (alignment - 1)) !== 0)
    throw new GgufWriteError(`alignment must be a power of two, got ${alignment}`);
  const metadata = new Map<string, GgufValue>();
  for (const [key, value] of file.metadata instanceof Map ? file.metadata : new Map(file.metadata)) {
    if (key === 'general.alignment') continue;
    metadata.set(key, value);
  }
  if (alignment !== GGUF_DEFAULT_ALIGNMENT) metadata.set('general.alignment', gguf.u32(alignment));

  const names = new Set<string>();
  const tensors: PlannedTensor[] = [];
  let offset = 0;
  for (const source of file.tensors) {
    if (names.has(source.name)) throw new GgufWriteError(`tensor '${source.name}' appears twice`);
    names.add(source.name);
    if (encoder.encode(source.name).length > 63)
      throw new GgufWriteError(`tensor name '${source.name}' is longer than ggml's 63 bytes`);
    if (!(source.type in GGML_TYPES)) throw new GgufWriteError(`tensor '${source.name}': unknown type ${source.type}`);
    if (source.shape.length < 1 || source.shape.length > 4)
      throw new GgufWriteError(
        `tensor '${source.name}': ggml tensors have 1 to 4 dimensions, got ${source.shape.length}`,
      );
    let elements = 1;
    for (const d of source.shape) {
      if (!Number.isInteger(d) || d < 1)
        throw new GgufWriteError(`tensor '${source.name}': bad shape [${source.shape.join(', ')}]`);
      elements *= d;
    }
    const bytes = elements * ELEMENT_BYTES[source.type];
    tensors.push({ source, offset, bytes });
    offset += bytes + padding(bytes, alignment);
  }

  const sink = new ByteSink();
  sink.u32(GGUF_MAGIC);
  sink.u32(GGUF_VERSION);
  sink.u64(BigInt(tensors.length));
  sink.u64(BigInt(metadata.size));
  for (const [key, value] of metadata) {
    sink.string(key);
    writeValue(sink, key, value);
  }
  for (const { source, offset: at } of tensors) {
    sink.string(source.name);
    sink.u32(source.shape.length);
    for (let i = source.shape.length - 1; i >= 0; i--) sink.u64(BigInt(source.shape[i]!));
    sink.u32(GGML_TYPES[source.type]);
    sink.u64(BigInt(at));
  }
  sink.pad(alignment);
  return { header: sink.result(), tensors, alignment };
}

function tensorBytes(t: PlannedTensor): Uint8Array {
  const data = t.source.data();
  const expected = t.source.type === 'F32' ? Float32Array : Uint16Array;
  if (!(data instanceof expected))
    throw new GgufWriteError(`tensor '${t.source.name}': ${t.source.type} data must be a ${expected.name}`);
  const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  if (bytes.length !== t.bytes)
    throw new GgufWriteError(
      `tensor '${t.source.name}': ${data.length} elements for shape [${t.source.shape.join(', ')}]`,
    );
  return bytes;
}

/**
 * Writes a GGUF v3 file: to `.<name>.<pid>.<random>.tmp` beside `path`, then renamed over it. Tensor data is
 * requested and written one tensor at a time.
 */
export async function writeGguf(path: string, file: GgufFile): Promise<void> {
  if (endianness() !== 'LE') throw new GgufWriteError('writing GGUF files needs a little-endian machine');
  const { header, tensors, alignment } = encodeGgufHeader(file);
  await writeAtomically(path, async (handle) => {
    await handle.write(header);
    const zeros = new Uint8Array(alignment);
    for (const t of tensors) {
      const bytes = tensorBytes(t);
      await handle.write(bytes);
      const pad = padding(bytes.length, alignment);
      if (pad > 0) await handle.write(zeros, 0, pad);
    }
  });
}

/** f32 values → IEEE half-precision bit patterns, rounding to nearest even (as numpy's astype(float16)). */
export function f32ToF16(values: Float32Array): Uint16Array {
  const bits = new Uint32Array(values.buffer, values.byteOffset, values.length);
  const out = new Uint16Array(values.length);
  for (let i = 0; i < bits.length; i++) out[i] = f32BitsToF16(bits[i]!);
  return out;
}

function f32BitsToF16(x: number): number {
  const sign = (x >>> 16) & 0x8000;
  const exponent = (x >>> 23) & 0xff;
  let mantissa = x & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa ? 0x200 | (mantissa >>> 13) : 0);
  const e = exponent - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mantissa |= 0x800000;
    const shift = 14 - e;
    let half = mantissa >>> shift;
    const rest = mantissa & ((1 << shift) - 1);
    const halfway = 1 << (shift - 1);
    if (rest > halfway || (rest === halfway && half & 1)) half++;
    return sign | half;
  }
  let half = sign | (e << 10) | (mantissa >>> 13);
  const rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && half & 1)) half++;
  return half;
}
