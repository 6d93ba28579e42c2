// `prime`: the managed-runs CLI. Exit codes: 0 success, 1 handled error, 2 usage error.
import type { CliIo } from './io.js';
import { rlGroup } from './rl/group.js';
import { EXIT_OK, UsageError, printUsageError, type CommandInfo } from './usage.js';
import { cliVersion } from './version.js';

export const PRIME: CommandInfo = { path: 'prime', usage: '[OPTIONS] COMMAND [ARGS]...' };

export function primeHelp(): string {
  return `Usage: prime [OPTIONS] COMMAND [ARGS]...

  Prime CLI ${cliVersion()}: managed RL training runs for prime-rl.

Options:
  -v, --version  Show the version and exit.
  -h, --help     Show this message and exit.

Commands:
  rl  Hosted RL training runs: init, run (more with the run service).
`;
}

/** Run the CLI; resolves to the process exit code. */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined || first === '-h' || first === '--help') {
    io.out(primeHelp());
    return EXIT_OK;
  }
  if (first === '-v' || first === '--version') {
    io.out(`Prime CLI version: ${cliVersion()}\n`);
    return EXIT_OK;
  }
  if (first === 'rl') return rlGroup(rest, io);
  if (first.startsWith('-')) return printUsageError(io, PRIME, new UsageError(`No such option: ${first}`));
  return printUsageError(io, PRIME, new UsageError(`No such command '${first}'.`));
}
