// How busy the machine is while we are idle (Linux /proc/stat): the inference benchmarks run thread
// pools that spin at barriers (ours and llama.cpp's), so another process on the same cores can slow a
// step down by a whole scheduler time slice. Before each round the suite waits for the CPUs to be idle
// and notes when they were not.
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

function cpuTimes(): { busy: number; total: number } | null {
  let line: string;
  try {
    line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
  } catch {
    return null;
  }
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal
  const busy = f[0]! + f[1]! + f[2]! + f[5]! + f[6]! + (f[7] ?? 0);
  return { busy, total: busy + f[3]! + f[4]! };
}

/** The fraction of all CPUs that were busy over the next `ms` milliseconds (null where unknown). */
export async function busyFraction(ms = 200): Promise<number | null> {
  const a = cpuTimes();
  await sleep(ms);
  const b = cpuTimes();
  if (!a || !b || b.total === a.total) return null;
  return (b.busy - a.busy) / (b.total - a.total);
}

const QUIET = 0.1;
/** Waiting for quiet takes at most this long per process, all rounds together. */
let waitBudgetMs = 90_000;

/**
 * Waits (up to `maxMs`, and within the process's overall budget) until the CPUs are idle while we are, and
 * returns the busy fraction last seen (null where /proc/stat is unavailable).
 */
export async function waitForQuiet(maxMs = 20_000): Promise<number | null> {
  const started = performance.now();
  const deadline = started + Math.min(maxMs, waitBudgetMs);
  try {
    for (;;) {
      const busy = await busyFraction();
      if (busy === null || busy < QUIET || performance.now() > deadline) return busy;
    }
  } finally {
    waitBudgetMs = Math.max(0, waitBudgetMs - (performance.now() - started));
  }
}

/** Counts rounds that started on a busy machine, for the result's note. */
export class LoadLog {
  private busyRounds = 0;
  private rounds = 0;
  private worst = 0;

  async beforeRound(): Promise<void> {
    const busy = await waitForQuiet();
    this.rounds++;
    if (busy !== null && busy >= QUIET) {
      this.busyRounds++;
      this.worst = Math.max(this.worst, busy);
    }
  }

  note(): string | null {
    if (this.busyRounds === 0) return null;
    return (
      `warning: other processes kept up to ${Math.round(this.worst * 100)}% of the CPUs busy before ` +
      `${this.busyRounds}/${this.rounds} rounds; figures are unreliable`
    );
  }
}
