// Running an entrypoint: resolve its config, then handle --help, --json-schema, --explain and
// --dry-run, or hand the config to the program. User mistakes are printed as a boxed report on
// stderr with exit code 1; only programming errors show a stack trace.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { z } from 'zod';
import { toToml } from './dump.js';
import { explainText } from './explain.js';
import { helpText } from './help.js';
import { ConfigError, formatIssues } from './issues.js';
import { editorSchema } from './json-schema.js';
import { collect, finish } from './resolve.js';
import type { ConfigSpec, Resolved } from './types.js';

export interface Streams {
  stdout: { write(s: string): unknown; isTTY?: boolean };
  stderr: { write(s: string): unknown; isTTY?: boolean };
}

export interface RunCliOptions<T> {
  argv?: readonly string[];
  env?: Readonly<Record<string, string | undefined>>;
  cwd?: string;
  streams?: Streams;
  /** The program itself; its return value is the exit code (default 0). */
  run?: (config: T, resolved: Resolved<T>) => Promise<number | void> | number | void;
}

/** Resolve and run. Returns the exit code (it does not call `process.exit`). */
export async function runCli<S extends z.ZodType>(
  spec: ConfigSpec<S>,
  options: RunCliOptions<z.output<S>> = {},
): Promise<number> {
  const argv = options.argv ?? process.argv.slice(2);
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const { stdout, stderr } = options.streams ?? { stdout: process.stdout, stderr: process.stderr };

  const collected = collect(spec, { argv, env, cwd });
  const color = useColor(stderr, env, collected.flags.plain);
  const fail = (text: string) => {
    stderr.write(box('Config file error', text, color));
    return 1;
  };
  if (collected.fileIssues.length > 0) return fail(formatIssues(collected.issues, spec.name));
  if (collected.flags.help) {
    stdout.write(helpText(spec));
    return 0;
  }
  if (collected.flags.jsonSchema) {
    stdout.write(`${JSON.stringify(editorSchema(spec.schema, spec.name), null, 2)}\n`);
    return 0;
  }

  let resolved: Resolved<z.output<S>>;
  try {
    resolved = finish(spec, collected);
  } catch (err) {
    if (err instanceof ConfigError) return fail(err.message);
    throw err;
  }
  for (const w of resolved.warnings) stderr.write(`${color ? '\x1b[33mWarning:\x1b[0m' : 'Warning:'} ${w}\n`);
  const config = resolved.config;

  if (resolved.flags.explain) stdout.write(`${explainText(spec, config, resolved.sources)}\n`);
  if (resolved.flags.dryRun) {
    const written = writeDryRun(spec, config, cwd);
    stdout.write(`Dry run complete: resolved configs written to ${written.join(', ')}. Nothing was started.\n`);
    return 0;
  }
  if (resolved.flags.explain) return 0;
  const code = options.run ? await options.run(config, resolved) : 0;
  return typeof code === 'number' ? code : 0;
}

/** Write the dry-run files to `<output dir>/configs/` (each atomically). Returns their paths. */
export function writeDryRun<S extends z.ZodType>(
  spec: ConfigSpec<S>,
  config: z.output<S>,
  cwd = process.cwd(),
): string[] {
  const outDir = spec.outputDir
    ? spec.outputDir(config)
    : String((config as Record<string, unknown>).output_dir ?? 'outputs');
  const dir = path.join(outDir, 'configs');
  const files = spec.dryRunFiles ? spec.dryRunFiles(config) : [{ name: `${spec.prog}.toml`, spec, value: config }];
  mkdirSync(path.resolve(cwd, dir), { recursive: true });
  const written: string[] = [];
  for (const f of files) {
    const shown = path.join(dir, f.name);
    const target = path.resolve(cwd, shown);
    const header = `Resolved ${f.spec.name} written by \`${spec.prog} --dry-run\`.\nRe-load it with: ${f.spec.prog} @ ${shown}`;
    const tmp = `${target}.tmp-${process.pid}`;
    writeFileSync(tmp, toToml(f.spec, f.value, header));
    renameSync(tmp, target);
    written.push(shown);
  }
  return written;
}

function useColor(stream: Streams['stderr'], env: Readonly<Record<string, string | undefined>>, plain: boolean) {
  if (plain || env.NO_COLOR !== undefined) return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '0') return true;
  return stream.isTTY === true;
}

/** A framed report. Lines are never wrapped, so every message stays greppable. */
export function box(title: string, text: string, color: boolean): string {
  const red = (s: string) => (color ? `\x1b[31m${s}\x1b[0m` : s);
  const bold = (s: string) => (color ? `\x1b[1m${s}\x1b[0m` : s);
  const lines = text.split('\n').map((l) => `${red('│')} ${l}`);
  return `${red('╭─')} ${bold(title)}\n${lines.join('\n')}\n${red('╰─')}\n`;
}

/** Entry for a bin: run and exit with the code; unexpected errors print a stack trace. */
export function main<S extends z.ZodType>(spec: ConfigSpec<S>, options: RunCliOptions<z.output<S>> = {}): void {
  runCli(spec, options).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(
        `${spec.prog}: internal error (please report it): ${(err as Error)?.stack ?? String(err)}\n`,
      );
      process.exitCode = 2;
    },
  );
}
