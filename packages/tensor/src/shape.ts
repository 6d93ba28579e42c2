// Shape arithmetic: sizes, row-major strides, broadcasting, dimension normalisation.
export type Shape = readonly number[];

export function numel(shape: Shape): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

export function contiguousStrides(shape: Shape): number[] {
  const strides = new Array<number>(shape.length);
  let s = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    strides[i] = s;
    s *= shape[i]!;
  }
  return strides;
}

export function isContiguous(shape: Shape, strides: readonly number[]): boolean {
  let s = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    if (shape[i] !== 1 && strides[i] !== s) return false;
    s *= shape[i]!;
  }
  return true;
}

export function sameShape(a: Shape, b: Shape): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

export function formatShape(shape: Shape): string {
  return `[${shape.join(', ')}]`;
}

export function checkShape(shape: Shape, where: string): void {
  for (const d of shape)
    if (!Number.isInteger(d) || d < 0) throw new RangeError(`${where}: invalid shape ${formatShape(shape)}`);
}

/** Numpy broadcasting of two shapes; throws naming both shapes when they do not broadcast. */
export function broadcastShapes(a: Shape, b: Shape, where: string): number[] {
  const rank = Math.max(a.length, b.length);
  const out = new Array<number>(rank);
  for (let i = 0; i < rank; i++) {
    const da = a[a.length - rank + i] ?? 1;
    const db = b[b.length - rank + i] ?? 1;
    if (da !== db && da !== 1 && db !== 1)
      throw new RangeError(`${where}: shapes ${formatShape(a)} and ${formatShape(b)} do not broadcast`);
    out[i] = da === 1 ? db : da;
  }
  return out;
}

/** Strides that read a tensor of `shape`/`strides` broadcast to `target` (0 on broadcast dims). */
export function broadcastStrides(shape: Shape, strides: readonly number[], target: Shape): number[] {
  const out = new Array<number>(target.length).fill(0);
  const lead = target.length - shape.length;
  for (let i = 0; i < shape.length; i++) out[lead + i] = shape[i] === 1 ? 0 : strides[i]!;
  return out;
}

/** Resolves a possibly negative dimension index. */
export function normalizeDim(dim: number, rank: number, where: string): number {
  const d = dim < 0 ? dim + rank : dim;
  if (!Number.isInteger(d) || d < 0 || d >= rank)
    throw new RangeError(`${where}: dimension ${dim} is out of range for a tensor of rank ${rank}`);
  return d;
}
