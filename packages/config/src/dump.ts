// Writing a resolved config back as TOML that re-loads to the identical config.
// TOML has no null: a null whose default is also null is omitted; a null whose default is not
// null is written as the string "None" (which reads back as null).
import { stringify } from 'smol-toml';
import { setOwn } from './files.js';
import { isTable, type Table } from './merge.js';
import { treeOf, type Node } from './tree.js';
import type { ConfigSpec } from './types.js';

export function toToml(spec: ConfigSpec, value: unknown, header?: string): string {
  const plain = toPlainTable(value, treeOf(spec.schema));
  // A blank line before each table header, for readability (strings never hold raw newlines).
  const body = stringify(plain).replace(/\n(\[)/g, '\n\n$1');
  return header ? `${header.replace(/^/gm, '# ')}\n${body}\n` : `${body}\n`;
}

/** The TOML-ready table for a resolved value (nulls dropped or written as "None"). */
export function toPlainTable(value: unknown, node: Node): Table {
  return (convert(value, node) ?? {}) as Table;
}

function convert(value: unknown, node: Node): unknown {
  if (value === null || value === undefined) {
    if (value === undefined) return undefined;
    return node.hasDefault && node.default === null ? undefined : 'None';
  }
  if (node.secret) return undefined;
  switch (node.kind) {
    case 'section':
      return convertTable(value, (k) => node.fields.get(k));
    case 'union': {
      const tag = isTable(value) ? String(value[node.discriminator]) : '';
      const variant = node.variants.get(tag);
      return convertTable(value, (k) => variant?.fields.get(k));
    }
    case 'list':
      return Array.isArray(value) ? value.map((v) => convert(v, node.item) ?? 'None') : value;
    case 'dict':
      return convertTable(value, () => node.value);
    default:
      return stripNulls(value);
  }
}

function convertTable(value: unknown, fieldOf: (k: string) => Node | undefined): unknown {
  if (!isTable(value)) return value;
  const out: Table = {};
  for (const [k, v] of Object.entries(value)) {
    const field = fieldOf(k);
    const converted = field ? convert(v, field) : stripNulls(v);
    if (converted !== undefined) setOwn(out, k, converted);
  }
  return out;
}

/** Free-form values: nulls cannot be written in TOML, so they are left out. */
function stripNulls(v: unknown): unknown {
  if (v === null) return undefined;
  if (Array.isArray(v)) return v.filter((x) => x !== null).map(stripNulls);
  if (isTable(v)) {
    const out: Table = {};
    for (const [k, x] of Object.entries(v)) {
      const s = stripNulls(x);
      if (s !== undefined) setOwn(out, k, s);
    }
    return out;
  }
  return v;
}
