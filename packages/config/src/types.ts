// The public contract of the config library: what a schema author declares and what resolving returns.
import type { z } from 'zod';

/** A path into a config tree: field names (snake_case) and list indices. */
export type ConfigPath = ReadonlyArray<string | number>;

/** Where a value came from. */
export type Source =
  | { kind: 'default' }
  | { kind: 'file'; file: string }
  | { kind: 'env'; variable: string }
  | { kind: 'cli'; flag: string }
  | { kind: 'layer'; label: string }
  | { kind: 'validator' };

/** Context handed to cross-field validators. Paths are relative to the config the validator owns. */
export interface ValidationContext {
  /** Report a problem. `[]` means the config itself (rendered `<root>` or the section's flag). */
  error(path: ConfigPath, message: string): void;
  /** Print a warning on stderr (does not change the exit code). */
  warn(message: string): void;
  /** True when some layer (file, env, CLI) set the value at `path`; false when it is a default. */
  isSet(path: ConfigPath): boolean;
  /** A context for a sub-config (paths are then relative to it). */
  at(path: ConfigPath): ValidationContext;
}

/**
 * A cross-field rule. Runs after the schema validated, on the typed config, in declaration order.
 * It may normalise values in place (e.g. `bench` forcing `max_steps`) and must be idempotent, so that
 * a dry-run dump re-loads to the same config.
 */
export type Validator<T> = (config: T, ctx: ValidationContext) => void;

/** An old field name still accepted. Paths are dotted snake_case; `*` matches any list index. */
export interface Rename {
  from: string;
  to: string;
  /** `deprecated` (default) warns with a migration hint; `alias` is accepted silently. */
  kind?: 'deprecated' | 'alias';
}

/** One file written by `--dry-run`, relative to `<output dir>/configs/`. */
export interface DryRunFile {
  name: string;
  spec: ConfigSpec;
  value: unknown;
}

/** Everything the resolver needs to know about one entrypoint's root config. */
export interface ConfigSpec<S extends z.ZodType = z.ZodType> {
  /** Class-like name shown in error headers, e.g. `OrchestratorConfig`. */
  name: string;
  /** Program name shown in `usage:`. */
  prog: string;
  description?: string;
  schema: S;
  validators?: ReadonlyArray<Validator<z.output<S>>>;
  renames?: ReadonlyArray<Rename>;
  /** Prefix of environment variables read as config values; `null` disables. Default `PRIME_`. */
  envPrefix?: string | null;
  /** Files `--dry-run` writes. Default: `<prog>.toml` holding the whole config. */
  dryRunFiles?: (config: z.output<S>) => DryRunFile[];
  /** Where `--dry-run` writes `configs/`. Default: the config's `output_dir` field. */
  outputDir?: (config: z.output<S>) => string;
}

/** A pre-built layer of raw values (used by programs that translate other formats). */
export interface RawLayer {
  data: Record<string, unknown>;
  source: Source;
  /** Directory that relative paths in `relativeToFile` fields are resolved against. */
  baseDir?: string;
}

export interface ResolveOptions {
  /** Command-line arguments (without the program name). */
  argv?: readonly string[];
  /** Environment variables; default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Working directory for relative `@ file` paths; default `process.cwd()`. */
  cwd?: string;
  /** Extra layers applied above the environment and below `@` files, in order. */
  layers?: readonly RawLayer[];
}

export interface Resolved<T> {
  config: T;
  warnings: string[];
  /** Which source set each value (dotted path → source); paths absent here are defaults. */
  sources: ReadonlyMap<string, Source>;
  /** Flags the library itself handles: `--help`, `--dry-run`, `--explain`, `--plain`, `--json-schema`. */
  flags: { help: boolean; dryRun: boolean; explain: boolean; plain: boolean; jsonSchema: boolean };
}
