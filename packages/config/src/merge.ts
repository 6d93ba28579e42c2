// Layer merging: tables deep-merge, everything else (scalars, lists, "None") is replaced.
// Alongside the data we track which source set each path, for error messages and `--explain`.
import { setOwn } from './files.js';
import type { Source } from './types.js';

export type Table = Record<string, unknown>;

export const isTable = (v: unknown): v is Table => typeof v === 'object' && v !== null && !Array.isArray(v);

export function clone<T>(v: T): T {
  if (Array.isArray(v)) return v.map(clone) as T;
  if (isTable(v)) {
    const out: Table = {};
    for (const [k, x] of Object.entries(v)) setOwn(out, k, clone(x));
    return out as T;
  }
  return v;
}

/** Which source set each dotted path. */
export class Provenance {
  private readonly map = new Map<string, Source>();

  /** Record `source` for `prefix` and every path inside `value`, after forgetting what was below `prefix`. */
  replace(prefix: string, value: unknown, source: Source): void {
    this.forget(prefix);
    this.record(prefix, value, source);
  }

  /** Record `source` for `prefix` and every path inside `value` (nothing forgotten). */
  record(prefix: string, value: unknown, source: Source): void {
    if (prefix) this.map.set(prefix, source);
    if (isTable(value)) for (const [k, v] of Object.entries(value)) this.record(join(prefix, k), v, source);
    else if (Array.isArray(value)) value.forEach((v, i) => this.record(join(prefix, String(i)), v, source));
  }

  forget(prefix: string): void {
    for (const key of [...this.map.keys()]) if (key === prefix || key.startsWith(`${prefix}.`)) this.map.delete(key);
  }

  /** The source of `path` or of its nearest recorded ancestor. */
  lookup(path: string): Source | undefined {
    let p = path;
    for (;;) {
      const hit = this.map.get(p);
      if (hit) return hit;
      const cut = p.lastIndexOf('.');
      if (cut < 0) return undefined;
      p = p.slice(0, cut);
    }
  }

  entries(): ReadonlyMap<string, Source> {
    return this.map;
  }
}

export const join = (prefix: string, key: string): string => (prefix ? `${prefix}.${key}` : key);

/** Merge `top` onto `base` in place (base is mutated), recording provenance of what `top` sets. */
export function mergeInto(base: Table, top: Table, source: Source, prov: Provenance, prefix = ''): void {
  for (const [key, value] of Object.entries(top)) {
    const at = join(prefix, key);
    const below = base[key];
    if (isTable(value) && isTable(below)) {
      prov.record(at, {}, source);
      mergeInto(below, value, source, prov, at);
    } else {
      setOwn(base, key, clone(value));
      prov.replace(at, value, source);
    }
  }
}
