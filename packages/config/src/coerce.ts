// The structural pass over the merged raw tree, before the schema validates it:
// "None" → null, union tags (default injected when omitted), unknown keys with suggestions, and
// lax coercion of scalars (CLI and env values arrive as strings; TOML "true" is a boolean).
import { setOwn } from './files.js';
import { echo, type ConfigIssue } from './issues.js';
import { isTable, type Provenance, type Table } from './merge.js';
import { dotted, toKebab } from './names.js';
import { closest } from './suggest.js';
import type { Node, ScalarNode, ScalarType, SectionNode, UnionNode } from './tree.js';
import type { ConfigPath } from './types.js';

const NONE = 'None';

export function coerceTree(data: Table, root: SectionNode, prov: Provenance): { value: Table; issues: ConfigIssue[] } {
  const issues: ConfigIssue[] = [];
  const report: Report = (path, message) => issues.push({ path, message, ...sourceOf(prov, path) });
  report.typedText = (path) => {
    const kind = prov.lookup(dotted(path))?.kind;
    return kind === 'cli' || kind === 'env';
  };
  const value = walkSection(data, root, [], report) as Table;
  return { value, issues };
}

function sourceOf(prov: Provenance, path: ConfigPath) {
  const source = prov.lookup(dotted(path));
  return source ? { source } : {};
}

interface Report {
  (path: ConfigPath, message: string): void;
  /** True when the value at `path` was typed as text (CLI or environment), not read from a file. */
  typedText?: (path: ConfigPath) => boolean;
}

function walk(value: unknown, node: Node, path: ConfigPath, report: Report): unknown {
  if (value === undefined) return undefined;
  switch (node.kind) {
    case 'section':
      return walkSection(value, node, path, report);
    case 'union':
      return walkUnion(value, node, path, report);
    case 'list': {
      if (value === NONE || value === null) return nullOr(node, path, 'list', report);
      if (!Array.isArray(value)) {
        report(path, `Input should be a valid list${echo(value, node.secret)}`);
        return undefined;
      }
      // "None" inside a list is an ordinary string: only direct field values are converted.
      return value.map((item, i) =>
        item === NONE && node.item.kind === 'scalar' ? item : walk(item, node.item, [...path, i], report),
      );
    }
    case 'dict': {
      if (value === NONE || value === null) return nullOr(node, path, 'dictionary', report);
      if (!isTable(value)) {
        report(path, `Input should be a valid dictionary${echo(value, node.secret)}`);
        return undefined;
      }
      if (node.value.kind === 'any') return report.typedText?.(path) ? coerceFreeForm(value) : value;
      const out: Table = {};
      for (const [k, v] of Object.entries(value)) {
        setOwn(out, k, v === NONE && node.value.kind === 'scalar' ? v : walk(v, node.value, [...path, k], report));
      }
      return out;
    }
    case 'any':
      return value === NONE ? null : value;
    case 'scalar':
      return coerceScalarField(value, node, path, report);
  }
}

function nullOr(node: Node, path: ConfigPath, what: string, report: Report): null | undefined {
  if (node.nullable) return null;
  report(path, `Input should be a valid ${what} (this field cannot be None)`);
  return undefined;
}

function walkSection(value: unknown, node: SectionNode, path: ConfigPath, report: Report): unknown {
  if (value === NONE || value === null) return nullOr(node, path, 'dictionary', report);
  if (!isTable(value)) {
    report(path, `Input should be a valid dictionary (a table of fields)${echo(value, node.secret)}`);
    return undefined;
  }
  const out: Table = {};
  for (const [key, v] of Object.entries(value)) {
    const field = node.fields.get(key);
    if (!field) {
      const suggestion = closest(key, node.fields.keys());
      const hint = suggestion ? `. Did you mean ${flagAt(path, suggestion)}?` : '';
      report([...path, key], `Unknown field: extra inputs are not permitted${echo(v)}${hint}`);
      continue;
    }
    const coerced = walk(v, field, [...path, key], report);
    if (coerced !== undefined) setOwn(out, key, coerced);
  }
  return out;
}

function flagAt(path: ConfigPath, name: string): string {
  const parts = path.map((p) => (typeof p === 'number' ? String(p) : toKebab(p)));
  return `--${[...parts, toKebab(name)].join('.')}`;
}

function walkUnion(value: unknown, node: UnionNode, path: ConfigPath, report: Report): unknown {
  if (value === NONE || value === null) return nullOr(node, path, 'dictionary', report);
  if (!isTable(value)) {
    report(path, `Input should be a valid dictionary (a table with a '${node.discriminator}' field)${echo(value)}`);
    return undefined;
  }
  let tag = value[node.discriminator];
  if (tag === undefined) {
    if (node.defaultTag === undefined) {
      report(
        path,
        `Unable to extract tag using discriminator '${node.discriminator}': set ${flagAt(path, node.discriminator)} to one of ${tags(node)}`,
      );
      return undefined;
    }
    tag = node.defaultTag;
  }
  const variant = typeof tag === 'string' ? node.variants.get(tag) : undefined;
  if (!variant) {
    report(
      [...path, node.discriminator],
      `Input tag '${String(tag)}' found using '${node.discriminator}' does not match any of the expected tags: ${tags(node)}`,
    );
    return undefined;
  }
  const out = walkSection({ ...value, [node.discriminator]: tag }, variant, path, report);
  return out;
}

const tags = (node: UnionNode) => [...node.variants.keys()].map((t) => `'${t}'`).join(', ');

function coerceScalarField(value: unknown, node: ScalarNode, path: ConfigPath, report: Report): unknown {
  if (value === NONE || value === null) {
    if (node.nullable) return null;
    report(path, `${expectation(node.types[0]!)} (this field cannot be None)`);
    return undefined;
  }
  let firstError: string | undefined;
  for (const type of node.types) {
    const r = coerceScalar(value, type);
    if (r.ok) return r.value;
    firstError ??= r.error;
  }
  report(path, `${firstError}${echo(value, node.secret)}`);
  return undefined;
}

type Coerced = { ok: true; value: unknown } | { ok: false; error: string };

const INT = /^[+-]?\d+$/;
const INT_WITH_ZERO_FRACTION = /^[+-]?\d+\.0*$/;
const FLOAT = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const TRUE = new Set(['true', 'yes', 'on', 't', 'y', '1']);
const FALSE = new Set(['false', 'no', 'off', 'f', 'n', '0']);

function expectation(type: ScalarType): string {
  switch (type.t) {
    case 'int':
      return 'Input should be a valid integer';
    case 'float':
      return 'Input should be a valid number';
    case 'bool':
      return 'Input should be a valid boolean';
    case 'string':
      return 'Input should be a valid string';
    case 'enum':
      return `Input should be ${enumList(type.values)}`;
  }
}

function enumList(values: ReadonlyArray<string | number | boolean>): string {
  const q = values.map((v) => (typeof v === 'string' ? `'${v}'` : String(v)));
  return q.length <= 1 ? (q[0] ?? 'nothing') : `${q.slice(0, -1).join(', ')} or ${q.at(-1)}`;
}

/** Lax coercion of one value to one scalar type. */
export function coerceScalar(value: unknown, type: ScalarType): Coerced {
  const fail = (detail = ''): Coerced => ({ ok: false, error: expectation(type) + detail });
  switch (type.t) {
    case 'int': {
      if (typeof value === 'bigint') return { ok: true, value: Number(value) };
      if (typeof value === 'number') {
        return Number.isInteger(value) ? { ok: true, value } : fail(', got a number with a fractional part');
      }
      if (typeof value === 'string') {
        const s = value.trim();
        if (INT.test(s) || INT_WITH_ZERO_FRACTION.test(s)) {
          const n = Number.parseInt(s, 10);
          return Number.isSafeInteger(n) ? { ok: true, value: n } : fail(', the number is too large');
        }
        return fail(', unable to parse string as an integer');
      }
      return fail();
    }
    case 'float': {
      if (typeof value === 'number') return { ok: true, value };
      if (typeof value === 'bigint') return { ok: true, value: Number(value) };
      if (typeof value === 'string') {
        const s = value.trim();
        if (FLOAT.test(s)) return { ok: true, value: Number(s) };
        if (/^[+-]?(inf|infinity)$/i.test(s)) return { ok: true, value: s.startsWith('-') ? -Infinity : Infinity };
        if (/^[+-]?nan$/i.test(s)) return { ok: true, value: Number.NaN };
        return fail(', unable to parse string as a number');
      }
      return fail();
    }
    case 'bool': {
      if (typeof value === 'boolean') return { ok: true, value };
      if (value === 0 || value === 1) return { ok: true, value: value === 1 };
      if (typeof value === 'string') {
        const s = value.trim().toLowerCase();
        if (TRUE.has(s)) return { ok: true, value: true };
        if (FALSE.has(s)) return { ok: true, value: false };
        return fail(', unable to interpret input');
      }
      return fail();
    }
    case 'string':
      return typeof value === 'string' ? { ok: true, value } : fail();
    case 'enum': {
      if (type.values.includes(value as string)) return { ok: true, value };
      if (typeof value === 'string') {
        const asNumber = type.values.find((v) => typeof v === 'number' && String(v) === value.trim());
        if (asNumber !== undefined) return { ok: true, value: asNumber };
      }
      return fail();
    }
  }
}

/**
 * Free-form tables keep their JSON/TOML types. Only a table typed on the command line or in an
 * environment variable whose values are all strings has them read as booleans and canonical numbers.
 */
function coerceFreeForm(value: Table): Table {
  const values = Object.values(value);
  if (values.length === 0 || !values.every((v) => typeof v === 'string')) return value;
  const out: Table = {};
  for (const [k, v] of Object.entries(value) as Array<[string, string]>) {
    let x: unknown = v;
    if (/^(true|false)$/i.test(v)) x = v.toLowerCase() === 'true';
    else if (/^[+-]?(0|[1-9]\d*)$/.test(v)) x = Number(v);
    else if (/^[+-]?(\d+\.\d*|\.\d+|\d+(\.\d*)?[eE][+-]?\d+)$/.test(v)) x = Number(v);
    setOwn(out, k, x);
  }
  return out;
}
