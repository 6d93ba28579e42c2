// `prime rl run CONFIG_PATH [-e VAR[=VALUE]|FILE]… [--env-file FILE]… [-o table|json] [--dry-run [--output-dir D]]`
//
// Validates the hosted config on the client (schema, environments, cross-field rules, secrets), then
// either prints what would be submitted (`--dry-run`) or submits it to the run service. Secret values
// are never printed or written: only their names.
import { relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { HostedConfigError, checkWandbKey, collectSecrets, hostedToRl, loadHostedConfig } from 'prime-rl/hosted';
import { buildRunRequest, redactRunRequest } from '../../runs/request.js';
import { writeRlConfig } from '../../runs/rl-toml.js';
import { runSummary } from '../../runs/summary.js';
import { eprintln, println, warn, type CliIo } from '../io.js';
import {
  EXIT_ERROR,
  EXIT_OK,
  UsageError,
  withUsageErrors,
  printUsageError,
  wantsHelp,
  type CommandInfo,
} from '../usage.js';

export const RUN: CommandInfo = { path: 'prime rl run', usage: '[OPTIONS] CONFIG_PATH' };

export const RUN_HELP = `Usage: prime rl run [OPTIONS] CONFIG_PATH

  Validate a hosted rl.toml and start a training run. A leading @ on
  CONFIG_PATH is accepted (@rl.toml or @ rl.toml).

  Secrets are gathered in this order, later ones winning on the same name:
  the config's env_files (relative to the config file), --env-file files,
  then -e values. Only their names are ever shown.

Options:
  -e, --env-var VAR      A secret: KEY=VALUE, KEY (copied from your
                         environment) or the path of a .env file. Repeatable.
  --env-file FILE        A .env file with secrets. Repeatable.
  -o, --output FORMAT    table (default) or json.
  --dry-run              Validate and print the run request (secret names
                         only); submit nothing.
  --output-dir DIR       With --dry-run: also write the translated prime-rl
                         config to DIR/configs/rl.toml.
  -h, --help             Show this message and exit.
`;

export const NO_SERVICE = 'Error: no run service is configured (set PRIME_API_BASE_URL or run with --dry-run)';
export const NOT_SUBMITTABLE =
  'Error: this version of prime cannot submit runs to a run service yet (PRIME_API_BASE_URL is set); run with --dry-run';

interface RunArgs {
  config: string;
  envVars: string[];
  envFiles: string[];
  output: string;
  dryRun: boolean;
  outputDir?: string;
}

function parseRunArgs(argv: readonly string[]): RunArgs {
  const { values, positionals } = withUsageErrors(() =>
    parseArgs({
      args: [...argv],
      options: {
        'env-var': { type: 'string', short: 'e', multiple: true },
        'env-file': { type: 'string', multiple: true },
        output: { type: 'string', short: 'o' },
        'dry-run': { type: 'boolean' },
        'output-dir': { type: 'string' },
      },
      allowPositionals: true,
      strict: true,
    }),
  );
  // `@ rl.toml` (two tokens) and `@rl.toml` both name rl.toml
  const pos = [...positionals];
  if (pos[0] === '@') {
    if (pos.length < 2) throw new UsageError('@ must be followed by a config file path.');
    pos.splice(0, 2, `@${pos[1]}`);
  }
  if (pos.length === 0) throw new UsageError("Missing argument 'CONFIG_PATH'.");
  if (pos.length > 1) throw new UsageError(`Got unexpected extra argument (${pos.slice(1).join(' ')})`);
  const raw = pos[0] as string;
  const config = raw.startsWith('@') ? raw.slice(1) : raw;
  if (config === '') throw new UsageError('@ must be followed by a config file path.');
  const args: RunArgs = {
    config,
    envVars: values['env-var'] ?? [],
    envFiles: values['env-file'] ?? [],
    output: values.output ?? 'table',
    dryRun: values['dry-run'] === true,
  };
  if (values['output-dir'] !== undefined) {
    if (!args.dryRun) throw new UsageError('--output-dir is only used together with --dry-run.');
    args.outputDir = values['output-dir'];
  }
  return args;
}

/** A path for messages: relative to the CWD when below it. */
function shown(cwd: string, abs: string): string {
  const rel = relative(cwd, abs);
  return rel === '' || rel.startsWith('..') ? abs : rel;
}

export function rlRun(argv: readonly string[], io: CliIo): number {
  if (wantsHelp(argv)) {
    io.out(RUN_HELP);
    return EXIT_OK;
  }
  let args: RunArgs;
  try {
    args = parseRunArgs(argv);
  } catch (e) {
    if (e instanceof UsageError) return printUsageError(io, RUN, e);
    throw e;
  }
  if (args.output !== 'table' && args.output !== 'json') {
    eprintln(io, `Error: Invalid output format '${args.output}'. Supported formats: table, json`);
    return EXIT_ERROR;
  }
  const json = args.output === 'json';
  // In JSON mode stdout carries only the JSON document; human progress goes to stderr.
  const info = (line = ''): void => (json ? eprintln(io, line) : println(io, line));

  try {
    info(`Loading config from ${args.config}`);
    info();
    const loaded = loadHostedConfig(args.config, { cwd: io.cwd });
    for (const w of loaded.warnings) warn(io, w);

    const { secrets, warnings } = collectSecrets({
      configPath: args.config,
      configDir: loaded.dir,
      configEnvFiles: loaded.envFiles,
      envFiles: args.envFiles,
      envVars: args.envVars,
      env: io.env,
      cwd: io.cwd,
    });
    for (const w of warnings) warn(io, w);
    checkWandbKey(loaded.config, secrets);

    const teamId = io.env.PRIME_TEAM_ID;
    const request = buildRunRequest(loaded.config, secrets, teamId ? { teamId } : {});

    if (!args.dryRun) {
      // The run service is not part of this version: never pretend that a run was started.
      const base = io.env.PRIME_API_BASE_URL || io.env.PRIME_BASE_URL;
      eprintln(io, base ? NOT_SUBMITTABLE : NO_SERVICE);
      return EXIT_ERROR;
    }

    const rl = hostedToRl(loaded.config);
    let written: string | undefined;
    if (args.outputDir !== undefined) {
      written = writeRlConfig(resolve(io.cwd, args.outputDir), rl, args.config);
    }
    const body = JSON.stringify(redactRunRequest(request), null, 2);
    if (json) {
      println(io, body);
    } else {
      println(io, 'Dry run: validating only, nothing is submitted.');
      println(io);
      for (const line of runSummary(request)) println(io, line);
      println(io);
      println(io, 'Run request (secret values omitted):');
      println(io, body);
      println(io);
    }
    if (written !== undefined) info(`Wrote ${shown(io.cwd, written)}`);
    info('✓ Dry run complete: the config is valid. Nothing was submitted.');
    return EXIT_OK;
  } catch (e) {
    if (e instanceof HostedConfigError) {
      for (const line of e.lines) eprintln(io, line);
      return EXIT_ERROR;
    }
    throw e;
  }
}
