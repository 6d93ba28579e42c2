// A process logger: leveled lines to the terminal (stderr) and, with `log.file`, to
// `<output_dir>/logs/<name>.log` as well.
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

const LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type Level = (typeof LEVELS)[number];

export interface LoggerOptions {
  level?: string;
  /** Directory for the log file; none: terminal only. */
  dir?: string | null;
  name: string;
  /** Where terminal lines go (default process.stderr). */
  stream?: NodeJS.WritableStream;
}

export class Logger {
  private readonly threshold: number;
  readonly file: string | null;
  private readonly stream: NodeJS.WritableStream;

  constructor(readonly options: LoggerOptions) {
    const level = (options.level ?? 'info').toLowerCase();
    const index = LEVELS.indexOf(level === 'warning' ? 'warn' : (level as Level));
    if (index < 0) throw new RangeError(`log.level must be one of ${LEVELS.join(', ')}, got '${options.level}'`);
    this.threshold = index;
    this.stream = options.stream ?? process.stderr;
    if (options.dir) {
      mkdirSync(options.dir, { recursive: true });
      this.file = join(options.dir, `${options.name}.log`);
    } else this.file = null;
  }

  private write(level: Level, message: string): void {
    if (LEVELS.indexOf(level) < this.threshold) return;
    const time = new Date().toISOString().replace('T', ' ').slice(0, 19);
    const tag = level === 'info' ? '' : `${level.toUpperCase()} `;
    this.stream.write(`${tag}${message}\n`);
    if (this.file) appendFileSync(this.file, `${time} ${level.toUpperCase().padEnd(5)} ${message}\n`);
  }

  debug(message: string): void {
    this.write('debug', message);
  }
  info(message: string): void {
    this.write('info', message);
  }
  warn(message: string): void {
    this.write('warn', message);
  }
  error(message: string): void {
    this.write('error', message);
  }
}
