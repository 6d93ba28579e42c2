// Helpers for writing config schemas with zod. They only fix conventions the resolver relies on:
// every section is strict (unknown keys are errors), sections fill their own defaults, optional
// sections are `T | null`, and discriminated unions are tagged by `type`.
import { z } from 'zod';

export { z };

/** Extra facts about a field that the resolver reads from the JSON Schema (`x-prime-*` keys). */
export interface FieldMeta {
  /** Help text. */
  description?: string;
  /**
   * The product does not implement this capability yet: any value other than the default is
   * rejected with "<what> is not supported yet".
   */
  unsupported?: string;
  /** Relative paths given in a file are resolved against that file's directory (not the CWD). */
  relativeToFile?: boolean;
  /** A secret: never echoed in errors, `--explain` or dumped configs. */
  secret?: boolean;
}

/** Attach {@link FieldMeta} to any schema. */
export function meta<T extends z.ZodType>(schema: T, m: FieldMeta): T {
  const out: Record<string, unknown> = {};
  if (m.description !== undefined) out.description = m.description;
  if (m.unsupported !== undefined) out['x-prime-unsupported'] = m.unsupported;
  if (m.relativeToFile) out['x-prime-relative-to-file'] = true;
  if (m.secret) out['x-prime-secret'] = true;
  return schema.meta(out) as T;
}

type Shape = z.ZodRawShape;

/** A required table whose fields all have defaults: absent → filled with defaults. */
export function section<S extends Shape>(shape: S, description?: string) {
  const s = z.strictObject(shape).prefault({} as never);
  return description ? s.describe(description) : s;
}

/** A required table that must be given (no default), e.g. `rl.trainer`. */
export function requiredSection<S extends Shape>(shape: S, description?: string) {
  const s = z.strictObject(shape);
  return description ? s.describe(description) : s;
}

/**
 * An optional section (`Section | None`). Disabled (null) by default unless `enabled` is true.
 * A bare CLI flag or an empty TOML header enables it with defaults.
 */
export function optionalSection<S extends Shape>(
  shape: S | z.ZodObject<S>,
  opts: { enabled?: boolean; description?: string } = {},
) {
  const obj = shape instanceof z.ZodObject ? shape : z.strictObject(shape);
  const nullable = obj.nullable();
  const s = opts.enabled ? nullable.prefault({} as never) : nullable.default(null);
  return opts.description ? s.describe(opts.description) : s;
}

/** One variant of a discriminated union: a strict table whose `type` is the literal tag. */
export function variant<T extends string, S extends Shape>(tag: T, shape: S, description?: string) {
  const s = z.strictObject({ type: z.literal(tag), ...shape });
  return description ? s.describe(description) : s;
}

type Variant = z.ZodObject<{ type: z.ZodLiteral<string> } & Shape>;

/**
 * A discriminated union selected by `type`. Omitting `type` keeps the default variant (or the
 * variant a lower layer chose).
 */
export function union<V extends readonly [Variant, ...Variant[]]>(
  variants: V,
  defaultTag: z.output<V[number]>['type'],
  description?: string,
) {
  const s = z.discriminatedUnion('type', variants as never as [Variant, ...Variant[]]).prefault({
    type: defaultTag,
  } as never) as unknown as z.ZodDefault<z.ZodDiscriminatedUnion<[...V]>>;
  return description ? s.describe(description) : s;
}

/** An optional discriminated union, disabled (null) by default. A table must name its `type`. */
export function optionalUnion<V extends readonly [Variant, ...Variant[]]>(variants: V, description?: string) {
  const s = z
    .discriminatedUnion('type', variants as never as [Variant, ...Variant[]])
    .nullable()
    .default(null) as unknown as z.ZodDefault<z.ZodNullable<z.ZodDiscriminatedUnion<[...V]>>>;
  return description ? s.describe(description) : s;
}

/** A free-form table (`dict[str, Any]`): deep-merged across layers, JSON on the CLI. */
export function dict(description?: string) {
  const s = z.record(z.string(), z.unknown()).default({});
  return description ? s.describe(description) : s;
}

/** A table of strings (`dict[str, str]`), e.g. HTTP headers. */
export function stringDict(description?: string) {
  const s = z.record(z.string(), z.string()).default({});
  return description ? s.describe(description) : s;
}
