// Environment variables as a config layer: `PRIME_MODEL__NAME=x` sets `model.name`.
// Only variables that name a real field are read; every other `PRIME_*` variable is ignored.
import { setOwn } from './files.js';
import type { ConfigIssue } from './issues.js';
import { isTable, type Table } from './merge.js';
import { renamePath } from './renames.js';
import { childFields, type Node, type SectionNode } from './tree.js';
import type { Rename } from './types.js';

export interface EnvLayer {
  /** One single-field layer per variable, so each keeps its own source. */
  entries: Array<{ data: Table; variable: string }>;
  issues: ConfigIssue[];
  renamed: Array<{ rename: Rename; variable: string }>;
}

/** Build the env layer. Scalars are kept as strings (coerced later like CLI values). */
export function envLayer(
  env: Readonly<Record<string, string | undefined>>,
  prefix: string,
  root: SectionNode,
  renames: readonly Rename[],
): EnvLayer {
  const out: EnvLayer = { entries: [], issues: [], renamed: [] };
  const names = Object.keys(env)
    .filter((k) => k.toUpperCase().startsWith(prefix.toUpperCase()) && k.length > prefix.length)
    .sort();
  for (const variable of names) {
    const raw = env[variable]!;
    const lowered = variable.slice(prefix.length).toLowerCase().split('__');
    if (lowered.some((s) => s === '')) continue;
    const renamed = renamePath(lowered, renames);
    const path = renamed.path;
    const node = resolve(root, path);
    if (!node) continue;
    if (renamed.rename) out.renamed.push({ rename: renamed.rename, variable });

    let value: unknown = raw;
    const needsJson = node.kind === 'section' || node.kind === 'union' || node.kind === 'dict';
    const listOfTables = node.kind === 'list' && (node.item.kind === 'section' || node.item.kind === 'union');
    if (raw === 'None') value = 'None';
    else if (needsJson || listOfTables || (node.kind === 'list' && raw.trimStart().startsWith('['))) {
      try {
        value = JSON.parse(raw);
      } catch (err) {
        out.issues.push({
          label: variable,
          message: `Invalid JSON in environment variable (lists, tables and sections must be JSON): ${(err as Error).message}`,
          source: { kind: 'env', variable },
        });
        continue;
      }
    } else if (node.kind === 'list') {
      value = raw.includes(',') ? raw.split(',').map((s) => s.trim()) : [raw];
    }
    const data: Table = {};
    put(data, path, value);
    out.entries.push({ data, variable });
  }
  return out;
}

/** The node a path names, through sections, union variants and optional sections; no list indices. */
function resolve(root: SectionNode, path: readonly string[]): Node | undefined {
  let node: Node | undefined = root;
  for (const seg of path) {
    const fields: Map<string, Node> | undefined = node ? childFields(node) : undefined;
    node = fields?.get(seg);
    if (!node) return undefined;
  }
  return node;
}

function put(data: Table, path: readonly string[], value: unknown): void {
  let cur = data;
  for (const seg of path.slice(0, -1)) {
    if (!isTable(cur[seg])) setOwn(cur, seg, {});
    cur = cur[seg] as Table;
  }
  setOwn(cur, path.at(-1)!, value);
}
