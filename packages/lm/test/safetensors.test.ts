// The safetensors reader and writer: byte-exact agreement with the reference implementation's own test
// vectors, round trips of every dtype, and a clear error for each kind of malformed file.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  parseSafetensors,
  readSafetensors,
  SafetensorsError,
  serializeSafetensors,
  writeSafetensors,
  type StoredTensor,
} from '../src/index.js';

/** A file from a header (object or raw text) and data bytes; `declaredLength` overrides the length field. */
function buildFile(header: object | string, data: Uint8Array = new Uint8Array(), declaredLength?: bigint): Uint8Array {
  const json = new TextEncoder().encode(typeof header === 'string' ? header : JSON.stringify(header));
  const out = new Uint8Array(8 + json.length + data.length);
  new DataView(out.buffer).setBigUint64(0, declaredLength ?? BigInt(json.length), true);
  out.set(json, 8);
  out.set(data, 8 + json.length);
  return out;
}

function headerOf(bytes: Uint8Array): { text: string; json: Record<string, unknown> } {
  const length = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  const text = new TextDecoder().decode(bytes.subarray(8, 8 + length));
  return { text, json: JSON.parse(text) as Record<string, unknown> };
}

function f32Bytes(values: number[]): Uint8Array {
  return new Uint8Array(new Float32Array(values).buffer);
}

/** One tensor of every dtype, with edge values (NaN payloads, -0, extreme integers). */
function everyDtype(): Map<string, StoredTensor> {
  return new Map<string, StoredTensor>([
    ['bool', { dtype: 'BOOL', shape: [3], data: new Uint8Array([1, 0, 1]) }],
    ['u8', { dtype: 'U8', shape: [2, 2], data: new Uint8Array([0, 1, 254, 255]) }],
    ['i8', { dtype: 'I8', shape: [3], data: new Int8Array([-128, 0, 127]) }],
    ['f8_e5m2', { dtype: 'F8_E5M2', shape: [2], data: new Uint8Array([0x3c, 0xff]) }],
    ['f8_e4m3', { dtype: 'F8_E4M3', shape: [2], data: new Uint8Array([0x38, 0x7f]) }],
    ['f8_e8m0', { dtype: 'F8_E8M0', shape: [1], data: new Uint8Array([127]) }],
    ['i16', { dtype: 'I16', shape: [3], data: new Int16Array([-32768, -1, 32767]) }],
    ['u16', { dtype: 'U16', shape: [2], data: new Uint16Array([0, 65535]) }],
    ['f16', { dtype: 'F16', shape: [3], data: new Uint16Array([0x3c00, 0x8000, 0x7e01]) }],
    ['bf16', { dtype: 'BF16', shape: [1, 3], data: new Uint16Array([0x3f80, 0xc000, 0x7fc1]) }],
    ['i32', { dtype: 'I32', shape: [3], data: new Int32Array([-(2 ** 31), 0, 2 ** 31 - 1]) }],
    ['u32', { dtype: 'U32', shape: [2], data: new Uint32Array([0, 2 ** 32 - 1]) }],
    ['f32', { dtype: 'F32', shape: [2, 3], data: new Float32Array([1.5, -0, Infinity, -Infinity, 1e-45, NaN]) }],
    ['f64', { dtype: 'F64', shape: [3], data: new Float64Array([Math.PI, -0, 5e-324]) }],
    ['i64', { dtype: 'I64', shape: [3], data: new BigInt64Array([-(2n ** 63n), 0n, 2n ** 63n - 1n]) }],
    ['u64', { dtype: 'U64', shape: [2], data: new BigUint64Array([0n, 2n ** 64n - 1n]) }],
    ['scalar', { dtype: 'F32', shape: [], data: new Float32Array([7]) }],
    ['empty', { dtype: 'F32', shape: [0, 4], data: new Float32Array(0) }],
  ]);
}

function assertSameTensors(actual: Map<string, StoredTensor>, expected: Map<string, StoredTensor>): void {
  assert.deepEqual([...actual.keys()].sort(), [...expected.keys()].sort());
  for (const [name, want] of expected) {
    const got = actual.get(name);
    assert.ok(got, name);
    assert.equal(got.dtype, want.dtype, name);
    assert.deepEqual(got.shape, want.shape, name);
    assert.equal(got.data.constructor, want.data.constructor, name);
    // Compare bits, so NaN payloads and -0 count.
    const bits = (t: StoredTensor) => Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
    assert.ok(bits(got).equals(bits(want)), `${name}: data differs`);
  }
}

function assertFormatError(action: () => unknown, pattern: RegExp, tensorName?: string): void {
  assert.throws(action, (error: unknown) => {
    assert.ok(error instanceof SafetensorsError, `expected a SafetensorsError, got ${String(error)}`);
    assert.match(error.message, pattern);
    assert.equal(error.tensorName, tensorName);
    return true;
  });
}

// The byte vectors below are the reference implementation's own tests (safetensors/src/tensor.rs).
test('serializes exactly as the reference implementation: one F32 tensor', () => {
  const out = serializeSafetensors({
    'attn.0': { dtype: 'F32', shape: [1, 2, 3], data: new Float32Array([0, 1, 2, 3, 4, 5]) },
  });
  // prettier-ignore
  const expected = [
    64, 0, 0, 0, 0, 0, 0, 0, 123, 34, 97, 116, 116, 110, 46, 48, 34, 58, 123, 34, 100,
    116, 121, 112, 101, 34, 58, 34, 70, 51, 50, 34, 44, 34, 115, 104, 97, 112, 101, 34,
    58, 91, 49, 44, 50, 44, 51, 93, 44, 34, 100, 97, 116, 97, 95, 111, 102, 102, 115,
    101, 116, 115, 34, 58, 91, 48, 44, 50, 52, 93, 125, 125, 0, 0, 0, 0, 0, 0, 128, 63,
    0, 0, 0, 64, 0, 0, 64, 64, 0, 0, 128, 64, 0, 0, 160, 64,
  ];
  assert.deepEqual([...out], expected);
});

test('serializes exactly as the reference implementation: header padded with spaces to 8 bytes', () => {
  const out = serializeSafetensors({
    attn0: { dtype: 'F32', shape: [1, 1, 2, 3], data: new Float32Array([0, 1, 2, 3, 4, 5]) },
  });
  const { text } = headerOf(out);
  assert.equal(text, '{"attn0":{"dtype":"F32","shape":[1,1,2,3],"data_offsets":[0,24]}}       ');
  assert.equal(out.length, 8 + 72 + 24);
  assert.equal(parseSafetensors(out).tensors.get('attn0')?.data[5], 5);
});

test('serializes exactly as the reference implementation: no tensors, with and without metadata', () => {
  assert.deepEqual([...serializeSafetensors(new Map())], [8, 0, 0, 0, 0, 0, 0, 0, 123, 125, 32, 32, 32, 32, 32, 32]);
  const withMetadata = serializeSafetensors(new Map(), { framework: 'pt' });
  assert.equal(headerOf(withMetadata).text, '{"__metadata__":{"framework":"pt"}}     ');
  assert.deepEqual([...withMetadata.subarray(0, 8)], [40, 0, 0, 0, 0, 0, 0, 0]);
  const parsed = parseSafetensors(withMetadata);
  assert.equal(parsed.tensors.size, 0);
  assert.deepEqual(parsed.metadata, { framework: 'pt' });
});

test('round-trips every dtype in memory, keeping bits exactly', () => {
  const tensors = everyDtype();
  const parsed = parseSafetensors(serializeSafetensors(tensors));
  assertSameTensors(parsed.tensors, tensors);
  assert.deepEqual(parsed.metadata, {});
  const f32 = parsed.tensors.get('f32');
  assert.ok(f32?.dtype === 'F32');
  assert.ok(Object.is(f32.data[1], -0));
  assert.ok(Number.isNaN(f32.data[5]));
});

test('round-trips every dtype through a file, and metadata with awkward keys', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'safetensors-test-'));
  try {
    const path = join(dir, 'model.safetensors');
    const metadataMap: Record<string, string> = { format: 'pt', 'ünïcödé 🙂': 'line\nbreak "quoted"', empty: '' };
    // An object literal would treat __proto__ as the prototype, so define it as a plain key.
    Object.defineProperty(metadataMap, '__proto__', { value: 'not a prototype', enumerable: true });
    await writeSafetensors(path, everyDtype(), metadataMap);
    const read = await readSafetensors(path);
    assertSameTensors(read.tensors, everyDtype());
    assert.deepEqual(Object.entries(read.metadata).sort(), Object.entries(metadataMap).sort());
    assert.equal(Object.getPrototypeOf(read.metadata), Object.prototype);
    // The file is exactly what serializeSafetensors produces, and nothing else is left in the directory.
    assert.ok(Buffer.from(await readFile(path)).equals(serializeSafetensors(everyDtype(), metadataMap)));
    assert.deepEqual(await readdir(dir), ['model.safetensors']);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('writes tensors in the reference order: descending dtype alignment, then name', () => {
  const { json } = headerOf(serializeSafetensors(everyDtype()));
  const names = Object.keys(json);
  const byOffset = [...names].sort(
    (a, b) =>
      (json[a] as { data_offsets: number[] }).data_offsets[0]! -
      (json[b] as { data_offsets: number[] }).data_offsets[0]!,
  );
  // Zero-byte 'empty' shares its offset with the next tensor; the header lists tensors in file order.
  assert.deepEqual(names, byOffset);
  assert.deepEqual(names, [
    'u64',
    'i64',
    'f64',
    'empty',
    'f32',
    'scalar',
    'u32',
    'i32',
    'bf16',
    'f16',
    'u16',
    'i16',
    'f8_e8m0',
    'f8_e4m3',
    'f8_e5m2',
    'i8',
    'u8',
    'bool',
  ]);
  // Every tensor starts at an offset aligned to its element size.
  for (const name of names) {
    const info = json[name] as { dtype: string; data_offsets: number[] };
    const size = { U64: 8, I64: 8, F64: 8, F32: 4, U32: 4, I32: 4 }[info.dtype] ?? 1;
    assert.equal(info.data_offsets[0]! % size, 0, name);
  }
});

test('serialization is deterministic: insertion order of tensors and metadata does not matter', () => {
  const forward = everyDtype();
  const backward = new Map([...forward.entries()].reverse());
  assert.deepEqual(
    serializeSafetensors(forward, { a: '1', b: '2' }),
    serializeSafetensors(backward, { b: '2', a: '1' }),
  );
});

test('integer-like tensor names keep their place after the metadata', () => {
  const tensors = new Map<string, StoredTensor>([
    ['10', { dtype: 'U8', shape: [1], data: new Uint8Array([10]) }],
    ['2', { dtype: 'U8', shape: [1], data: new Uint8Array([2]) }],
  ]);
  const out = serializeSafetensors(tensors, { k: 'v' });
  assert.match(headerOf(out).text, /^\{"__metadata__":\{"k":"v"\},"10":.*,"2":/);
  assert.deepEqual(parseSafetensors(out).tensors.get('2')?.data, new Uint8Array([2]));
});

test('reads a hand-built file: unaligned offsets, any name order, scalars, empty tensors, offset input view', () => {
  // A 37-byte header puts the data section at byte 45, so no F32 starts 4-byte aligned in the file.
  const header = {
    zeta: { dtype: 'F32', shape: [2], data_offsets: [1, 9] },
    alpha: { dtype: 'U8', shape: [], data_offsets: [0, 1] },
    nothing: { dtype: 'I64', shape: [3, 0], data_offsets: [9, 9] },
    count: { dtype: 'I64', shape: [1], data_offsets: [9, 17] },
    __metadata__: { note: 'hand-built' },
  };
  const data = new Uint8Array(17);
  data[0] = 42;
  data.set(f32Bytes([0.25, -3]), 1);
  new DataView(data.buffer).setBigInt64(9, -5n, true);
  const file = buildFile(header, data);
  assert.notEqual((8 + headerOf(file).text.length + 1) % 4, 0);
  // The reader must not assume the input view starts at the beginning of its buffer.
  const shifted = new Uint8Array(file.length + 3);
  shifted.set(file, 3);
  const { tensors, metadata } = parseSafetensors(shifted.subarray(3));
  assert.deepEqual(metadata, { note: 'hand-built' });
  assert.deepEqual(tensors.get('zeta'), { dtype: 'F32', shape: [2], data: new Float32Array([0.25, -3]) });
  assert.deepEqual(tensors.get('alpha'), { dtype: 'U8', shape: [], data: new Uint8Array([42]) });
  assert.deepEqual(tensors.get('nothing'), { dtype: 'I64', shape: [3, 0], data: new BigInt64Array(0) });
  assert.deepEqual(tensors.get('count'), { dtype: 'I64', shape: [1], data: new BigInt64Array([-5n]) });
  // The data are copies: changing the input afterwards changes nothing.
  shifted.fill(0);
  assert.equal(tensors.get('alpha')?.data[0], 42);
});

test('accepts a header with trailing spaces, as written by the reference implementation', () => {
  const file = buildFile('{"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}   ', new Uint8Array([9]));
  assert.deepEqual(parseSafetensors(file).tensors.get('x')?.data, new Uint8Array([9]));
});

const oneF32 = (offsets: unknown, extra: object = {}) => ({
  w: { dtype: 'F32', shape: [2], data_offsets: offsets, ...extra },
});

test('malformed: file too short for the header length', () => {
  assertFormatError(() => parseSafetensors(new Uint8Array(5), 'short.safetensors'), /^short\.safetensors: .*5 bytes/);
});

test('malformed: header length beyond the end of the file', () => {
  const file = buildFile('{}', new Uint8Array(), 1000n);
  assertFormatError(
    () => parseSafetensors(file, 'long.safetensors'),
    /^long\.safetensors: header length 1000 runs past/,
  );
  const huge = buildFile('{}', new Uint8Array(), 2n ** 64n - 1n);
  assertFormatError(() => parseSafetensors(huge), /^<buffer>: header length 18446744073709551615 runs past/);
});

test('malformed: header not UTF-8, not JSON, or not an object', () => {
  const notUtf8 = buildFile('{}');
  notUtf8[9] = 0xff;
  assertFormatError(() => parseSafetensors(notUtf8, 'f'), /^f: header is not valid UTF-8/);
  assertFormatError(() => parseSafetensors(buildFile('{"w": {'), 'f'), /^f: header is not valid JSON/);
  assertFormatError(() => parseSafetensors(buildFile('[1, 2]'), 'f'), /^f: header must be a JSON object/);
  assertFormatError(() => parseSafetensors(buildFile(' {}'), 'f'), /^f: header must be a JSON object/);
});

test('malformed: metadata that is not a string map', () => {
  assertFormatError(() => parseSafetensors(buildFile({ __metadata__: { n: 1 } }), 'f'), /^f: __metadata__ must map/);
  assertFormatError(() => parseSafetensors(buildFile({ __metadata__: ['a'] }), 'f'), /^f: __metadata__ must map/);
});

test('malformed: a tensor entry that is not an object', () => {
  assertFormatError(() => parseSafetensors(buildFile({ w: [1] }), 'f'), /^f: tensor "w": entry must be an object/, 'w');
});

test('malformed: unknown dtype names the file and the tensor', () => {
  const file = buildFile({ w: { dtype: 'F128', shape: [1], data_offsets: [0, 16] } }, new Uint8Array(16));
  assertFormatError(
    () => parseSafetensors(file, 'm.safetensors'),
    /^m\.safetensors: tensor "w": unknown dtype "F128"/,
    'w',
  );
  const lower = buildFile({ w: { dtype: 'float32', shape: [1], data_offsets: [0, 4] } }, new Uint8Array(4));
  assertFormatError(() => parseSafetensors(lower, 'f'), /tensor "w": unknown dtype "float32"/, 'w');
});

test('malformed: bad shapes', () => {
  for (const shape of [[-1], [1.5], ['2'], 3, [2 ** 60, 2 ** 60]]) {
    const file = buildFile({ w: { dtype: 'F32', shape, data_offsets: [0, 8] } }, new Uint8Array(8));
    assertFormatError(() => parseSafetensors(file, 'f'), /^f: tensor "w": shape /, 'w');
  }
});

test('malformed: bad data_offsets', () => {
  const data = new Uint8Array(8);
  for (const offsets of [undefined, [0], [0, 8, 9], [-8, 0], [0, '8'], [0.5, 8.5]]) {
    assertFormatError(
      () => parseSafetensors(buildFile(oneF32(offsets), data), 'f'),
      /^f: tensor "w": data_offsets must be \[begin, end\]/,
      'w',
    );
  }
  assertFormatError(() => parseSafetensors(buildFile(oneF32([8, 0]), data), 'f'), /end before they begin/, 'w');
});

test('malformed: data_offsets out of range', () => {
  assertFormatError(
    () => parseSafetensors(buildFile(oneF32([4, 12]), new Uint8Array(8)), 'f'),
    /^f: tensor "w": data_offsets \[4, 12\] run past the end of the data section \(8 bytes\)/,
    'w',
  );
});

test('malformed: data_offsets that do not match dtype × shape', () => {
  assertFormatError(
    () => parseSafetensors(buildFile(oneF32([0, 6]), new Uint8Array(6)), 'f'),
    /^f: tensor "w": data_offsets \[0, 6\] span 6 bytes, but F32 \[2\] needs 8/,
    'w',
  );
});

test('malformed: overlapping tensors name both', () => {
  const header = {
    a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] },
    b: { dtype: 'F32', shape: [2], data_offsets: [4, 12] },
  };
  assertFormatError(
    () => parseSafetensors(buildFile(header, new Uint8Array(12)), 'f'),
    /^f: tensor "b": data_offsets \[4, 12\] overlap tensor "a" \[0, 8\]/,
    'b',
  );
});

test('malformed: a gap between tensors, or bytes after the last one', () => {
  const gap = {
    a: { dtype: 'U8', shape: [1], data_offsets: [0, 1] },
    b: { dtype: 'U8', shape: [1], data_offsets: [2, 3] },
  };
  assertFormatError(
    () => parseSafetensors(buildFile(gap, new Uint8Array(3)), 'f'),
    /^f: tensor "b": .* leave bytes \[1, 2\) of the data section unused/,
    'b',
  );
  assertFormatError(
    () => parseSafetensors(buildFile(oneF32([0, 8]), new Uint8Array(9)), 'f'),
    /^f: the tensors cover 8 bytes of data but the file has 9 after the header/,
  );
});

test('readSafetensors names the path in errors, including truncated files', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'safetensors-test-'));
  try {
    const path = join(dir, 'broken.safetensors');
    const good = serializeSafetensors({ w: { dtype: 'F32', shape: [2], data: new Float32Array([1, 2]) } });
    await writeFile(path, good.subarray(0, good.length - 1));
    await assert.rejects(readSafetensors(path), (error: unknown) => {
      assert.ok(error instanceof SafetensorsError);
      assert.equal(error.source, path);
      assert.match(error.message, /data_offsets \[0, 8\] run past the end of the data section \(7 bytes\)/);
      return true;
    });
    await writeFile(path, new Uint8Array(3));
    await assert.rejects(readSafetensors(path), new RegExp(`^SafetensorsError: ${path}: file is 3 bytes`));
    await assert.rejects(readSafetensors(join(dir, 'missing.safetensors')), { code: 'ENOENT' });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('writeSafetensors replaces a file whole, and a failed write leaves the old file and no debris', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'safetensors-test-'));
  try {
    const path = join(dir, 'ckpt.safetensors');
    await writeSafetensors(path, { w: { dtype: 'F32', shape: [1], data: new Float32Array([1]) } });
    await writeSafetensors(path, { w: { dtype: 'F32', shape: [1], data: new Float32Array([2]) } });
    assert.deepEqual((await readSafetensors(path)).tensors.get('w')?.data, new Float32Array([2]));
    const bad: Record<string, StoredTensor> = { w: { dtype: 'F32', shape: [2], data: new Float32Array([3]) } };
    await assert.rejects(writeSafetensors(path, bad), /tensor "w": shape \[2\] has 2 elements but data has 1/);
    await assert.rejects(writeSafetensors(join(dir, 'no-such-dir', 'x.safetensors'), {}), { code: 'ENOENT' });
    assert.deepEqual((await readSafetensors(path)).tensors.get('w')?.data, new Float32Array([2]));
    assert.deepEqual(await readdir(dir), ['ckpt.safetensors']);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('serializeSafetensors rejects tensors it cannot write', () => {
  const write =
    (tensor: unknown, name = 'w') =>
    () =>
      serializeSafetensors(new Map([[name, tensor as StoredTensor]]));
  assertFormatError(
    write({ dtype: 'F32', shape: [2], data: new Float64Array(2) }),
    /F32 data must be a Float32Array, got Float64Array/,
    'w',
  );
  assertFormatError(
    write({ dtype: 'BF16', shape: [2], data: new Float32Array(2) }),
    /BF16 data must be a Uint16Array/,
    'w',
  );
  assertFormatError(
    write({ dtype: 'F32', shape: [3], data: new Float32Array(2) }),
    /shape \[3\] has 3 elements but data has 2/,
    'w',
  );
  assertFormatError(write({ dtype: 'F32', shape: [-2], data: new Float32Array(2) }), /shape must be an array/, 'w');
  assertFormatError(write({ dtype: 'F128', shape: [1], data: new Float32Array(1) }), /unknown dtype "F128"/, 'w');
  assertFormatError(
    write({ dtype: 'F32', shape: [1], data: new Float32Array(1) }, '__metadata__'),
    /__metadata__ is reserved/,
    '__metadata__',
  );
  assert.throws(
    () => serializeSafetensors({}, { n: 1 } as unknown as Record<string, string>),
    /metadata "n" must be a string/,
  );
});

test('writes typed-array views at their own offset, not their whole buffer', () => {
  const backing = new Float32Array([9, 9, 1, 2, 9]);
  const out = serializeSafetensors({ w: { dtype: 'F32', shape: [2], data: backing.subarray(2, 4) } });
  assert.deepEqual(parseSafetensors(out).tensors.get('w')?.data, new Float32Array([1, 2]));
});
