// The resolver's view of a schema: a small tree of node kinds built from the schema's JSON Schema.
// Working from JSON Schema (not zod internals) keeps the resolver on a documented, stable format,
// and it is the same document editors get for TOML validation.
import { z } from 'zod';

export type ScalarType =
  | { t: 'int' }
  | { t: 'float' }
  | { t: 'bool' }
  | { t: 'string' }
  | { t: 'enum'; values: ReadonlyArray<string | number | boolean> };

interface NodeBase {
  description?: string;
  /** The default value, when the field has one. */
  default?: unknown;
  hasDefault: boolean;
  /** `X | None`. */
  nullable: boolean;
  unsupported?: string;
  relativeToFile?: boolean;
  secret?: boolean;
  /** Numeric bounds, for help text. */
  bounds?: string;
}

export interface ScalarNode extends NodeBase {
  kind: 'scalar';
  types: ScalarType[];
}
export interface SectionNode extends NodeBase {
  kind: 'section';
  fields: Map<string, Node>;
  required: Set<string>;
}
export interface UnionNode extends NodeBase {
  kind: 'union';
  discriminator: string;
  variants: Map<string, SectionNode>;
  defaultTag?: string;
}
export interface ListNode extends NodeBase {
  kind: 'list';
  item: Node;
}
export interface DictNode extends NodeBase {
  kind: 'dict';
  /** Value schema; `any` for free-form tables. */
  value: Node;
}
export interface AnyNode extends NodeBase {
  kind: 'any';
}

export type Node = ScalarNode | SectionNode | UnionNode | ListNode | DictNode | AnyNode;

type Json = Record<string, unknown>;

const cache = new WeakMap<z.ZodType, { tree: SectionNode; jsonSchema: Json }>();

/** JSON Schema (draft 2020-12) of a config schema, describing what a config file may contain. */
export function jsonSchemaOf(schema: z.ZodType): Json {
  return analyse(schema).jsonSchema;
}

/** The node tree of a root config schema (cached per schema). */
export function treeOf(schema: z.ZodType): SectionNode {
  return analyse(schema).tree;
}

function analyse(schema: z.ZodType) {
  let hit = cache.get(schema);
  if (!hit) {
    const jsonSchema = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Json;
    const root = build(jsonSchema);
    if (root.kind !== 'section') throw new Error('a root config schema must be an object');
    hit = { tree: root, jsonSchema };
    cache.set(schema, hit);
  }
  return hit;
}

function build(js: Json): Node {
  const base: NodeBase = { hasDefault: 'default' in js, nullable: false };
  if ('default' in js) base.default = js.default;
  if (typeof js.description === 'string') base.description = js.description;
  if (typeof js['x-prime-unsupported'] === 'string') base.unsupported = js['x-prime-unsupported'];
  if (js['x-prime-relative-to-file'] === true) base.relativeToFile = true;
  if (js['x-prime-secret'] === true) base.secret = true;

  const alternatives = (js.anyOf ?? js.oneOf) as Json[] | undefined;
  if (alternatives) {
    const nonNull = alternatives.filter((a) => a.type !== 'null');
    const nullable = nonNull.length < alternatives.length;
    if (nonNull.length === 1) {
      const inner = build(nonNull[0]!);
      return withBase(inner, base, nullable);
    }
    const asUnion = tryUnion(nonNull);
    if (asUnion) {
      const node: UnionNode = { ...base, kind: 'union', nullable, ...asUnion };
      const tag = (base.default as Json | null | undefined)?.[asUnion.discriminator];
      if (typeof tag === 'string') node.defaultTag = tag;
      return node;
    }
    const inner = nonNull.map(build);
    if (inner.every((n) => n.kind === 'scalar')) {
      const types = inner.flatMap((n) => (n as ScalarNode).types);
      return { ...base, kind: 'scalar', nullable, types };
    }
    return { ...base, kind: 'any', nullable };
  }
  if (js.type === 'null') return { ...base, kind: 'any', nullable: true };
  if (Array.isArray(js.type)) {
    // `type: ["number", "null"]`: the compact form of a nullable scalar.
    const types = (js.type as string[]).filter((t) => t !== 'null');
    const nullable = types.length < js.type.length;
    const { default: _default, ...rest } = js;
    const alternatives = types.map((t) => build({ ...rest, type: t }));
    if (alternatives.length === 1) return withBase(alternatives[0]!, base, nullable);
    if (alternatives.every((n) => n.kind === 'scalar')) {
      return { ...base, kind: 'scalar', nullable, types: alternatives.flatMap((n) => (n as ScalarNode).types) };
    }
    return { ...base, kind: 'any', nullable };
  }

  switch (js.type) {
    case 'object': {
      const props = js.properties as Record<string, Json> | undefined;
      if (props || js.additionalProperties === false) {
        const fields = new Map<string, Node>();
        for (const [k, v] of Object.entries(props ?? {})) fields.set(k, build(v));
        return { ...base, kind: 'section', fields, required: new Set((js.required as string[]) ?? []) };
      }
      const add = js.additionalProperties as Json | undefined;
      const value: Node =
        add && Object.keys(add).length > 0 ? build(add) : { kind: 'any', hasDefault: false, nullable: true };
      return { ...base, kind: 'dict', value };
    }
    case 'array':
      return {
        ...base,
        kind: 'list',
        item: js.items ? build(js.items as Json) : { kind: 'any', hasDefault: false, nullable: true },
      };
    case 'integer':
      return { ...base, kind: 'scalar', types: [{ t: 'int' }], ...bounds(js) };
    case 'number':
      return { ...base, kind: 'scalar', types: [{ t: 'float' }], ...bounds(js) };
    case 'boolean':
      return { ...base, kind: 'scalar', types: [{ t: 'bool' }] };
    case 'string':
      if (Array.isArray(js.enum)) return { ...base, kind: 'scalar', types: [{ t: 'enum', values: js.enum }] };
      if ('const' in js) return { ...base, kind: 'scalar', types: [{ t: 'enum', values: [js.const as string] }] };
      return { ...base, kind: 'scalar', types: [{ t: 'string' }] };
    default:
      if (Array.isArray(js.enum)) return { ...base, kind: 'scalar', types: [{ t: 'enum', values: js.enum }] };
      return { ...base, kind: 'any', nullable: true };
  }
}

function withBase(inner: Node, base: NodeBase, nullable: boolean): Node {
  const merged = { ...inner, nullable: inner.nullable || nullable, hasDefault: base.hasDefault || inner.hasDefault };
  if (base.hasDefault) merged.default = base.default;
  for (const key of ['description', 'unsupported', 'relativeToFile', 'secret'] as const) {
    if (base[key] !== undefined) (merged as Record<string, unknown>)[key] = base[key];
  }
  return merged as Node;
}

const SAFE = 9007199254740991;
function bounds(js: Json): { bounds?: string } {
  const parts: string[] = [];
  if (typeof js.minimum === 'number' && js.minimum !== -SAFE) parts.push(`>=${js.minimum}`);
  if (typeof js.exclusiveMinimum === 'number') parts.push(`>${js.exclusiveMinimum}`);
  if (typeof js.maximum === 'number' && js.maximum !== SAFE) parts.push(`<=${js.maximum}`);
  if (typeof js.exclusiveMaximum === 'number') parts.push(`<${js.exclusiveMaximum}`);
  return parts.length ? { bounds: parts.join(', ') } : {};
}

function tryUnion(alternatives: Json[]): { discriminator: string; variants: Map<string, SectionNode> } | undefined {
  if (alternatives.length === 0) return undefined;
  const variants = new Map<string, SectionNode>();
  for (const alt of alternatives) {
    const tag = (alt.properties as Record<string, Json> | undefined)?.type;
    if (alt.type !== 'object' || !tag || typeof tag.const !== 'string') return undefined;
    const node = build(alt);
    if (node.kind !== 'section') return undefined;
    variants.set(tag.const, node);
  }
  return { discriminator: 'type', variants };
}

/** The fields reachable below a node for path lookups (all variants of a union together). */
export function childFields(node: Node, preferTag?: string): Map<string, Node> | undefined {
  if (node.kind === 'section') return node.fields;
  if (node.kind === 'union') {
    const out = new Map<string, Node>();
    const order = [...node.variants.entries()];
    const first = preferTag ?? node.defaultTag;
    order.sort(([a], [b]) => (a === first ? -1 : b === first ? 1 : 0));
    for (const [, v] of order) for (const [k, f] of v.fields) if (!out.has(k)) out.set(k, f);
    return out;
  }
  return undefined;
}

export function isBool(node: Node): boolean {
  return node.kind === 'scalar' && node.types.some((t) => t.t === 'bool');
}
