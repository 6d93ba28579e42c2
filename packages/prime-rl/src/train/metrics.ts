// Per-step metrics as JSON lines (`<output_dir>/metrics.jsonl`, spec rl.md §12.4 "file" monitor):
// one `{"step", "time", …metrics}` object per line; non-finite values are dropped, as the reference does.
import { appendFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';

export type Metrics = Record<string, number>;

export class MetricsFile {
  private ready: Promise<unknown> | null = null;

  constructor(readonly path: string) {}

  async write(step: number, metrics: Metrics): Promise<void> {
    this.ready ??= mkdir(dirname(this.path), { recursive: true });
    await this.ready;
    const record: Record<string, number> = { step, time: Date.now() / 1000 };
    for (const [key, value] of Object.entries(metrics)) if (Number.isFinite(value)) record[key] = value;
    // One appendFile per line: a line is written whole or not at all on a crash (small writes).
    await appendFile(this.path, JSON.stringify(record) + '\n');
  }
}
