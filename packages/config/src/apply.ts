// Applying command-line overrides to the merged file/env layers, in the order they were given.
import type { CliOp } from './argv.js';
import { setOwn } from './files.js';
import type { ConfigIssue } from './issues.js';
import { clone, isTable, mergeInto, type Provenance, type Table } from './merge.js';
import { isIndex, toKebab } from './names.js';
import { childFields, type Node, type SectionNode } from './tree.js';

const NONE = 'None';

/** Apply one CLI override. Indexed list paths edit the list as merged so far, element by element. */
export function applyOp(data: Table, op: CliOp, root: SectionNode, prov: Provenance, issues: ConfigIssue[]): void {
  const source = { kind: 'cli', flag: op.flag } as const;
  let container: Table | unknown[] = data;
  let node: Node = root;
  const done: string[] = [];

  for (let i = 0; i < op.path.length - 1; i++) {
    const seg = op.path[i]!;
    const nextSeg = op.path[i + 1]!;
    const childNode = childOf(node, seg);
    let child = getChild(container, seg);
    if (childNode?.kind === 'list' && isIndex(nextSeg)) {
      if (!Array.isArray(child)) {
        child = Array.isArray(childNode.default) ? clone(childNode.default) : [];
        setChild(container, seg, child);
      }
      const list = child as unknown[];
      const index = Number(nextSeg);
      if (index > list.length) {
        const where = `--${[...done, seg].map(toKebab).join('.')}`;
        issues.push({
          label: op.flag,
          message: `index ${index} out of range for ${where} (length ${list.length}); indices must be contiguous`,
          source,
        });
        return;
      }
      if (index === list.length) list.push({});
      if (!isTable(list[index])) list[index] = {};
      container = list;
      node = childNode;
      done.push(seg);
      continue;
    }
    if (!isTable(child)) {
      // Setting a field below a disabled (or absent) section enables it.
      child = {};
      setChild(container, seg, child);
    }
    container = child as Table;
    node = childNode ?? { kind: 'any', hasDefault: false, nullable: true };
    done.push(seg);
  }

  const last = op.path.at(-1)!;
  const dotted = op.path.join('.');
  const v = op.value;
  switch (v.kind) {
    case 'raw':
      setChild(container, last, v.value);
      prov.replace(dotted, v.value, source);
      return;
    case 'list':
      setChild(container, last, v.items);
      prov.replace(dotted, v.items, source);
      return;
    case 'json':
      setChild(container, last, v.value);
      prov.replace(dotted, v.value, source);
      return;
    case 'none':
      setChild(container, last, NONE);
      prov.replace(dotted, NONE, source);
      return;
    case 'enable': {
      const cur = getChild(container, last);
      if (!isTable(cur)) setChild(container, last, {});
      prov.record(dotted, {}, source);
      return;
    }
    case 'mergeDict': {
      let cur = getChild(container, last);
      if (!isTable(cur)) {
        cur = {};
        setChild(container, last, cur);
      }
      mergeInto(cur as Table, v.value, source, prov, dotted);
      return;
    }
  }
}

function childOf(node: Node, seg: string): Node | undefined {
  if (node.kind === 'list') return node.item;
  if (node.kind === 'dict') return node.value;
  return childFields(node)?.get(seg);
}

function getChild(container: Table | unknown[], seg: string): unknown {
  return Array.isArray(container) ? container[Number(seg)] : container[seg];
}

function setChild(container: Table | unknown[], seg: string, value: unknown): void {
  if (Array.isArray(container)) container[Number(seg)] = value;
  else setOwn(container, seg, value);
}
