// `prime rl …`: the hosted RL command group. `prime rl CONFIG_PATH …` is short for `prime rl run CONFIG_PATH …`.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { eprintln, type CliIo } from '../io.js';
import { EXIT_ERROR, EXIT_OK, UsageError, printUsageError, type CommandInfo } from '../usage.js';
import { rlInit } from './init.js';
import { rlRun } from './run.js';

export const RL: CommandInfo = { path: 'prime rl', usage: '[OPTIONS] CONFIG_PATH [ARGS]... | COMMAND [ARGS]...' };

export const RL_HELP = `Usage: prime rl [OPTIONS] CONFIG_PATH [ARGS]... | COMMAND [ARGS]...

  Hosted RL training runs, each described by a flat rl.toml.
  "prime rl CONFIG_PATH ..." is short for "prime rl run CONFIG_PATH ...".

Options:
  -h, --help  Show this message and exit.

Commands:
  init    Write a commented rl.toml template.
  run     Validate a config and start a run (--dry-run: validate only).

  list, get, logs, stop, delete, models, metrics, rollouts, progress and
  distributions talk to a run service, which this version does not include.
`;

/** Commands of the hosted CLI that need the run service (not part of this version). */
export const SERVICE_COMMANDS = new Set([
  'list',
  'ls',
  'get',
  'logs',
  'stop',
  'delete',
  'models',
  'metrics',
  'rollouts',
  'progress',
  'distributions',
]);

export function rlGroup(argv: readonly string[], io: CliIo): number {
  const [first, ...rest] = argv;
  if (first === undefined || first === '-h' || first === '--help') {
    io.out(RL_HELP);
    return EXIT_OK;
  }
  if (first === 'init') return rlInit(rest, io);
  if (first === 'run') return rlRun(rest, io);
  if (SERVICE_COMMANDS.has(first)) {
    eprintln(io, `Error: 'prime rl ${first}' needs a run service, which this version of prime does not include yet.`);
    return EXIT_ERROR;
  }
  // Default command: a config path. A bare word that is neither a command nor a file is a typo'd command.
  if (/^[a-z][a-z-]*$/.test(first) && !existsSync(resolve(io.cwd, first))) {
    return printUsageError(io, RL, new UsageError(`No such command '${first}'.`));
  }
  return rlRun(argv, io);
}
