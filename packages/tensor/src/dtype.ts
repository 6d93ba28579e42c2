// Element types. f32 is the compute type; bf16 is a storage type (convert to f32 to compute);
// i32 holds token ids, positions and segment ids.
export type DType = 'f32' | 'bf16' | 'i32';
export const DTYPES: readonly DType[] = ['f32', 'bf16', 'i32'];

export type DataOf<D extends DType> = D extends 'f32' ? Float32Array : D extends 'bf16' ? Uint16Array : Int32Array;
export type AnyData = Float32Array | Uint16Array | Int32Array;

export function bytesPerElement(dtype: DType): number {
  return dtype === 'bf16' ? 2 : 4;
}

export function allocate(dtype: DType, n: number): AnyData {
  switch (dtype) {
    case 'f32':
      return new Float32Array(n);
    case 'bf16':
      return new Uint16Array(n);
    case 'i32':
      return new Int32Array(n);
  }
}
