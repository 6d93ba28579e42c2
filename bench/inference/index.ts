// The inference suite: decode throughput at batch 1 and 32 and time to first token, for the shipped tiny
// model and the 26M anchor configuration, ours (`generate()`, cpu backend) against llama.cpp (through
// node-llama-cpp, on the GGUF our exporter writes) and against eager PyTorch with a KV cache. Each line
// alternates rounds of ours and its anchor (each anchor in its own process); greedy tokens are checked
// against the anchor's.
import type { Benchmark, BenchContext, BenchResult } from '../types.js';
import { openLlamaCppRunner } from './llamacpp.js';
import { LoadLog } from './machine.js';
import { MODEL_LABELS, benchModel, type BenchModel, type ModelLabel } from './models.js';
import { oursMargin, oursRunner } from './ours.js';
import { openTorchRunner } from './torch.js';
import {
  WORKLOADS,
  agreementNote,
  compare,
  divergences,
  workloadPrompts,
  type Runner,
  type Workload,
} from './workload.js';

type Anchor = 'llama.cpp' | 'torch';
const ANCHOR_NAMES: Record<Anchor, string> = { 'llama.cpp': 'llama.cpp', torch: 'PyTorch CPU' };

const plural = (n: number): string => `${n} thread${n === 1 ? '' : 's'}`;

/**
 * The anchor's configurations: at the bench's thread count and at one thread; the better one is reported.
 * On a 2-core machine both anchors' multithreaded paths are at times many times slower than one thread
 * (llama.cpp through node-llama-cpp starts fresh worker threads for every decode call, see llamacpp.ts;
 * PyTorch's OpenMP team sometimes shares one core), and an anchor should show its best.
 */
async function openAnchor(
  anchor: Anchor,
  bench: BenchModel,
  w: Workload,
  threads: number,
): Promise<{ configs: { name: string; runner: Runner }[] } | { missing: string }> {
  const counts = threads > 1 ? [threads, 1] : [threads];
  const configs: { name: string; runner: Runner }[] = [];
  for (const n of counts) {
    const opened = anchor === 'llama.cpp' ? await openLlamaCppRunner(bench, w, n) : await openTorchRunner(bench, w, n);
    if ('missing' in opened) {
      for (const c of configs) await c.runner.close?.();
      return opened;
    }
    configs.push({ name: `${opened.name} (${opened.details}, ${plural(n)})`, runner: opened.runner });
  }
  return { configs };
}

function benchmark(label: ModelLabel, w: Workload, anchor: Anchor): Benchmark {
  return {
    name: `${w.label} ${label} vs ${anchor}`,
    unit: w.unit,
    async run(ctx: BenchContext): Promise<BenchResult> {
      const higherIsBetter = w.unit !== 'ms';
      const bench = await benchModel(label, ctx.progress);
      const opened = await openAnchor(anchor, bench, w, ctx.threads);
      const configs = 'configs' in opened ? opened.configs : [];
      const shape = `${w.batch} × (${w.promptLength} prompt + ${w.maxNew} generated)`;
      const against = configs.length > 0 ? configs.map((c) => c.name).join(' and ') : `no ${ANCHOR_NAMES[anchor]}`;
      ctx.progress(`${w.label} ${label}: ours (${plural(ctx.threads)}) and ${against}, ${w.rounds} rounds of ${shape}`);
      const load = new LoadLog();
      const runners = [oursRunner(bench, w, ctx.threads), ...configs.map((c) => c.runner)];
      const [ours, ...theirs] = await compare(w, runners, () => load.beforeRound());
      const loadNote = load.note();
      if (loadNote) ctx.progress(loadNote);
      if ('missing' in opened)
        return {
          ours: ours!.value,
          anchor: ANCHOR_NAMES[anchor],
          anchorValue: null,
          note: [opened.missing, loadNote].filter(Boolean).join('; '),
          higherIsBetter,
        };
      let pick = 0;
      theirs.forEach((m, i) => {
        const better = higherIsBetter ? m.value > theirs[pick]!.value : m.value < theirs[pick]!.value;
        if (better) pick = i;
      });
      const found = divergences(ours!.tokens, theirs[pick]!.tokens);
      const prompts = workloadPrompts(w);
      const margins = found.map((d) => oursMargin(bench, prompts[d.sequence]!, d, ctx.threads));
      const agreement = agreementNote(found, margins, w.batch, anchor);
      if (agreement) ctx.progress(agreement);
      const note = [agreement, loadNote].filter(Boolean).join('; ');
      return {
        ours: ours!.value,
        anchor: configs[pick]!.name,
        anchorValue: theirs[pick]!.value,
        higherIsBetter,
        ...(note ? { note } : {}),
      };
    },
  };
}

const workloads = [WORKLOADS.decode_b1, WORKLOADS.decode_b32, WORKLOADS.ttft_b1];

export const benchmarks: Benchmark[] = MODEL_LABELS.flatMap((label) =>
  (['llama.cpp', 'torch'] as const).flatMap((anchor) => workloads.map((w) => benchmark(label, w, anchor))),
);
