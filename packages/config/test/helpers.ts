// Test helpers: a scratch directory with config files, and resolve/run wrappers that capture output.
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { z } from 'zod';
import { ConfigError, resolveConfig, runCli, type ConfigSpec } from '../src/index.js';

/** A fresh directory holding `files` (name → content). */
export function scratch(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'prl-config-'));
  for (const [name, content] of Object.entries(files)) {
    const full = path.join(dir, name);
    mkdirSync(path.dirname(full), { recursive: true });
    writeFileSync(full, content);
  }
  return dir;
}

export function resolveIn<S extends z.ZodType>(
  spec: ConfigSpec<S>,
  argv: string[],
  files: Record<string, string> = {},
  env: Record<string, string> = {},
) {
  const cwd = scratch(files);
  return { ...resolveConfig(spec, { argv, env, cwd }), cwd };
}

/** The error message of a resolve that must fail. */
export function errorOf<S extends z.ZodType>(
  spec: ConfigSpec<S>,
  argv: string[],
  files: Record<string, string> = {},
  env: Record<string, string> = {},
): string {
  try {
    resolveIn(spec, argv, files, env);
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  throw new Error(`expected a config error for: ${argv.join(' ')}`);
}

/** Run the CLI wrapper and capture exit code, stdout and stderr. */
export async function cli<S extends z.ZodType>(
  spec: ConfigSpec<S>,
  argv: string[],
  opts: { files?: Record<string, string>; env?: Record<string, string>; cwd?: string } = {},
) {
  const cwd = opts.cwd ?? scratch(opts.files ?? {});
  let stdout = '';
  let stderr = '';
  let ran: unknown;
  const code = await runCli(spec, {
    argv,
    env: opts.env ?? {},
    cwd,
    streams: { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } },
    run: (config) => {
      ran = config;
    },
  });
  return { code, stdout, stderr, ran, cwd };
}
