// Runs benchmark suites and reports, per benchmark, our figure, the anchor's figure and the ratio
// (> 1 means we are better), plus one machine-readable `BENCH {...}` line.
//   npm run bench -- tensor|inference [--threads N] [--filter TEXT]
import { parseArgs } from 'node:util';
import type { Benchmark, BenchResult } from './types.js';

const SUITES: Record<string, () => Promise<Benchmark[]>> = {
  tensor: async () => (await import('./tensor/index.js')).benchmarks,
  inference: async () => (await import('./inference/index.js')).benchmarks,
};

function ratioOf(r: BenchResult): number | null {
  if (r.anchorValue === null || r.anchorValue === 0 || r.ours === 0) return null;
  return r.higherIsBetter === false ? r.anchorValue / r.ours : r.ours / r.anchorValue;
}

function fmt(v: number): string {
  return Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2);
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { threads: { type: 'string', default: '2' }, filter: { type: 'string' } },
  });
  const threads = Number(values.threads);
  if (!Number.isInteger(threads) || threads < 1) {
    console.error(`bench: --threads must be a positive integer, got '${values.threads}'`);
    return 2;
  }
  const suites = positionals.length > 0 ? positionals : Object.keys(SUITES);
  for (const s of suites)
    if (!SUITES[s]) {
      console.error(`bench: unknown suite '${s}' (known: ${Object.keys(SUITES).join(', ')})`);
      return 2;
    }
  const ctx = { threads, progress: (m: string) => process.stderr.write(`  … ${m}\n`) };
  for (const suite of suites) {
    const benchmarks = (await SUITES[suite]!()).filter((b) => !values.filter || b.name.includes(values.filter));
    console.log(`suite ${suite}: ${benchmarks.length} benchmarks, ${threads} threads`);
    for (const b of benchmarks) {
      const r = await b.run(ctx);
      const ratio = ratioOf(r);
      const anchorText =
        r.anchorValue === null
          ? `${r.anchor}: not measured (${r.note ?? 'not installed'})`
          : `${r.anchor} ${fmt(r.anchorValue)} ${b.unit}`;
      console.log(
        `${b.name}: ours ${fmt(r.ours)} ${b.unit} | ${anchorText} | ratio ${ratio === null ? 'n/a' : ratio.toFixed(2) + 'x'}` +
          (r.anchorValue !== null && r.note ? ` (${r.note})` : ''),
      );
      const line: Record<string, unknown> = {
        name: b.name,
        unit: b.unit,
        ours: r.ours,
        anchor: r.anchor,
        anchor_value: r.anchorValue,
        ratio,
        threads,
      };
      if (r.note) line.note = r.note;
      console.log(`BENCH ${JSON.stringify(line)}`);
    }
  }
  return 0;
}

process.exitCode = await main();
