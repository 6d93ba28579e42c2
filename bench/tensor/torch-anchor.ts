// Runs the PyTorch-CPU anchor (anchors/torch_cpu_anchor.py, unchanged) once per process and parses
// its figures. Needs Debian's python3-torch; without it every figure is reported as missing.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

export const TORCH_ANCHOR_SCRIPT = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../anchors/torch_cpu_anchor.py',
);
const PYTHON = process.env.PRIME_BENCH_PYTHON ?? '/usr/bin/python3';

export interface TorchAnchorFigures {
  version: string;
  sgemm: Map<number, number>; // n → GFLOP/s
  trainTokensPerSecond: Map<string, number>; // "V=512 d=256 L=4" → tok/s
}

let cached: { threads: number; result: TorchAnchorFigures | { missing: string } } | undefined;

export function torchAnchor(threads: number, progress: (m: string) => void): TorchAnchorFigures | { missing: string } {
  if (cached?.threads === threads) return cached.result;
  const probe = spawnSync(PYTHON, ['-c', 'import torch; print(torch.__version__)'], { encoding: 'utf8' });
  let result: TorchAnchorFigures | { missing: string };
  if (probe.status !== 0) {
    result = { missing: `PyTorch not installed for ${PYTHON} (apt-get install python3-torch libopenblas0-pthread)` };
  } else {
    progress(`running the PyTorch anchor (${threads} threads; about a minute)`);
    const run = spawnSync(PYTHON, [TORCH_ANCHOR_SCRIPT, String(threads)], { encoding: 'utf8' });
    if (run.status !== 0) result = { missing: `the PyTorch anchor failed: ${run.stderr.trim().split('\n').pop()}` };
    else result = parseAnchorOutput(run.stdout, probe.stdout.trim());
  }
  cached = { threads, result };
  return result;
}

export function parseAnchorOutput(stdout: string, version: string): TorchAnchorFigures {
  const sgemm = new Map<number, number>();
  const train = new Map<string, number>();
  for (const line of stdout.split('\n')) {
    const g = /^sgemm (\d+): ([\d.]+) GFLOP\/s/.exec(line);
    if (g) sgemm.set(Number(g[1]), Number(g[2]));
    const t = /^train (V=\d+ d=\d+ L=\d+) .*: ([\d.]+) tok\/s/.exec(line);
    if (t) train.set(t[1]!, Number(t[2]));
  }
  return { version, sgemm, trainTokensPerSecond: train };
}
