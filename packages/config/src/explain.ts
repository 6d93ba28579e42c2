// `--explain`: every resolved value next to the source that set it.
import { describeSource } from './issues.js';
import { isTable } from './merge.js';
import { flagOf } from './names.js';
import { treeOf, type Node } from './tree.js';
import type { ConfigPath, ConfigSpec, Source } from './types.js';

export function explainText(spec: ConfigSpec, config: unknown, sources: ReadonlyMap<string, Source>): string {
  const rows: Array<[string, string, string]> = [];
  walk(config, treeOf(spec.schema), [], (path, value, node) => {
    rows.push([flagOf(path), node.secret ? '<secret>' : show(value), describeSource(sourceFor(path, sources))]);
  });
  const w0 = Math.max(...rows.map((r) => r[0].length));
  const w1 = Math.min(48, Math.max(...rows.map((r) => r[1].length)));
  return rows.map(([f, v, s]) => `${f.padEnd(w0)}  ${v.padEnd(w1)}  ← ${s}`).join('\n');
}

function show(v: unknown): string {
  if (v === null) return 'None';
  return JSON.stringify(v);
}

/** The source of a leaf: its own, or that of an enclosing list set as a whole; else the default. */
function sourceFor(path: ConfigPath, sources: ReadonlyMap<string, Source>): Source {
  const key = path.join('.');
  const own = sources.get(key);
  if (own) return own;
  for (let i = path.length - 1; i > 0; i--) {
    if (typeof path[i] === 'number') {
      const listSource = sources.get(path.slice(0, i).join('.'));
      if (listSource) return listSource;
    }
  }
  return { kind: 'default' };
}

function walk(value: unknown, node: Node, path: ConfigPath, leaf: (p: ConfigPath, v: unknown, n: Node) => void): void {
  if (value !== null && isTable(value) && (node.kind === 'section' || node.kind === 'union')) {
    const fields = node.kind === 'section' ? node.fields : node.variants.get(String(value[node.discriminator]))?.fields;
    for (const [k, v] of Object.entries(value)) {
      const f = fields?.get(k);
      if (f) walk(v, f, [...path, k], leaf);
    }
    return;
  }
  if (Array.isArray(value) && node.kind === 'list' && (node.item.kind === 'section' || node.item.kind === 'union')) {
    if (value.length === 0) leaf(path, value, node);
    value.forEach((item, i) => walk(item, node.item, [...path, i], leaf));
    return;
  }
  leaf(path, value, node);
}
