// The one error type of the hosted config: a user mistake, shown as `Error: …` lines, never a stack trace.

/**
 * A problem with a hosted `rl.toml`, its secrets or its env files. `lines` is the full report as
 * printed on stderr: the first line starts with `Error: `; continuation lines (bullets, hints) follow.
 * Reports never contain secret values.
 */
export class HostedConfigError extends Error {
  readonly lines: readonly string[];

  constructor(lines: readonly string[] | string) {
    const all = typeof lines === 'string' ? [lines] : [...lines];
    const [first = 'Error: invalid hosted config', ...rest] = all;
    const head = first.startsWith('Error: ') ? first : `Error: ${first}`;
    super([head, ...rest].join('\n'));
    this.name = 'HostedConfigError';
    this.lines = [head, ...rest];
  }
}

/** `Error: Invalid config in <path>:` followed by one bullet per problem (`<dotted.loc>: <message>`). */
export function invalidConfig(path: string, problems: readonly string[]): HostedConfigError {
  return new HostedConfigError([`Error: Invalid config in ${path}:`, ...problems.map((p) => `  • ${p}`)]);
}
