// What a command may touch of the outside world, so that commands run the same in tests and in a shell.

export interface CliIo {
  /** Write to stdout (the text is written as given; callers add newlines). */
  out(text: string): void;
  /** Write to stderr. */
  err(text: string): void;
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
}

/** The real process. */
export function processIo(): CliIo {
  return {
    out: (t) => void process.stdout.write(t),
    err: (t) => void process.stderr.write(t),
    env: process.env,
    cwd: process.cwd(),
  };
}

/** Line helpers. */
export function println(io: CliIo, line = ''): void {
  io.out(`${line}\n`);
}

export function eprintln(io: CliIo, line = ''): void {
  io.err(`${line}\n`);
}

/** `Warning: …` on stderr. */
export function warn(io: CliIo, message: string): void {
  io.err(`Warning: ${message}\n`);
}
