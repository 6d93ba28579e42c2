// `prime rl init [PATH=rl.toml] [-f/--force]`: write a commented config template.
// `prime rl init -` prints the template on stdout instead (for `prime rl init - > my.toml`).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { eprintln, println, type CliIo } from '../io.js';
import {
  EXIT_ERROR,
  EXIT_OK,
  UsageError,
  withUsageErrors,
  printUsageError,
  wantsHelp,
  type CommandInfo,
} from '../usage.js';
import { DEFAULT_TEMPLATE_ENV, renderDefaultTemplate } from './template.js';

export const INIT: CommandInfo = { path: 'prime rl init', usage: '[OPTIONS] [OUTPUT_PATH]' };

export const INIT_HELP = `Usage: prime rl init [OPTIONS] [OUTPUT_PATH]

  Write a commented rl.toml template for a hosted RL run.

  OUTPUT_PATH defaults to rl.toml; parent directories are created. Use - to
  print the template on stdout instead (prime rl init - > my-config.toml).
  When the current directory holds an environment (.prime/.env-metadata.json
  or .env-metadata.json with owner and name), the template trains on it.

Options:
  -f, --force  Overwrite OUTPUT_PATH if it exists.
  -h, --help   Show this message and exit.
`;

/** `owner/name` of the environment in the current directory, if any. */
export function detectEnvironment(cwd: string): string | undefined {
  for (const rel of ['.prime/.env-metadata.json', '.env-metadata.json']) {
    const file = resolve(cwd, rel);
    if (!existsSync(file)) continue;
    try {
      const meta = JSON.parse(readFileSync(file, 'utf8')) as { owner?: unknown; name?: unknown };
      if (typeof meta.owner === 'string' && typeof meta.name === 'string' && meta.owner && meta.name) {
        return `${meta.owner}/${meta.name}`;
      }
    } catch {
      // unreadable metadata: fall back to the default environment
    }
    return undefined;
  }
  return undefined;
}

export function rlInit(argv: readonly string[], io: CliIo): number {
  if (wantsHelp(argv)) {
    io.out(INIT_HELP);
    return EXIT_OK;
  }
  let path: string;
  let force: boolean;
  try {
    const { values, positionals } = withUsageErrors(() =>
      parseArgs({
        args: [...argv],
        options: { force: { type: 'boolean', short: 'f' } },
        allowPositionals: true,
        strict: true,
      }),
    );
    if (positionals.length > 1)
      throw new UsageError(`Got unexpected extra argument (${positionals.slice(1).join(' ')})`);
    path = positionals[0] ?? 'rl.toml';
    force = values.force === true;
  } catch (e) {
    if (e instanceof UsageError) return printUsageError(io, INIT, e);
    throw e;
  }

  const detected = detectEnvironment(io.cwd);
  const template = renderDefaultTemplate(detected ?? DEFAULT_TEMPLATE_ENV);
  if (path === '-') {
    if (detected) eprintln(io, `Detected environment: ${detected}`);
    io.out(template);
    return EXIT_OK;
  }
  const abs = resolve(io.cwd, path);
  if (existsSync(abs) && !force) {
    eprintln(io, `Error: ${path} already exists. Use --force to overwrite.`);
    return EXIT_ERROR;
  }
  try {
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, template);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? String(e);
    eprintln(io, `Error: Cannot write ${path}: ${code}`);
    return EXIT_ERROR;
  }
  if (detected) println(io, `Detected environment: ${detected}`);
  println(io, `✓ Created ${path}`);
  println(io, `Run with: prime rl run ${path}`);
  return EXIT_OK;
}
