// Reads GGUF files (v2 and v3): the metadata as typed values, the tensor infos, and the data of F32, F16
// and BF16 tensors (other ggml types, e.g. quantized blocks, are listed but their data is not decoded).
// Validates offsets, alignment and bounds, naming the file in every error.
import { readFile } from 'node:fs/promises';
import { endianness } from 'node:os';
import {
  GGML_TYPES,
  GGUF_DEFAULT_ALIGNMENT,
  GGUF_MAGIC,
  GGUF_VALUE_TYPES,
  type GgmlTypeName,
  type GgufScalar,
  type GgufScalarType,
} from './writer.js';

/** A metadata value as read: 64-bit integers come back as bigint, arrays as JavaScript arrays. */
export type GgufReadValue =
  | { type: Exclude<GgufScalarType, 'uint64' | 'int64' | 'bool' | 'string'>; value: number }
  | { type: 'uint64' | 'int64'; value: bigint }
  | { type: 'bool'; value: boolean }
  | { type: 'string'; value: string }
  | { type: 'array'; itemType: GgufScalarType | 'array'; value: (GgufScalar | GgufReadValue)[] };

export interface GgufTensorInfo {
  name: string;
  /** Dimensions as the file stores them: innermost (contiguous) first, ggml's `ne`. */
  dims: number[];
  /** Row-major shape, outermost first (dims reversed). */
  shape: number[];
  /** ggml_type code. */
  typeCode: number;
  /** Type name for the types we decode; null for others. */
  type: GgmlTypeName | null;
  /** Byte offset relative to the start of the data section. */
  offset: number;
  /** The elements (F32: Float32Array; F16/BF16: Uint16Array bit patterns), or null for other types. */
  data: Float32Array | Uint16Array | null;
}

export interface GgufContents {
  version: number;
  metadata: Map<string, GgufReadValue>;
  tensors: Map<string, GgufTensorInfo>;
  alignment: number;
  /** Byte offset of the data section in the file. */
  dataOffset: number;
}

export class GgufReadError extends Error {
  constructor(source: string, message: string) {
    super(`${source}: ${message}`);
    this.name = 'GgufReadError';
  }
}

const TYPE_NAMES = new Map<number, GgufScalarType | 'array'>(
  Object.entries(GGUF_VALUE_TYPES).map(([name, code]) => [code, name as GgufScalarType | 'array']),
);
const GGML_NAMES = new Map<number, GgmlTypeName>(
  Object.entries(GGML_TYPES).map(([name, code]) => [code, name as GgmlTypeName]),
);
const decoder = new TextDecoder('utf-8', { fatal: true });

class Cursor {
  private readonly view: DataView;
  position = 0;

  constructor(
    private readonly bytes: Uint8Array,
    private readonly source: string,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  private need(n: number, what: string): void {
    if (this.position + n > this.bytes.length)
      throw new GgufReadError(this.source, `truncated while reading ${what} at byte ${this.position}`);
  }
  u8(what = 'u8'): number {
    this.need(1, what);
    return this.view.getUint8(this.position++);
  }
  i8(what = 'i8'): number {
    this.need(1, what);
    return this.view.getInt8(this.position++);
  }
  u16(what = 'u16'): number {
    this.need(2, what);
    const v = this.view.getUint16(this.position, true);
    this.position += 2;
    return v;
  }
  i16(what = 'i16'): number {
    this.need(2, what);
    const v = this.view.getInt16(this.position, true);
    this.position += 2;
    return v;
  }
  u32(what = 'u32'): number {
    this.need(4, what);
    const v = this.view.getUint32(this.position, true);
    this.position += 4;
    return v;
  }
  i32(what = 'i32'): number {
    this.need(4, what);
    const v = this.view.getInt32(this.position, true);
    this.position += 4;
    return v;
  }
  f32(what = 'f32'): number {
    this.need(4, what);
    const v = this.view.getFloat32(this.position, true);
    this.position += 4;
    return v;
  }
  f64(what = 'f64'): number {
    this.need(8, what);
    const v = this.view.getFloat64(this.position, true);
    this.position += 8;
    return v;
  }
  u64(what = 'u64'): bigint {
    this.need(8, what);
    const v = this.view.getBigUint64(this.position, true);
    this.position += 8;
    return v;
  }
  i64(what = 'i64'): bigint {
    this.need(8, what);
    const v = this.view.getBigInt64(this.position, true);
    this.position += 8;
    return v;
  }
  /** A u64 that must fit a JavaScript number. */
  size(what: string): number {
    const v = this.u64(what);
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new GgufReadError(this.source, `${what} ${v} is too large`);
    return Number(v);
  }
  string(what: string): string {
    const n = this.size(`${what} length`);
    this.need(n, what);
    try {
      const s = decoder.decode(this.bytes.subarray(this.position, this.position + n));
      this.position += n;
      return s;
    } catch {
      throw new GgufReadError(this.source, `${what} at byte ${this.position} is not valid UTF-8`);
    }
  }
}

function readScalar(c: Cursor, type: GgufScalarType, what: string): GgufScalar {
  switch (type) {
    case 'uint8':
      return c.u8(what);
    case 'int8':
      return c.i8(what);
    case 'uint16':
      return c.u16(what);
    case 'int16':
      return c.i16(what);
    case 'uint32':
      return c.u32(what);
    case 'int32':
      return c.i32(what);
    case 'float32':
      return c.f32(what);
    case 'float64':
      return c.f64(what);
    case 'uint64':
      return c.u64(what);
    case 'int64':
      return c.i64(what);
    case 'bool': {
      const b = c.u8(what);
      return b !== 0;
    }
    case 'string':
      return c.string(what);
  }
}

function readValue(c: Cursor, source: string, code: number, what: string): GgufReadValue {
  const type = TYPE_NAMES.get(code);
  if (type === undefined) throw new GgufReadError(source, `${what}: unknown value type ${code}`);
  if (type !== 'array') return { type, value: readScalar(c, type, what) } as GgufReadValue;
  const itemCode = c.u32(`${what} item type`);
  const itemType = TYPE_NAMES.get(itemCode);
  if (itemType === undefined) throw new GgufReadError(source, `${what}: unknown array item type ${itemCode}`);
  const n = c.size(`${what} length`);
  const value: (GgufScalar | GgufReadValue)[] = [];
  for (let i = 0; i < n; i++) {
    if (itemType === 'array') value.push(readValue(c, source, GGUF_VALUE_TYPES.array, `${what}[${i}]`));
    else value.push(readScalar(c, itemType, `${what}[${i}]`));
  }
  return { type: 'array', itemType, value };
}

/** Parses GGUF bytes; `source` names the file in errors. Tensor data is copied out of `bytes`. */
export function parseGguf(bytes: Uint8Array, source = '<buffer>'): GgufContents {
  if (endianness() !== 'LE') throw new GgufReadError(source, 'reading GGUF files needs a little-endian machine');
  const c = new Cursor(bytes, source);
  const magic = c.u32('magic');
  if (magic !== GGUF_MAGIC) throw new GgufReadError(source, 'not a GGUF file (bad magic)');
  const version = c.u32('version');
  if (version !== 2 && version !== 3) throw new GgufReadError(source, `unsupported GGUF version ${version}`);
  const tensorCount = c.size('tensor count');
  const kvCount = c.size('metadata count');

  const metadata = new Map<string, GgufReadValue>();
  for (let i = 0; i < kvCount; i++) {
    const key = c.string(`metadata key ${i}`);
    if (metadata.has(key)) throw new GgufReadError(source, `metadata key '${key}' appears twice`);
    metadata.set(key, readValue(c, source, c.u32(`type of '${key}'`), `metadata '${key}'`));
  }
  const alignmentValue = metadata.get('general.alignment');
  let alignment = GGUF_DEFAULT_ALIGNMENT;
  if (alignmentValue !== undefined) {
    if (
      alignmentValue.type !== 'uint32' ||
      alignmentValue.value < 1 ||
      alignmentValue.value & (alignmentValue.value - 1)
    )
      throw new GgufReadError(source, 'general.alignment must be a power-of-two uint32');
    alignment = alignmentValue.value;
  }

  const infos: Omit<GgufTensorInfo, 'data'>[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < tensorCount; i++) {
    const name = c.string(`tensor name ${i}`);
    if (seen.has(name)) throw new GgufReadError(source, `tensor '${name}' appears twice`);
    seen.add(name);
    const nDims = c.u32(`dimension count of '${name}'`);
    if (nDims < 1 || nDims > 4) throw new GgufReadError(source, `tensor '${name}' has ${nDims} dimensions`);
    const dims: number[] = [];
    for (let d = 0; d < nDims; d++) dims.push(c.size(`dimension ${d} of '${name}'`));
    const typeCode = c.u32(`type of '${name}'`);
    const offset = c.size(`offset of '${name}'`);
    if (offset % alignment !== 0)
      throw new GgufReadError(source, `tensor '${name}' offset ${offset} is not a multiple of ${alignment}`);
    infos.push({ name, dims, shape: [...dims].reverse(), typeCode, type: GGML_NAMES.get(typeCode) ?? null, offset });
  }
  const dataOffset = c.position + ((alignment - (c.position % alignment)) % alignment);
  if (dataOffset > bytes.length && infos.length > 0)
    throw new GgufReadError(source, 'truncated before the tensor data');

  const tensors = new Map<string, GgufTensorInfo>();
  const extents: [number, number, string][] = [];
  for (const info of infos) {
    let data: Float32Array | Uint16Array | null = null;
    if (info.type !== null) {
      const elements = info.dims.reduce((a, b) => a * b, 1);
      const size = elements * (info.type === 'F32' ? 4 : 2);
      const start = dataOffset + info.offset;
      if (start + size > bytes.length)
        throw new GgufReadError(source, `tensor '${info.name}' data (${size} bytes at ${start}) runs past the end`);
      const copy = bytes.slice(start, start + size);
      data = info.type === 'F32' ? new Float32Array(copy.buffer) : new Uint16Array(copy.buffer);
      extents.push([info.offset, info.offset + size, info.name]);
    }
    tensors.set(info.name, { ...info, data });
  }
  extents.sort((a, b) => a[0] - b[0]);
  for (let i = 1; i < extents.length; i++)
    if (extents[i]![0] < extents[i - 1]![1])
      throw new GgufReadError(source, `tensors '${extents[i - 1]![2]}' and '${extents[i]![2]}' overlap`);
  return { version, metadata, tensors, alignment, dataOffset };
}

/** Reads a whole GGUF file (see parseGguf). */
export async function readGguf(path: string): Promise<GgufContents> {
  return parseGguf(new Uint8Array(await readFile(path)), path);
}

/** The plain value of a metadata entry (arrays of scalars as arrays), or undefined when absent. */
export function ggufValue(
  contents: GgufContents,
  key: string,
): GgufScalar | (GgufScalar | GgufReadValue)[] | undefined {
  return contents.metadata.get(key)?.value;
}

/** IEEE half-precision bit patterns → f32 values. */
export function f16ToF32(bits: Uint16Array): Float32Array {
  const out = new Float32Array(bits.length);
  for (let i = 0; i < bits.length; i++) {
    const h = bits[i]!;
    const sign = h & 0x8000 ? -1 : 1;
    const exponent = (h >> 10) & 0x1f;
    const mantissa = h & 0x3ff;
    out[i] =
      exponent === 0
        ? sign * mantissa * 2 ** -24
        : exponent === 31
          ? mantissa
            ? NaN
            : sign * Infinity
          : sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
  }
  return out;
}

/** A tensor's values as f32 (F32 as stored, F16/BF16 widened); throws for other types. */
export function ggufTensorF32(info: GgufTensorInfo): Float32Array {
  if (info.data === null) throw new Error(`tensor '${info.name}': ggml type ${info.typeCode} is not decoded`);
  if (info.type === 'F32') return info.data as Float32Array;
  if (info.type === 'F16') return f16ToF32(info.data as Uint16Array);
  const bits = info.data as Uint16Array;
  const words = new Uint32Array(bits.length);
  for (let i = 0; i < bits.length; i++) words[i] = bits[i]! << 16;
  return new Float32Array(words.buffer);
}
