// Our side: `generate()` of @prime-rl/lm (continuous batching over a KV cache) on the native cpu
// backend, greedy, EOS ignored; per-token timestamps from `onToken`.
import * as T from '@prime-rl/tensor';
import { generate } from '@prime-rl/lm';
import type { BenchModel } from './models.js';
import { figureOf, type Divergence, type Runner, type Workload } from './workload.js';

export function oursRunner(bench: BenchModel, w: Workload, threads: number): Runner {
  return {
    async run(prompts, maxNew) {
      T.useBackend('cpu', { threads });
      const tokenTimes: number[][] = prompts.map(() => []);
      const params = { temperature: 0, maxTokens: maxNew, ignoreEos: true };
      const start = performance.now();
      const results = generate(
        bench.model,
        prompts.map((promptIds) => ({ promptIds, params })),
        { onToken: (request) => tokenTimes[request]!.push(performance.now()) },
      );
      return { figure: figureOf(w, { start, tokenTimes }, maxNew), tokens: results.map((r) => r.tokenIds) };
    },
  };
}

/**
 * How much more likely (log-probability) our greedy token was than the anchor's at a divergence — small
 * for near ties — or null when the anchor's token is not among our 20 most likely.
 */
export function oursMargin(bench: BenchModel, prompt: number[], d: Divergence, threads: number): number | null {
  T.useBackend('cpu', { threads });
  const [result] = generate(bench.model, [
    { promptIds: prompt, params: { temperature: 0, maxTokens: d.index + 1, ignoreEos: true, logprobs: 20 } },
  ]);
  const top = result?.topLogprobs?.[d.index];
  const mine = top?.find((t) => t.token === d.ours);
  const theirs = top?.find((t) => t.token === d.theirs);
  return mine && theirs ? mine.logprob - theirs.logprob : null;
}
