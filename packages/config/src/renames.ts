// Old field names that are still accepted: moved to their new place before layers merge,
// so a file using the old name and a CLI flag using the new one do not collide.
import { setOwn } from './files.js';
import { isTable, type Table } from './merge.js';
import { isIndex } from './names.js';
import type { Rename } from './types.js';

const split = (p: string): string[] => p.split('.');

/** If `path` starts with a rename's old path, return it rewritten to the new path. */
export function renamePath(path: readonly string[], renames: readonly Rename[]): { path: string[]; rename?: Rename } {
  for (const r of renames) {
    const from = split(r.from);
    if (from.length > path.length) continue;
    const stars: string[] = [];
    let ok = true;
    for (let i = 0; i < from.length && ok; i++) {
      if (from[i] === '*') {
        if (isIndex(path[i]!)) stars.push(path[i]!);
        else ok = false;
      } else if (from[i] !== path[i]) ok = false;
    }
    if (!ok) continue;
    const to = split(r.to).map((seg) => (seg === '*' ? (stars.shift() ?? '0') : seg));
    return { path: [...to, ...path.slice(from.length)], rename: r };
  }
  return { path: [...path] };
}

/** The warning printed when an old name is used (none for silent aliases). */
export function renameWarning(r: Rename, where: string, bothSet = false): string | undefined {
  if (r.kind === 'alias') return undefined;
  const from = split(r.from);
  const to = split(r.to);
  const sameParent = from.length === to.length && from.slice(0, -1).join('.') === to.slice(0, -1).join('.');
  const parent = from.slice(0, -1).join('.');
  const [oldName, newName] = sameParent ? [from.at(-1)!, to.at(-1)!] : [r.from, r.to];
  const scope = sameParent && parent ? `in [${parent}] ` : '';
  const tail = bothSet
    ? `both are set, so '${newName}' is used and '${oldName}' is ignored`
    : 'translated automatically for now; please update your config';
  return `'${oldName}' is deprecated, use '${newName}' instead (${scope}from ${where}; ${tail}).`;
}

/** Move every old-name key in `data` to its new place. Returns the renames that applied. */
export function renameTable(data: Table, renames: readonly Rename[]): Array<{ rename: Rename; bothSet: boolean }> {
  const applied: Array<{ rename: Rename; bothSet: boolean }> = [];
  for (const r of renames) {
    for (const match of expand(data, split(r.from))) {
      const value = take(data, match);
      const to = split(r.to).map((seg) => (seg === '*' ? (match.find((m) => isIndex(m)) ?? '0') : seg));
      const bothSet = has(data, to);
      if (!bothSet) put(data, to, value);
      applied.push({ rename: r, bothSet });
    }
  }
  return applied;
}

/** Concrete paths in `data` matching a pattern (with `*` over list indices). */
function expand(data: unknown, pattern: string[], prefix: string[] = []): string[][] {
  if (pattern.length === 0) return [prefix];
  const [head, ...rest] = pattern as [string, ...string[]];
  if (head === '*') {
    if (!Array.isArray(data)) return [];
    return data.flatMap((item, i) => expand(item, rest, [...prefix, String(i)]));
  }
  if (!isTable(data) || !Object.hasOwn(data, head)) return [];
  return expand(data[head], rest, [...prefix, head]);
}

function parentOf(data: unknown, path: string[]): unknown {
  let cur = data;
  for (const seg of path.slice(0, -1)) {
    cur = Array.isArray(cur) ? cur[Number(seg)] : isTable(cur) ? cur[seg] : undefined;
  }
  return cur;
}

function has(data: Table, path: string[]): boolean {
  const parent = parentOf(data, path);
  const last = path.at(-1)!;
  return Array.isArray(parent) ? Number(last) < parent.length : isTable(parent) && Object.hasOwn(parent, last);
}

function take(data: Table, path: string[]): unknown {
  const parent = parentOf(data, path) as Table;
  const last = path.at(-1)!;
  const value = parent[last];
  delete parent[last];
  return value;
}

function put(data: Table, path: string[], value: unknown): void {
  let cur: unknown = data;
  for (const seg of path.slice(0, -1)) {
    if (Array.isArray(cur)) {
      cur = cur[Number(seg)];
      continue;
    }
    const table = cur as Table;
    if (!isTable(table[seg]) && !Array.isArray(table[seg])) setOwn(table, seg, {});
    cur = table[seg];
  }
  if (isTable(cur)) setOwn(cur, path.at(-1)!, value);
}
