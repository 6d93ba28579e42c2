// The resolution pipeline:
//   defaults < PRIME_* env < extra layers < `@ file` layers (left to right) < `--section @ file`
//   < CLI flags (in order), then "None"/tags/unknown keys/coercion, then the schema, then the
//   cross-field validators, then the "not supported yet" check. Every problem is collected and
//   reported at once.
import path from 'node:path';
import { applyOp } from './apply.js';
import { lookup, parseArgv, type ParsedArgv } from './argv.js';
import { coerceTree } from './coerce.js';
import { envLayer } from './env.js';
import { loadConfigFile, setOwn } from './files.js';
import { ConfigError, describeSource, type ConfigIssue } from './issues.js';
import { isTable, mergeInto, Provenance, type Table } from './merge.js';
import { dotted } from './names.js';
import { renameTable, renameWarning } from './renames.js';
import { childFields, treeOf, type Node, type SectionNode } from './tree.js';
import type { ConfigPath, ConfigSpec, Resolved, ResolveOptions, Source, ValidationContext } from './types.js';
import { fromZod } from './zod-issues.js';
import type { z } from 'zod';

/** Raw layers merged, before validation. */
export interface Collected {
  data: Table;
  prov: Provenance;
  issues: ConfigIssue[];
  /** Problems loading files: these win over `--help`. */
  fileIssues: ConfigIssue[];
  warnings: string[];
  flags: ParsedArgv['flags'];
  root: SectionNode;
}

/** Parse argv, read env and files, and merge everything into one raw tree. */
export function collect(spec: ConfigSpec, opts: ResolveOptions = {}): Collected {
  const root = treeOf(spec.schema);
  const renames = spec.renames ?? [];
  const cwd = opts.cwd ?? process.cwd();
  const env = opts.env ?? process.env;
  const prefix = spec.envPrefix === undefined ? 'PRIME_' : spec.envPrefix;
  const prov = new Provenance();
  const data: Table = {};
  const warnings: string[] = [];
  const fileIssues: ConfigIssue[] = [];
  const warnOnce = (w: string | undefined) => {
    if (w && !warnings.includes(w)) warnings.push(w);
  };

  const parsed = parseArgv(opts.argv ?? [], root, renames);
  for (const r of parsed.renamed) warnOnce(renameWarning(r.rename, r.flag));
  const issues: ConfigIssue[] = [...parsed.issues];

  if (prefix !== null) {
    const layer = envLayer(env, prefix, root, renames);
    issues.push(...layer.issues);
    for (const r of layer.renamed) warnOnce(renameWarning(r.rename, `env ${r.variable}`));
    for (const entry of layer.entries) mergeInto(data, entry.data, { kind: 'env', variable: entry.variable }, prov);
  }

  const addLayer = (raw: Table, source: Source, baseDir: string | undefined, under: string[] = []) => {
    const found = lookup(root, under);
    const layerRoot = found.ok ? found.node : undefined;
    for (const applied of renameTable(raw, layerRenames(renames, under))) {
      warnOnce(renameWarning(applied.rename, describeSource(source), applied.bothSet));
    }
    if (baseDir && layerRoot) resolveRelativePaths(raw, layerRoot, baseDir);
    let nested: Table = raw;
    for (const seg of [...under].reverse()) nested = { [seg]: nested };
    mergeInto(data, nested, source, prov);
  };

  for (const layer of opts.layers ?? []) addLayer(structuredClone(layer.data), layer.source, layer.baseDir);

  const load = (file: string): Table | undefined => {
    const r = loadConfigFile(file, cwd);
    if (r.ok) return r.data;
    fileIssues.push({ message: r.message });
    return undefined;
  };
  for (const file of parsed.rootFiles) {
    const raw = load(file);
    if (raw) addLayer(raw, { kind: 'file', file }, path.dirname(path.resolve(cwd, file)));
  }
  // Section files: grouped by section in order of first appearance, each group's files left to right.
  const groups = new Map<string, Array<{ path: string[]; file: string }>>();
  for (const s of parsed.sectionFiles) {
    const key = s.path.join('.');
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key)!.push(s);
  }
  for (const group of groups.values()) {
    for (const s of group) {
      const raw = load(s.file);
      if (raw) addLayer(raw, { kind: 'file', file: s.file }, path.dirname(path.resolve(cwd, s.file)), s.path);
    }
  }

  for (const op of parsed.ops) applyOp(data, op, root, prov, issues);

  return { data, prov, issues: [...fileIssues, ...issues], fileIssues, warnings, flags: parsed.flags, root };
}

/** Validate a collected tree: coercion, schema, cross-field validators, unsupported values. */
export function finish<S extends z.ZodType>(spec: ConfigSpec<S>, c: Collected): Resolved<z.output<S>> {
  const issues = [...c.issues];
  const { value, issues: structural } = coerceTree(c.data, c.root, c.prov);
  issues.push(...structural);
  const reported = new Set(structural.map((i) => dotted(i.path ?? [])));

  const parsed = spec.schema.safeParse(value);
  if (!parsed.success) {
    for (const zi of parsed.error.issues) {
      const issue = fromZod(zi, value, c.data, c.prov);
      const key = dotted(issue.path ?? []);
      // A value the structural pass already reported (and dropped) must not be reported twice.
      if ([...reported].some((r) => key === r || key.startsWith(`${r}.`) || r.startsWith(`${key}.`))) continue;
      issues.push(issue);
    }
  }
  if (issues.length > 0 || !parsed.success) throw new ConfigError(issues, spec.name);

  const config = parsed.data as z.output<S>;
  const warnings = [...c.warnings];
  const ctx = context([], issues, warnings, c.prov);
  const beforeValidators = structuredClone(config);
  for (const validator of spec.validators ?? []) validator(config, ctx);
  // The typed config passed the schema, so this check is safe even when a validator complained.
  checkUnsupported(config, c.root, [], issues, c.prov);
  if (issues.length > 0) throw new ConfigError(issues, spec.name);

  const sources = new Map(c.prov.entries());
  for (const changed of changedPaths(beforeValidators, config)) sources.set(changed, { kind: 'validator' });
  return { config, warnings, sources, flags: c.flags };
}

/** Dotted paths of the leaves that differ between two versions of a config. */
function changedPaths(before: unknown, after: unknown, prefix = ''): string[] {
  if (isTable(before) && isTable(after)) {
    const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
    return [...keys].flatMap((k) => changedPaths(before[k], after[k], prefix ? `${prefix}.${k}` : k));
  }
  if (Array.isArray(before) && Array.isArray(after) && before.length === after.length) {
    return before.flatMap((b, i) => changedPaths(b, after[i], prefix ? `${prefix}.${i}` : String(i)));
  }
  if (isTable(after)) return changedPaths({}, after, prefix).concat(prefix ? [prefix] : []);
  return sameValue(before, after) ? [] : [prefix];
}

/** Resolve a config from argv, env and files. Throws {@link ConfigError} listing every problem. */
export function resolveConfig<S extends z.ZodType>(
  spec: ConfigSpec<S>,
  opts: ResolveOptions = {},
): Resolved<z.output<S>> {
  return finish(spec, collect(spec, opts));
}

function context(prefix: ConfigPath, issues: ConfigIssue[], warnings: string[], prov: Provenance): ValidationContext {
  return {
    error(p, message) {
      issues.push({ path: [...prefix, ...p], message });
    },
    warn(message) {
      if (!warnings.includes(message)) warnings.push(message);
    },
    isSet(p) {
      const key = dotted([...prefix, ...p]);
      for (const k of prov.entries().keys()) if (k === key || k.startsWith(`${key}.`)) return true;
      return false;
    },
    at(p) {
      return context([...prefix, ...p], issues, warnings, prov);
    },
  };
}

/** Renames whose old path lies under `under`, re-rooted there (for section files). */
function layerRenames(renames: ConfigSpec['renames'] & object, under: readonly string[]) {
  if (under.length === 0) return renames;
  const prefix = `${under.join('.')}.`;
  return renames
    .filter((r) => r.from.startsWith(prefix) && r.to.startsWith(prefix))
    .map((r) => ({ ...r, from: r.from.slice(prefix.length), to: r.to.slice(prefix.length) }));
}

/** Fields marked `relativeToFile` hold paths relative to the file that sets them: make them absolute. */
function resolveRelativePaths(data: unknown, node: Node, baseDir: string): void {
  if (!isTable(data) && !Array.isArray(data)) return;
  const fix = (v: unknown) => (typeof v === 'string' && v !== 'None' && v !== '' ? path.resolve(baseDir, v) : v);
  if (node.kind === 'section' || node.kind === 'union') {
    if (!isTable(data)) return;
    for (const [k, v] of Object.entries(data)) {
      const field = childFields(node)?.get(k);
      if (!field) continue;
      if (field.relativeToFile) {
        setOwn(data, k, Array.isArray(v) ? v.map(fix) : fix(v));
      } else resolveRelativePaths(v, field, baseDir);
    }
  } else if (node.kind === 'list' && Array.isArray(data)) {
    for (const item of data) resolveRelativePaths(item, node.item, baseDir);
  }
}

/** Capabilities the product does not have yet: any non-default value is an error. */
function checkUnsupported(value: unknown, node: Node, p: ConfigPath, issues: ConfigIssue[], prov: Provenance): void {
  if (node.unsupported !== undefined && node.hasDefault && !sameValue(value, node.default)) {
    const shown = typeof value === 'object' && value !== null ? 'enabled' : JSON.stringify(value);
    const source = prov.lookup(dotted(p));
    issues.push({
      path: p,
      message: `${node.unsupported} is not supported yet (got ${shown}; only the default ${JSON.stringify(node.default)} works)`,
      ...(source ? { source } : {}),
    });
    return;
  }
  if (value === null || value === undefined) return;
  if (node.kind === 'section' && isTable(value)) {
    for (const [k, f] of node.fields) checkUnsupported(value[k], f, [...p, k], issues, prov);
  } else if (node.kind === 'union' && isTable(value)) {
    const v = node.variants.get(String(value[node.discriminator]));
    if (v) for (const [k, f] of v.fields) checkUnsupported(value[k], f, [...p, k], issues, prov);
  } else if (node.kind === 'list' && Array.isArray(value)) {
    value.forEach((item, i) => checkUnsupported(item, node.item, [...p, i], issues, prov));
  }
}

/** Deep equality of config values, where a section default `{}` equals any all-default table. */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a === 'number' && typeof b === 'number') return Number.isNaN(a) && Number.isNaN(b);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => sameValue(x, b[i]));
  if (isTable(a) && isTable(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].every((k) => !(k in b) || sameValue(a[k], b[k]));
  }
  return false;
}
