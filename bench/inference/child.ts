// A child process spoken to in JSON lines: each request is one line on its stdin, each answer one line on
// its stdout. The anchors run this way (PyTorch, and llama.cpp in its own Node process), so that they
// never share a process — or a thread pool — with ours.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';

export class JsonLinesChild {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly lines: string[] = [];
  private readonly waiting: { resolve(line: string): void; reject(error: Error): void }[] = [];
  private failure: Error | null = null;
  private stderr = '';
  private readonly exited: Promise<void>;

  constructor(
    readonly label: string,
    command: string,
    args: string[],
    env: NodeJS.ProcessEnv,
  ) {
    this.child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], env });
    this.child.stderr.setEncoding('utf8');
    this.child.stderr.on('data', (chunk: string) => (this.stderr = (this.stderr + chunk).slice(-4000)));
    createInterface({ input: this.child.stdout }).on('line', (line) => {
      const next = this.waiting.shift();
      if (next) next.resolve(line);
      else this.lines.push(line);
    });
    this.exited = new Promise((resolve) =>
      this.child.on('close', (code) => {
        const last = this.stderr.trim().split('\n').pop() ?? '';
        this.fail(new Error(`${label} exited (${code})${last ? `: ${last}` : ''}`));
        resolve();
      }),
    );
    this.child.on('error', (error) => this.fail(error));
    this.child.stdin.on('error', () => undefined); // a failed child is reported through 'close'
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const pending of this.waiting.splice(0)) pending.reject(this.failure);
  }

  /** Sends one request and waits for the next answer line, parsed. */
  async request<T>(message: unknown): Promise<T> {
    if (this.failure) throw this.failure;
    this.child.stdin.write(`${JSON.stringify(message)}\n`);
    const line =
      this.lines.shift() ??
      (await new Promise<string>((resolve, reject) => {
        if (this.failure) reject(this.failure);
        else this.waiting.push({ resolve, reject });
      }));
    return JSON.parse(line) as T;
  }

  /** Closes its stdin (the child then exits) and waits for it to exit. */
  async close(): Promise<void> {
    this.child.stdin.end();
    await this.exited;
  }
}
