// `--help`: every field with its type, description and default, one panel per section,
// per optional section, per union variant and per list-of-sections item.
import { toKebab } from './names.js';
import { treeOf, type Node, type ScalarType, type SectionNode } from './tree.js';
import type { ConfigSpec } from './types.js';

interface Row {
  flag: string;
  text: string;
}
interface Panel {
  title: string;
  rows: Row[];
}

export function helpText(spec: ConfigSpec): string {
  const root = treeOf(spec.schema);
  const panels: Panel[] = [];
  const options: Panel = {
    title: 'options',
    rows: [
      { flag: '-h, --help', text: 'show this help message and exit' },
      { flag: '@ FILE', text: 'load a config file (.toml, .json, .yaml); several are merged left to right' },
      { flag: '--SECTION @ FILE', text: 'load a config file into one section, e.g. --trainer @ train.toml' },
      { flag: '--dry-run', text: 'validate, write the resolved config(s) as TOML to <output_dir>/configs/ and exit' },
      { flag: '--explain', text: 'print every resolved value with the source that set it, and exit' },
      { flag: '--json-schema', text: 'print the JSON Schema of this config (for editor validation) and exit' },
      { flag: '--plain', text: 'no colours in messages' },
    ],
  };
  panels.push(options);
  sectionPanels(root, [], options, panels);

  const width = Math.min(40, Math.max(...panels.flatMap((p) => p.rows.map((r) => r.flag.length))) + 2);
  const out: string[] = [`usage: ${spec.prog} [-h] [@ FILE] [OPTIONS]`, ''];
  if (spec.description) out.push(spec.description, '');
  out.push(
    `Values come from (highest first): CLI flags > @ files (later wins) > ${spec.envPrefix === null ? '' : `${spec.envPrefix ?? 'PRIME_'}* environment variables > `}defaults.`,
    '',
  );
  for (const p of panels) {
    if (p.rows.length === 0) continue;
    out.push(`${p.title}:`);
    for (const r of p.rows) {
      const pad = r.flag.length + 2 <= width ? r.flag.padEnd(width) : `${r.flag}\n${' '.repeat(width + 2)}`;
      out.push(`  ${pad}${r.text}`);
    }
    out.push('');
  }
  return out.join('\n');
}

function sectionPanels(node: SectionNode, path: string[], panel: Panel, panels: Panel[], skip?: string): void {
  const nested: Array<() => void> = [];
  for (const [name, field] of node.fields) {
    if (name === skip) continue;
    const p = [...path, name];
    const flag = `--${p.map(toKebab).join('.')}`;
    const dot = p.join('.');
    if (field.kind === 'section') {
      const title = field.nullable
        ? `${dot} (optional, ${field.hasDefault && field.default !== null ? 'enabled by default' : 'default: None'})`
        : field.description
          ? `${dot}: ${field.description.replace(/\.$/, '')}`
          : `${dot} options`;
      nested.push(() => {
        const sub: Panel = { title, rows: [] };
        if (field.nullable) {
          sub.rows.push({
            flag: `${flag}, --no-${flag.slice(2)}`,
            text: `${field.description ? `${field.description.replace(/\.$/, '')}. ` : ''}Enable with defaults / disable`,
          });
        }
        panels.push(sub);
        sectionPanels(field, p, sub, panels);
      });
    } else if (field.kind === 'union') {
      nested.push(() => {
        const tags = [...field.variants.keys()];
        const head: Panel = {
          title: `${dot}${field.nullable ? ' (optional, default: None)' : ''}${field.description ? `: ${field.description.replace(/\.$/, '')}` : ''}`,
          rows: [
            {
              flag: `${flag}.type {${tags.join(',')}}`,
              text: `variant${field.defaultTag ? ` (default: ${field.defaultTag}; omitting type keeps the current variant)` : ''}`,
            },
          ],
        };
        panels.push(head);
        for (const [tag, v] of field.variants) {
          const sub: Panel = { title: `${dot} variant: ${tag}`, rows: [] };
          panels.push(sub);
          sectionPanels(v, p, sub, panels, 'type');
        }
      });
    } else if (field.kind === 'list' && (field.item.kind === 'section' || field.item.kind === 'union')) {
      panel.rows.push({ flag: `${flag} ${typeToken(field)}`, text: annotate(field) });
      const item = field.item;
      nested.push(() => {
        const sub: Panel = { title: `${dot}[*] (list item, via @ file, JSON, or ${flag}.N.<field>)`, rows: [] };
        panels.push(sub);
        if (item.kind === 'section') sectionPanels(item, [...p, 'N'], sub, panels);
        else {
          for (const [tag, v] of item.variants) {
            const vp: Panel = { title: `${dot}[*] variant: ${tag}`, rows: [] };
            panels.push(vp);
            sectionPanels(v, [...p, 'N'], vp, panels, 'type');
          }
        }
      });
    } else {
      panel.rows.push({ flag: `${flag} ${typeToken(field)}`, text: annotate(field) });
    }
  }
  for (const n of nested) n();
}

function annotate(node: Node): string {
  const parts: string[] = [];
  if (node.description) parts.push(node.description);
  let d: string;
  if (!node.hasDefault) d = 'required';
  else d = `default: ${render(node.default)}`;
  if (node.bounds) d += `; ${node.bounds}`;
  if (node.unsupported) d += `; not supported yet: ${node.unsupported}`;
  if (node.relativeToFile) d += '; relative to the file that sets it';
  parts.push(parts.length ? `(${d})` : d);
  return parts.join(' ');
}

function render(v: unknown): string {
  if (v === null) return 'None';
  if (typeof v === 'string') return v === '' ? "''" : v;
  return JSON.stringify(v);
}

function scalarToken(t: ScalarType): string {
  switch (t.t) {
    case 'int':
      return 'INT';
    case 'float':
      return 'FLOAT';
    case 'bool':
      return '{true,false}';
    case 'string':
      return 'STR';
    case 'enum':
      return `{${t.values.join(',')}}`;
  }
}

export function typeToken(node: Node): string {
  let s: string;
  switch (node.kind) {
    case 'scalar':
      s = node.types.map(scalarToken).join('|');
      break;
    case 'list':
      if (node.item.kind === 'section') {
        const names = [...node.item.fields.keys()];
        s = `list[{${names.slice(0, 3).join(', ')}${names.length > 3 ? ', ...' : ''}}]`;
      } else if (node.item.kind === 'union') s = 'list[{type, ...}]';
      else s = `[${typeToken(node.item)} [...]]`;
      break;
    case 'dict':
      s = 'JSON';
      break;
    case 'section':
    case 'union':
      s = 'SECTION';
      break;
    case 'any':
      s = 'VALUE';
      break;
  }
  return node.nullable && node.kind !== 'any' ? `${s}|None` : s;
}
