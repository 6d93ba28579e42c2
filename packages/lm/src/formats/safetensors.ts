// The Hugging Face safetensors format: an 8-byte little-endian header length N, N bytes of JSON
// (`{"name": {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {string: string}}`,
// offsets relative to the end of the header), then the tensor bytes, little-endian, row-major.
// Reading validates the file as strictly as the reference implementation (huggingface/safetensors),
// so a file we accept is one it accepts; writing produces the bytes it would produce.
import { open } from 'node:fs/promises';
import { writeAll, writeAtomically } from './atomic-file.js';

/** Element types of the format. BF16, F16 and the FP8 types keep their raw bits (no float conversion). */
export type SafetensorsDtype =
  | 'BOOL'
  | 'U8'
  | 'I8'
  | 'F8_E5M2'
  | 'F8_E4M3'
  | 'F8_E8M0'
  | 'I16'
  | 'U16'
  | 'F16'
  | 'BF16'
  | 'I32'
  | 'U32'
  | 'F32'
  | 'F64'
  | 'I64'
  | 'U64';

/** The typed array that holds the elements of each dtype. */
export interface StoredDataByDtype {
  BOOL: Uint8Array;
  U8: Uint8Array;
  I8: Int8Array;
  F8_E5M2: Uint8Array;
  F8_E4M3: Uint8Array;
  F8_E8M0: Uint8Array;
  I16: Int16Array;
  U16: Uint16Array;
  F16: Uint16Array;
  BF16: Uint16Array;
  I32: Int32Array;
  U32: Uint32Array;
  F32: Float32Array;
  F64: Float64Array;
  I64: BigInt64Array;
  U64: BigUint64Array;
}

export type StoredTensorData = StoredDataByDtype[SafetensorsDtype];

/**
 * One tensor of a safetensors file. A union over dtypes, so that checking `dtype` narrows `data`
 * (`if (t.dtype === 'F32') t.data` is a Float32Array). `data.length` is the product of `shape`.
 */
export type StoredTensor = {
  [D in SafetensorsDtype]: { dtype: D; shape: number[]; data: StoredDataByDtype[D] };
}[SafetensorsDtype];

export interface SafetensorsContents {
  tensors: Map<string, StoredTensor>;
  /** The `__metadata__` string map; empty when the file has none. */
  metadata: Record<string, string>;
}

/** Tensors to write: a Map, or a plain object keyed by tensor name. */
export type SafetensorsInput = ReadonlyMap<string, StoredTensor> | Readonly<Record<string, StoredTensor>>;

/** A malformed file, or tensors that cannot be written. `source` is the file (or '<buffer>'). */
export class SafetensorsError extends Error {
  constructor(
    readonly source: string,
    readonly tensorName: string | undefined,
    detail: string,
  ) {
    super(`${source}: ${tensorName === undefined ? '' : `tensor ${JSON.stringify(tensorName)}: `}${detail}`);
    this.name = 'SafetensorsError';
  }
}

interface DtypeInfo {
  bytesPerElement: number;
  /** Position in the reference implementation's dtype enum, which is in increasing alignment order. */
  alignmentRank: number;
  arrayType: { new (buffer: ArrayBuffer, byteOffset: number, length: number): StoredTensorData };
}

// Ordered as the reference `Dtype` enum; the writer sorts by descending rank like it does.
const DTYPES: Record<SafetensorsDtype, DtypeInfo> = {
  BOOL: { bytesPerElement: 1, alignmentRank: 0, arrayType: Uint8Array },
  U8: { bytesPerElement: 1, alignmentRank: 1, arrayType: Uint8Array },
  I8: { bytesPerElement: 1, alignmentRank: 2, arrayType: Int8Array },
  F8_E5M2: { bytesPerElement: 1, alignmentRank: 3, arrayType: Uint8Array },
  F8_E4M3: { bytesPerElement: 1, alignmentRank: 4, arrayType: Uint8Array },
  F8_E8M0: { bytesPerElement: 1, alignmentRank: 5, arrayType: Uint8Array },
  I16: { bytesPerElement: 2, alignmentRank: 6, arrayType: Int16Array },
  U16: { bytesPerElement: 2, alignmentRank: 7, arrayType: Uint16Array },
  F16: { bytesPerElement: 2, alignmentRank: 8, arrayType: Uint16Array },
  BF16: { bytesPerElement: 2, alignmentRank: 9, arrayType: Uint16Array },
  I32: { bytesPerElement: 4, alignmentRank: 10, arrayType: Int32Array },
  U32: { bytesPerElement: 4, alignmentRank: 11, arrayType: Uint32Array },
  F32: { bytesPerElement: 4, alignmentRank: 12, arrayType: Float32Array },
  F64: { bytesPerElement: 8, alignmentRank: 13, arrayType: Float64Array },
  I64: { bytesPerElement: 8, alignmentRank: 14, arrayType: BigInt64Array },
  U64: { bytesPerElement: 8, alignmentRank: 15, arrayType: BigUint64Array },
};

/** The reference implementation refuses headers above 100 MB (a corrupt length field, in practice). */
const MAX_HEADER_BYTES = 100_000_000;
const METADATA_KEY = '__metadata__';
const HEADER_LENGTH_BYTES = 8;
const HOST_IS_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function isDtype(value: unknown): value is SafetensorsDtype {
  return typeof value === 'string' && Object.hasOwn(DTYPES, value);
}

/** A tensor's place in the data section, validated against the rest of the header. */
interface TensorEntry {
  name: string;
  dtype: SafetensorsDtype;
  shape: number[];
  begin: number;
  end: number;
}

interface ParsedHeader {
  entries: TensorEntry[];
  metadata: Record<string, string>;
  /** Byte offset of the data section in the file. */
  dataStart: number;
}

function describe(value: unknown): string {
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function elementCount(shape: readonly number[]): number {
  return shape.reduce((product, dim) => product * dim, 1);
}

function checkShape(shape: unknown, fail: (detail: string) => never): number[] {
  if (!Array.isArray(shape) || !shape.every((dim) => Number.isSafeInteger(dim) && dim >= 0)) {
    fail(`shape must be an array of non-negative integers, got ${describe(shape)}`);
  }
  const dims = shape as number[];
  if (!Number.isSafeInteger(elementCount(dims))) fail(`shape ${describe(dims)} has too many elements`);
  return [...dims];
}

/** Reads the 8-byte header length and checks it against the file size. */
function headerLength(lengthField: Uint8Array, fileBytes: number, source: string): number {
  if (fileBytes < HEADER_LENGTH_BYTES) {
    throw new SafetensorsError(source, undefined, `file is ${fileBytes} bytes, too short for the 8-byte header length`);
  }
  const view = new DataView(lengthField.buffer, lengthField.byteOffset, HEADER_LENGTH_BYTES);
  const length = view.getBigUint64(0, true);
  if (length > BigInt(fileBytes - HEADER_LENGTH_BYTES)) {
    throw new SafetensorsError(
      source,
      undefined,
      `header length ${length} runs past the end of the file (${fileBytes} bytes, so at most ${fileBytes - HEADER_LENGTH_BYTES})`,
    );
  }
  if (length > BigInt(MAX_HEADER_BYTES)) {
    throw new SafetensorsError(source, undefined, `header length ${length} exceeds the ${MAX_HEADER_BYTES}-byte limit`);
  }
  return Number(length);
}

/** Decodes and validates the JSON header; `dataBytes` is the size of everything after it. */
function parseHeader(headerBytes: Uint8Array, dataBytes: number, source: string): ParsedHeader {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(headerBytes);
  } catch {
    throw new SafetensorsError(source, undefined, 'header is not valid UTF-8');
  }
  if (!text.startsWith('{')) {
    throw new SafetensorsError(
      source,
      undefined,
      `header must be a JSON object starting with "{", got ${describe(text)}`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new SafetensorsError(source, undefined, `header is not valid JSON (${(error as Error).message})`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new SafetensorsError(source, undefined, 'header is not a JSON object');
  }

  let metadata: Record<string, string> = {};
  const entries: TensorEntry[] = [];
  for (const [name, value] of Object.entries(json)) {
    if (name === METADATA_KEY) {
      const isStringMap =
        typeof value === 'object' &&
        value !== null &&
        !Array.isArray(value) &&
        Object.values(value).every((v) => typeof v === 'string');
      if (!isStringMap) {
        throw new SafetensorsError(
          source,
          undefined,
          `${METADATA_KEY} must map strings to strings, got ${describe(value)}`,
        );
      }
      // Object.fromEntries defines own properties, so a key like "__proto__" stays a plain key.
      metadata = Object.fromEntries(Object.entries(value as Record<string, string>));
      continue;
    }
    const fail = (detail: string): never => {
      throw new SafetensorsError(source, name, detail);
    };
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      fail(`entry must be an object with dtype, shape and data_offsets, got ${describe(value)}`);
    }
    const info = value as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
    if (!isDtype(info.dtype)) {
      fail(`unknown dtype ${describe(info.dtype)} (known: ${Object.keys(DTYPES).join(', ')})`);
    }
    const dtype = info.dtype as SafetensorsDtype;
    const shape = checkShape(info.shape, fail);
    const offsets = info.data_offsets;
    if (
      !Array.isArray(offsets) ||
      offsets.length !== 2 ||
      !offsets.every((offset) => Number.isSafeInteger(offset) && offset >= 0)
    ) {
      fail(`data_offsets must be [begin, end] with non-negative integers, got ${describe(offsets)}`);
    }
    const [begin, end] = offsets as [number, number];
    if (end < begin) fail(`data_offsets [${begin}, ${end}] end before they begin`);
    if (end > dataBytes) {
      fail(`data_offsets [${begin}, ${end}] run past the end of the data section (${dataBytes} bytes)`);
    }
    const expectedBytes = elementCount(shape) * DTYPES[dtype].bytesPerElement;
    if (end - begin !== expectedBytes) {
      fail(
        `data_offsets [${begin}, ${end}] span ${end - begin} bytes, but ${dtype} ${describe(shape)} needs ${expectedBytes}`,
      );
    }
    entries.push({ name, dtype, shape, begin, end });
  }

  // Like the reference: the tensors must tile the data section exactly, with no overlap and no gap.
  const byOffset = [...entries].sort((a, b) => a.begin - b.begin || a.end - b.end);
  let covered = 0;
  let previous: TensorEntry | undefined;
  for (const entry of byOffset) {
    if (entry.begin < covered) {
      throw new SafetensorsError(
        source,
        entry.name,
        `data_offsets [${entry.begin}, ${entry.end}] overlap tensor ${JSON.stringify(previous?.name)} [${previous?.begin}, ${previous?.end}]`,
      );
    }
    if (entry.begin > covered) {
      throw new SafetensorsError(
        source,
        entry.name,
        `data_offsets [${entry.begin}, ${entry.end}] leave bytes [${covered}, ${entry.begin}) of the data section unused`,
      );
    }
    covered = entry.end;
    previous = entry;
  }
  if (covered !== dataBytes) {
    throw new SafetensorsError(
      source,
      undefined,
      `the tensors cover ${covered} bytes of data but the file has ${dataBytes} after the header`,
    );
  }
  return { entries, metadata, dataStart: HEADER_LENGTH_BYTES + headerBytes.length };
}

function swapByteOrder(bytes: Uint8Array, bytesPerElement: number): void {
  for (let start = 0; start < bytes.length; start += bytesPerElement) {
    bytes.subarray(start, start + bytesPerElement).reverse();
  }
}

/** A fresh, aligned typed array over `bytes` (which it takes ownership of), in host byte order. */
function toTypedArray(dtype: SafetensorsDtype, bytes: Uint8Array<ArrayBuffer>): StoredTensorData {
  const { bytesPerElement, arrayType } = DTYPES[dtype];
  if (!HOST_IS_LITTLE_ENDIAN && bytesPerElement > 1) swapByteOrder(bytes, bytesPerElement);
  return new arrayType(bytes.buffer, bytes.byteOffset, bytes.length / bytesPerElement);
}

function makeTensor(entry: TensorEntry, data: StoredTensorData): StoredTensor {
  return { dtype: entry.dtype, shape: entry.shape, data } as StoredTensor;
}

/** Parses a whole safetensors file held in memory. Tensor data is copied out, so `bytes` may be reused. */
export function parseSafetensors(bytes: Uint8Array, source = '<buffer>'): SafetensorsContents {
  const length = headerLength(bytes, bytes.length, source);
  const header = parseHeader(
    bytes.subarray(HEADER_LENGTH_BYTES, HEADER_LENGTH_BYTES + length),
    bytes.length - HEADER_LENGTH_BYTES - length,
    source,
  );
  const tensors = new Map<string, StoredTensor>();
  for (const entry of header.entries) {
    // A copy into a fresh buffer: file offsets need not be aligned to the element size.
    const copy = bytes.slice(header.dataStart + entry.begin, header.dataStart + entry.end);
    tensors.set(entry.name, makeTensor(entry, toTypedArray(entry.dtype, copy)));
  }
  return { tensors, metadata: header.metadata };
}

/** Reads a safetensors file, each tensor straight into its own typed array (no whole-file buffer). */
export async function readSafetensors(path: string): Promise<SafetensorsContents> {
  const file = await open(path, 'r');
  try {
    const fileBytes = (await file.stat()).size;
    const readExactly = async (target: Uint8Array, position: number, what: string): Promise<void> => {
      // One read call is capped near 2 GiB and may return short, so read in bounded chunks.
      const chunkBytes = 1 << 30;
      for (let done = 0; done < target.length;) {
        const want = Math.min(chunkBytes, target.length - done);
        const { bytesRead } = await file.read(target, done, want, position + done);
        if (bytesRead === 0) {
          throw new SafetensorsError(path, undefined, `file ended while reading ${what} (it shrank while being read?)`);
        }
        done += bytesRead;
      }
    };
    const lengthField = new Uint8Array(Math.min(HEADER_LENGTH_BYTES, fileBytes));
    await readExactly(lengthField, 0, 'the header length');
    const length = headerLength(lengthField, fileBytes, path);
    const headerBytes = new Uint8Array(length);
    await readExactly(headerBytes, HEADER_LENGTH_BYTES, 'the header');
    const header = parseHeader(headerBytes, fileBytes - HEADER_LENGTH_BYTES - length, path);
    const tensors = new Map<string, StoredTensor>();
    for (const entry of header.entries) {
      const bytes = new Uint8Array(entry.end - entry.begin);
      await readExactly(bytes, header.dataStart + entry.begin, `tensor ${JSON.stringify(entry.name)}`);
      tensors.set(entry.name, makeTensor(entry, toTypedArray(entry.dtype, bytes)));
    }
    return { tensors, metadata: header.metadata };
  } finally {
    await file.close();
  }
}

/** The header bytes and data order that `serialize` and `write` share. */
interface Layout {
  /** The 8-byte length followed by the JSON header, padded with spaces to a multiple of 8 bytes. */
  prefix: Uint8Array;
  /** Tensors in file order, each as little-endian bytes. */
  chunks: Uint8Array[];
  totalBytes: number;
}

function compareCodePoints(a: string, b: string): number {
  // Rust compares names as UTF-8 bytes, which orders like code points (not like UTF-16 units).
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

function littleEndianBytes(dtype: SafetensorsDtype, data: StoredTensorData): Uint8Array {
  const view = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  const { bytesPerElement } = DTYPES[dtype];
  if (HOST_IS_LITTLE_ENDIAN || bytesPerElement === 1) return view;
  const copy = view.slice();
  swapByteOrder(copy, bytesPerElement);
  return copy;
}

function planLayout(tensors: SafetensorsInput, metadata: Readonly<Record<string, string>> | undefined): Layout {
  const source = '<serialize>';
  const named: [string, StoredTensor][] =
    tensors instanceof Map ? [...tensors.entries()] : Object.entries(tensors as Record<string, StoredTensor>);
  for (const [name, tensor] of named) {
    const fail = (detail: string): never => {
      throw new SafetensorsError(source, name, detail);
    };
    if (name === METADATA_KEY) fail(`${METADATA_KEY} is reserved for the metadata map`);
    if (!isDtype(tensor.dtype)) fail(`unknown dtype ${describe(tensor.dtype)}`);
    const { arrayType } = DTYPES[tensor.dtype];
    if (!(tensor.data instanceof arrayType)) {
      fail(
        `${tensor.dtype} data must be a ${arrayType.name}, got ${tensor.data?.constructor?.name ?? typeof tensor.data}`,
      );
    }
    const shape = checkShape(tensor.shape, fail);
    if (tensor.data.length !== elementCount(shape)) {
      fail(`shape ${describe(shape)} has ${elementCount(shape)} elements but data has ${tensor.data.length}`);
    }
  }
  // The reference order: descending dtype alignment, then name, so every tensor starts aligned.
  named.sort(
    ([nameA, a], [nameB, b]) =>
      DTYPES[b.dtype].alignmentRank - DTYPES[a.dtype].alignmentRank || compareCodePoints(nameA, nameB),
  );

  // The JSON is assembled by hand: an object would move integer-like names ("0", "1") to the front.
  const members: string[] = [];
  if (metadata !== undefined && Object.keys(metadata).length > 0) {
    const sortedKeys = Object.keys(metadata).sort(compareCodePoints);
    for (const key of sortedKeys) {
      if (typeof metadata[key] !== 'string') {
        throw new SafetensorsError(source, undefined, `metadata ${JSON.stringify(key)} must be a string`);
      }
    }
    const entries = sortedKeys.map((key) => `${JSON.stringify(key)}:${JSON.stringify(metadata[key])}`);
    members.push(`${JSON.stringify(METADATA_KEY)}:{${entries.join(',')}}`);
  }
  const chunks: Uint8Array[] = [];
  let offset = 0;
  for (const [name, tensor] of named) {
    const bytes = littleEndianBytes(tensor.dtype, tensor.data);
    const info = { dtype: tensor.dtype, shape: tensor.shape, data_offsets: [offset, offset + bytes.length] };
    members.push(`${JSON.stringify(name)}:${JSON.stringify(info)}`);
    chunks.push(bytes);
    offset += bytes.length;
  }

  const json = new TextEncoder().encode(`{${members.join(',')}}`);
  const paddedLength = Math.ceil(json.length / 8) * 8;
  const prefix = new Uint8Array(HEADER_LENGTH_BYTES + paddedLength).fill(0x20);
  new DataView(prefix.buffer).setBigUint64(0, BigInt(paddedLength), true);
  prefix.set(json, HEADER_LENGTH_BYTES);
  return { prefix, chunks, totalBytes: prefix.length + offset };
}

/**
 * The safetensors bytes of `tensors`, laid out as the reference implementation lays them out
 * (same order, same header JSON, same padding), so equal inputs give identical bytes.
 */
export function serializeSafetensors(
  tensors: SafetensorsInput,
  metadata?: Readonly<Record<string, string>>,
): Uint8Array {
  const layout = planLayout(tensors, metadata);
  const out = new Uint8Array(layout.totalBytes);
  out.set(layout.prefix, 0);
  let position = layout.prefix.length;
  for (const chunk of layout.chunks) {
    out.set(chunk, position);
    position += chunk.length;
  }
  return out;
}

/**
 * Writes a safetensors file atomically: into a temporary file in the same directory, flushed to disk,
 * then renamed over `path`, so readers see the old file or the complete new one, never a torn one.
 */
export async function writeSafetensors(
  path: string,
  tensors: SafetensorsInput,
  metadata?: Readonly<Record<string, string>>,
): Promise<void> {
  const layout = planLayout(tensors, metadata);
  await writeAtomically(path, async (file) => {
    for (const chunk of [layout.prefix, ...layout.chunks]) await writeAll(file, chunk);
  });
}
