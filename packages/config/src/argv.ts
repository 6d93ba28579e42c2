// The command-line grammar: `@ file` layers, `--section @ file`, and `--a.b-c value` overrides.
// The schema decides how many tokens a flag takes (booleans take an optional literal, lists take
// every token up to the next flag, sections take none), so parsing walks the schema tree.
import type { ConfigIssue } from './issues.js';
import { isIndex, toKebab, toSnake } from './names.js';
import { renamePath } from './renames.js';
import { closest } from './suggest.js';
import { childFields, isBool, type Node, type SectionNode } from './tree.js';
import type { Rename } from './types.js';

/** The value a flag contributes, before type coercion. */
export type CliValue =
  | { kind: 'raw'; value: string }
  | { kind: 'list'; items: string[] }
  | { kind: 'json'; value: unknown }
  | { kind: 'none' }
  | { kind: 'enable' }
  | { kind: 'mergeDict'; value: Record<string, unknown> };

export interface CliOp {
  /** snake_case segments; list indices as decimal strings. */
  path: string[];
  value: CliValue;
  /** The flag as the user typed it, for messages. */
  flag: string;
}

export interface ParsedArgv {
  rootFiles: string[];
  sectionFiles: Array<{ path: string[]; file: string; flag: string }>;
  ops: CliOp[];
  flags: { help: boolean; dryRun: boolean; explain: boolean; plain: boolean; jsonSchema: boolean };
  issues: ConfigIssue[];
  renamed: Array<{ rename: Rename; flag: string }>;
}

const BOOL_LITERALS = new Set(['true', 'True', '1', 'false', 'False', '0']);
const META_FLAGS: Record<string, keyof ParsedArgv['flags']> = {
  '--help': 'help',
  '-h': 'help',
  '--dry-run': 'dryRun',
  '--explain': 'explain',
  '--plain': 'plain',
  '--json-schema': 'jsonSchema',
};

const isFlag = (tok: string | undefined): boolean => tok !== undefined && (tok.startsWith('--') || tok === '-h');
const isValue = (tok: string | undefined): tok is string => tok !== undefined && !isFlag(tok) && !tok.startsWith('@');

type Lookup =
  | { ok: true; node: Node; path: string[] }
  | { ok: false; path: string[]; depth: number; siblings: string[]; leaf?: string };

/** Find the schema node a (snake_case) path addresses. */
export function lookup(root: SectionNode, segs: readonly string[]): Lookup {
  let node: Node = root;
  for (let i = 0; i < segs.length; i++) {
    const seg = segs[i]!;
    if (node.kind === 'list') {
      if (!isIndex(seg)) return { ok: false, path: [...segs], depth: i, siblings: [] };
      node = node.item;
      continue;
    }
    if (node.kind === 'dict') {
      node = node.value;
      continue;
    }
    if (node.kind === 'any') continue;
    const fields = childFields(node);
    if (!fields) {
      return { ok: false, path: [...segs], depth: i, siblings: [], leaf: segs.slice(0, i).join('.') };
    }
    const next = fields.get(seg);
    if (!next) return { ok: false, path: [...segs], depth: i, siblings: [...fields.keys()] };
    node = next;
  }
  return { ok: true, node, path: [...segs] };
}

function splitFlag(name: string): string[] {
  return name.split('.').map(toSnake);
}

/** Parse `argv` against the schema tree. Never throws for user input; problems go to `issues`. */
export function parseArgv(argv: readonly string[], root: SectionNode, renames: readonly Rename[]): ParsedArgv {
  const out: ParsedArgv = {
    rootFiles: [],
    sectionFiles: [],
    ops: [],
    flags: { help: false, dryRun: false, explain: false, plain: false, jsonSchema: false },
    issues: [],
    renamed: [],
  };
  const stray: string[] = [];
  let i = 0;
  const next = () => argv[i + 1];

  while (i < argv.length) {
    const tok = argv[i]!;
    if (tok === '@') {
      const file = next();
      if (file === undefined) out.issues.push({ message: '@ must be followed by a config file path' });
      else out.rootFiles.push(file);
      i += 2;
      continue;
    }
    if (tok.startsWith('@')) {
      out.issues.push({
        message: `Config file not recognized: '${tok}'. Put a space after @ to load a file: @ ${tok.slice(1)}`,
      });
      i += 1;
      continue;
    }
    const meta = META_FLAGS[tok];
    if (meta) {
      out.flags[meta] = true;
      i += 1;
      continue;
    }
    if (!tok.startsWith('--') || tok === '--') {
      stray.push(tok);
      i += 1;
      continue;
    }

    // A flag: --name, --name=value, --no-name, --name @ file, --name @file
    const eq = tok.indexOf('=');
    const name = eq >= 0 ? tok.slice(2, eq) : tok.slice(2);
    const inline = eq >= 0 ? tok.slice(eq + 1) : undefined;
    const shown = `--${name}`;

    // Section file
    if (inline === undefined && (next() === '@' || (next()?.startsWith('@') && next() !== '@'))) {
      const glued = next() !== '@';
      const file = glued ? next()!.slice(1) : argv[i + 2];
      i += glued ? 2 : 3;
      if (file === undefined || file === '') {
        out.issues.push({ message: `@ after ${shown} must be followed by a config file path` });
        continue;
      }
      const segs = rename(splitFlag(name), shown, renames, out);
      const found = lookup(root, segs);
      if (!found.ok) {
        out.issues.push(unknownIssue(found, shown));
      } else if (!(found.node.kind === 'section' || found.node.kind === 'union')) {
        out.issues.push({
          label: shown,
          message: `is a single field, not a section: a config file can only be loaded into a section`,
        });
      } else {
        out.sectionFiles.push({ path: segs, file, flag: shown });
      }
      continue;
    }

    let segs = rename(splitFlag(name), shown, renames, out);
    let found = lookup(root, segs);
    let negated = false;
    if (!found.ok && name.startsWith('no-')) {
      const positive = rename(splitFlag(name.slice(3)), shown, renames, out);
      const alt = lookup(root, positive);
      if (alt.ok) {
        segs = positive;
        found = alt;
        negated = true;
      }
    }
    if (!found.ok) {
      let consumed: string | undefined = inline;
      if (consumed === undefined && isValue(next())) {
        consumed = next();
        i += 1;
      }
      const issue = unknownIssue(found, shown, consumed);
      out.issues.push(issue);
      i += 1;
      continue;
    }

    const node = found.node;
    const op = (value: CliValue) => out.ops.push({ path: segs, value, flag: shown });

    if (negated) {
      if (inline !== undefined) {
        out.issues.push({ label: shown, message: `a negated flag takes no value (got '${inline}')` });
      } else if (isBool(node)) op({ kind: 'raw', value: 'false' });
      else if ((node.kind === 'section' || node.kind === 'union') && node.nullable) op({ kind: 'none' });
      else {
        out.issues.push({
          label: shown,
          message: `only boolean fields and optional sections can be negated; --${toKebab(segs.join('.'))} is neither`,
        });
      }
      i += 1;
      continue;
    }

    // Boolean: an optional following literal.
    if (isBool(node)) {
      if (inline !== undefined) op({ kind: 'raw', value: inline });
      else if (next() !== undefined && (BOOL_LITERALS.has(next()!) || (next() === 'None' && node.nullable))) {
        op({ kind: 'raw', value: next()! });
        i += 1;
      } else op({ kind: 'raw', value: 'true' });
      i += 1;
      continue;
    }

    switch (node.kind) {
      case 'section':
      case 'union': {
        const value = inline ?? (isValue(next()) ? next() : undefined);
        if (value === undefined) op({ kind: 'enable' });
        else if (value === 'None') {
          op({ kind: 'none' });
          if (inline === undefined) i += 1;
        } else if (!node.nullable) {
          const subs = [...(childFields(node)?.keys() ?? [])].sort().slice(0, 5);
          out.issues.push({
            label: shown,
            message: `${shown} is a config group, not a leaf field. Try one of: ${subs.map((s) => `${shown}.${toKebab(s)}`).join(', ')}`,
          });
          if (inline === undefined) i += 1;
        } else if (inline !== undefined) {
          // An optional section takes no value but None; anything else is a stray argument.
          stray.push(inline);
        }
        i += 1;
        continue;
      }
      case 'list': {
        const itemIsTable = node.item.kind === 'section' || node.item.kind === 'union';
        let tokens: string[];
        if (inline !== undefined) tokens = [inline];
        else {
          tokens = [];
          while (isValue(argv[i + 1 + tokens.length])) tokens.push(argv[i + 1 + tokens.length]!);
        }
        i += 1 + (inline === undefined ? tokens.length : 0);
        if (itemIsTable) {
          if (tokens.length !== 1) {
            out.issues.push({
              label: shown,
              message: `takes one JSON list of tables (or use indexed flags such as ${shown}.0.<field>)`,
            });
          } else pushJson(tokens[0]!, shown, out, op, 'list');
          continue;
        }
        if (tokens.length === 1) {
          const t = tokens[0]!;
          if (t.trimStart().startsWith('[')) pushJson(t, shown, out, op, 'list');
          else if (t === 'None') op({ kind: 'none' });
          else op({ kind: 'list', items: t.includes(',') ? t.split(',').map((s) => s.trim()) : [t] });
        } else op({ kind: 'list', items: tokens });
        continue;
      }
      case 'dict': {
        const value = inline ?? (isValue(next()) ? next() : undefined);
        if (inline === undefined && value !== undefined) i += 1;
        i += 1;
        if (value === undefined)
          out.issues.push({ label: shown, message: `${shown} requires a value (a JSON object)` });
        else if (value === 'None') op({ kind: 'none' });
        else pushJson(value, shown, out, op, 'object');
        continue;
      }
      default: {
        const value = inline ?? (isValue(next()) ? next() : undefined);
        if (inline === undefined && value !== undefined) i += 1;
        i += 1;
        if (value === undefined) {
          out.issues.push({ message: `${shown} requires a value` });
        } else if (node.kind === 'any' && /^\s*[[{]/.test(value)) pushJson(value, shown, out, op, 'any');
        else op({ kind: 'raw', value });
      }
    }
  }
  if (stray.length > 0) out.issues.push({ message: `Unrecognized arguments: ${stray.join(' ')}` });
  return out;
}

function rename(segs: string[], flag: string, renames: readonly Rename[], out: ParsedArgv): string[] {
  const r = renamePath(segs, renames);
  if (r.rename) out.renamed.push({ rename: r.rename, flag });
  return r.path;
}

function pushJson(
  text: string,
  flag: string,
  out: ParsedArgv,
  op: (v: CliValue) => void,
  want: 'list' | 'object' | 'any',
): void {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    out.issues.push({ label: flag, message: `Invalid JSON: ${(err as Error).message} (got '${text}')` });
    return;
  }
  if (want === 'object') {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      out.issues.push({ label: flag, message: `expects a JSON object such as '{"key": "value"}' (got '${text}')` });
      return;
    }
    op({ kind: 'mergeDict', value: value as Record<string, unknown> });
    return;
  }
  if (want === 'list' && !Array.isArray(value)) {
    out.issues.push({ label: flag, message: `expects a JSON list (got '${text}')` });
    return;
  }
  op({ kind: 'json', value });
}

function unknownIssue(found: Extract<Lookup, { ok: false }>, shown: string, consumed?: string): ConfigIssue {
  const got = consumed === undefined ? '' : ` (got '${consumed}')`;
  if (found.leaf !== undefined) {
    return {
      label: shown,
      message: `Unknown field: --${toKebab(found.leaf)} is a single value, it has no sub-fields${got}`,
    };
  }
  const seg = found.path[found.depth]!;
  const prefix = found.path.slice(0, found.depth);
  const suggestion = closest(seg, found.siblings);
  const hint = suggestion ? `. Did you mean --${[...prefix, suggestion].map(toKebab).join('.')}?` : '';
  return { label: shown, message: `Unknown field: extra inputs are not permitted${got}${hint}` };
}
