// The JSON Schema editors use to validate and complete TOML configs (taplo / Even Better TOML:
// put `#:schema ./path/to/rl.schema.json` on the first line of a config file).
import type { z } from 'zod';
import { jsonSchemaOf } from './tree.js';

type Json = Record<string, unknown>;

/**
 * The schema of what a config *file* may contain: like the zod schema's JSON Schema, but
 * `"None"` is accepted wherever null is (TOML has no null), and a union's default variant
 * does not require `type` (omitting it keeps the default).
 */
export function editorSchema(schema: z.ZodType, title?: string): Json {
  const out = adapt(structuredClone(jsonSchemaOf(schema))) as Json;
  if (title) out.title = title;
  return out;
}

function adapt(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(adapt);
  if (!node || typeof node !== 'object') return node;
  let js = node as Json;
  for (const [k, v] of Object.entries(js)) js[k] = adapt(v);
  if (Array.isArray(js.type) && js.type.includes('null')) {
    // `type: [number, null]` → anyOf, so that the "None" alternative can be added below.
    const { type, default: dflt, description, ...constraints } = js;
    const nonNull = (type as string[]).filter((t) => t !== 'null');
    js = {
      ...(dflt !== undefined ? { default: dflt } : {}),
      ...(description !== undefined ? { description } : {}),
      anyOf: [{ type: nonNull.length === 1 ? nonNull[0] : nonNull, ...constraints }, { type: 'null' }],
    };
  }
  for (const key of ['anyOf', 'oneOf'] as const) {
    const alts = js[key] as Json[] | undefined;
    if (!alts) continue;
    if (alts.some((a) => a.type === 'null')) alts.push({ const: 'None', description: 'null (TOML has no null)' });
    const tag = (js.default as Json | undefined)?.type;
    if (typeof tag === 'string') {
      for (const alt of alts) {
        const t = (alt.properties as Record<string, Json> | undefined)?.type;
        if (t?.const === tag && Array.isArray(alt.required)) alt.required = alt.required.filter((r) => r !== 'type');
      }
    }
  }
  return js;
}
