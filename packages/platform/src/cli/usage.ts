// Usage errors (exit 2): wrong arguments, unknown options or commands. Shown with the command's
// usage line and a pointer to its help, on stderr.
import { eprintln, type CliIo } from './io.js';

export const EXIT_OK = 0;
export const EXIT_ERROR = 1;
export const EXIT_USAGE = 2;

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** A command's identity for usage messages. */
export interface CommandInfo {
  /** `prime rl run` */
  path: string;
  /** `[OPTIONS] CONFIG_PATH` */
  usage: string;
}

export function printUsageError(io: CliIo, cmd: CommandInfo, error: UsageError): number {
  eprintln(io, `Usage: ${cmd.path} ${cmd.usage}`);
  eprintln(io, `Try '${cmd.path} -h' for help.`);
  eprintln(io);
  eprintln(io, `Error: ${error.message}`);
  return EXIT_USAGE;
}

/** True when `-h`/`--help` appears before a `--` terminator. */
export function wantsHelp(argv: readonly string[]): boolean {
  for (const a of argv) {
    if (a === '--') return false;
    if (a === '-h' || a === '--help') return true;
  }
  return false;
}

/**
 * Run a `node:util` parseArgs call (strict, positionals allowed) and turn its errors into usage
 * errors worded for people.
 */
export function withUsageErrors<T>(parse: () => T): T {
  try {
    return parse();
  } catch (e) {
    const err = e as Error & { code?: string };
    const quoted = /'([^']+)'/.exec(err.message)?.[1];
    switch (err.code) {
      case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
        throw new UsageError(`No such option: ${quoted ?? err.message}`);
      case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE': {
        const flag = quoted?.split(/[ ,]/)[0];
        if (/argument missing/.test(err.message)) throw new UsageError(`Option '${flag}' requires an argument.`);
        if (/does not take an argument/.test(err.message))
          throw new UsageError(`Option '${flag}' does not take a value.`);
        throw new UsageError(err.message);
      }
      default:
        throw new UsageError(err.message);
    }
  }
}
