// Helpers for the entrypoint-schema tests: a scratch directory with config files, and resolve/run
// wrappers that return the config, the warnings, or the error report.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, resolveConfig, runCli, type ConfigSpec, type z } from '@prime-rl/config';

/** A fresh directory holding `files` (name → content). */
export function scratch(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'prl-'));
  for (const [name, content] of Object.entries(files)) {
    const full = path.join(dir, name);
    mkdirSync(path.dirname(full), { recursive: true });
    writeFileSync(full, content);
  }
  return dir;
}

/** Resolve in a scratch directory; throws a ConfigError on invalid input. */
export function resolveIn<S extends z.ZodType>(
  spec: ConfigSpec<S>,
  argv: string[],
  files: Record<string, string> = {},
  env: Record<string, string> = {},
) {
  const cwd = scratch(files);
  return { ...resolveConfig(spec, { argv, env, cwd }), cwd };
}

/** The resolved config of a valid input. */
export function configOf<S extends z.ZodType>(spec: ConfigSpec<S>, argv: string[], files: Record<string, string> = {}) {
  return resolveIn(spec, argv, files).config;
}

/** The error report of an input that must fail. */
export function errorOf<S extends z.ZodType>(
  spec: ConfigSpec<S>,
  argv: string[],
  files: Record<string, string> = {},
): string {
  try {
    resolveIn(spec, argv, files);
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  throw new Error(`expected a config error for: ${argv.join(' ')}`);
}

/** Run the CLI wrapper and capture exit code, stdout and stderr. */
export async function cli<S extends z.ZodType>(spec: ConfigSpec<S>, argv: string[], cwd: string) {
  let stdout = '';
  let stderr = '';
  let ran = false;
  const code = await runCli(spec, {
    argv,
    env: {},
    cwd,
    streams: { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } },
    run: () => {
      ran = true;
    },
  });
  return { code, stdout, stderr, ran };
}
