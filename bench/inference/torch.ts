// The PyTorch-CPU anchor: anchors/torch_decode_anchor.py (eager PyTorch, a hand-written decoder with a
// KV cache, greedy) on the same safetensors weights, in one Python process per comparison that loads the
// model once and answers one JSON line per run. Needs Debian's python3-torch; without it the figure is
// reported as missing.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { JsonLinesChild } from './child.js';
import type { BenchModel } from './models.js';
import type { Runner, Workload } from './workload.js';

export const TORCH_DECODE_SCRIPT = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../anchors/torch_decode_anchor.py',
);
const PYTHON = process.env.PRIME_BENCH_PYTHON ?? '/usr/bin/python3';

let probed: string | null | undefined;

interface AnchorReply {
  name: string;
  ttft_ms: number[];
  decode_tokens_per_s: number[];
  tokens: number[][];
}

/** A Python process with the model loaded, or why PyTorch cannot run. */
export async function openTorchRunner(
  bench: BenchModel,
  w: Workload,
  threads: number,
): Promise<{ name: string; details: string; runner: Runner } | { missing: string }> {
  probed ??= spawnSync(PYTHON, ['-c', 'import torch'], { encoding: 'utf8' }).status === 0 ? null : 'missing';
  if (probed !== null)
    return { missing: `PyTorch not installed for ${PYTHON} (apt-get install python3-torch libopenblas0-pthread)` };
  const child = new JsonLinesChild('the PyTorch anchor', PYTHON, [TORCH_DECODE_SCRIPT], {
    ...process.env,
    OMP_NUM_THREADS: String(threads),
    OPENBLAS_NUM_THREADS: String(threads),
  });
  let version: string;
  try {
    version = (await child.request<{ torch: string }>({ model_dir: bench.dir, threads })).torch;
  } catch (error) {
    await child.close();
    return { missing: (error as Error).message };
  }
  return {
    name: `PyTorch ${version}`,
    details: 'CPU, eager',
    runner: {
      async run(prompts, maxNew) {
        const answer = await child.request<AnchorReply>({ name: w.metric, prompts, max_new: maxNew, repeats: 1 });
        const figure = w.metric === 'ttft_b1' ? answer.ttft_ms[0] : answer.decode_tokens_per_s[0];
        if (figure === undefined) throw new Error('the PyTorch anchor printed no figure');
        return { figure, tokens: answer.tokens };
      },
      close: () => child.close(),
    },
  };
}
