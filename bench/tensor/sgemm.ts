// Single-precision GEMM throughput, ours (the cpu backend's Kernels.gemm) against OpenBLAS
// cblas_sgemm (anchors/openblas_sgemm.c, compiled here at run time), same shape, threads, warm-up and
// iteration count. The two are measured alternately a few times and the best of each is kept, so a
// noisy neighbour on the machine hurts both alike.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { backendKernels } from '@prime-rl/tensor';
import type { Benchmark, BenchContext, BenchResult } from '../types.js';

const ANCHOR_SOURCE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../anchors/openblas_sgemm.c');
const ANCHOR_NAME = 'OpenBLAS cblas_sgemm';
const NOT_INSTALLED = 'OpenBLAS not installed (apt-get install libopenblas-dev)';
const WARMUP_CALLS = 3; // as in openblas_sgemm.c
const ROUNDS = 3;

interface GemmShape {
  name: string;
  m: number;
  n: number;
  k: number;
  transA: boolean;
  transB: boolean;
  /** Timed calls per measurement (about 0.1–0.3 s on two cores). */
  iterations: number;
}

// The square anchor shape, then the three products of a linear layer in the medium training model
// (2048 tokens, d = 512, ffn = 1536): forward x·Wᵀ, input gradient dY·W, weight gradient dYᵀ·X.
const SHAPES: GemmShape[] = [
  { name: 'sgemm 1024x1024x1024', m: 1024, n: 1024, k: 1024, transA: false, transB: false, iterations: 20 },
  { name: 'sgemm NT 2048x1536x512 (x·Wᵀ)', m: 2048, n: 1536, k: 512, transA: false, transB: true, iterations: 10 },
  { name: 'sgemm NN 2048x512x1536 (dY·W)', m: 2048, n: 512, k: 1536, transA: false, transB: false, iterations: 10 },
  { name: 'sgemm TN 1536x512x2048 (dYᵀ·X)', m: 1536, n: 512, k: 2048, transA: true, transB: false, iterations: 10 },
];

// The anchor binary, compiled once per process (or the reason it could not be).
let anchorBinary: { path: string } | { missing: string } | undefined;

function compileAnchor(progress: (m: string) => void): { path: string } | { missing: string } {
  if (anchorBinary) return anchorBinary;
  const dir = mkdtempSync(path.join(tmpdir(), 'openblas-sgemm-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const binary = path.join(dir, 'openblas_sgemm');
  progress('compiling the OpenBLAS anchor');
  const cc = process.env.CC ?? 'cc';
  const build = spawnSync(cc, ['-O2', ANCHOR_SOURCE, '-o', binary, '-lopenblas'], { encoding: 'utf8' });
  if (build.error || build.status !== 0) {
    // A missing header or library is the usual cause; anything else is worth showing.
    const output = `${build.error?.message ?? ''}${build.stderr ?? ''}`;
    const missing = /cblas\.h|lopenblas|No such file/.test(output);
    anchorBinary = {
      missing: missing ? NOT_INSTALLED : `the OpenBLAS anchor did not compile: ${output.trim().split('\n')[0]}`,
    };
  } else {
    anchorBinary = { path: binary };
  }
  return anchorBinary;
}

function runAnchor(binary: string, s: GemmShape, threads: number): number {
  const args =
    s.m === s.n && s.n === s.k && !s.transA && !s.transB
      ? [String(s.n), String(s.iterations)]
      : [s.m, s.n, s.k, Number(s.transA), Number(s.transB), s.iterations].map(String);
  const run = spawnSync(binary, args, {
    encoding: 'utf8',
    env: { ...process.env, OPENBLAS_NUM_THREADS: String(threads) },
  });
  const match = /([\d.]+) GFLOP\/s/.exec(run.stdout ?? '');
  if (run.status !== 0 || !match) throw new Error(`openblas_sgemm ${args.join(' ')} failed: ${run.stderr}`);
  return Number(match[1]);
}

/** Uniform [-1, 1) values (contents do not matter for speed as long as they are normal floats). */
function uniform(count: number, seed: number): Float32Array {
  const out = new Float32Array(count);
  let state = seed >>> 0;
  for (let i = 0; i < count; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    out[i] = (state >>> 8) / 8388608 - 1;
  }
  return out;
}

/** Ours: mean GFLOP/s over `iterations` timed calls after the warm-up, as the anchor measures. */
function runOurs(s: GemmShape, threads: number): number {
  const cpu = backendKernels('cpu');
  cpu.setThreads(threads);
  const a = uniform(s.m * s.k, 1);
  const b = uniform(s.k * s.n, 2);
  const c = uniform(s.m * s.n, 3);
  const lda = s.transA ? s.m : s.k;
  const ldb = s.transB ? s.k : s.n;
  const call = (): void =>
    cpu.gemm(1, s.transA, s.transB, s.m, s.n, s.k, 1, a, 0, lda, 0, b, 0, ldb, 0, 0, c, 0, s.n, 0);
  for (let i = 0; i < WARMUP_CALLS; i++) call();
  const start = performance.now();
  for (let i = 0; i < s.iterations; i++) call();
  const seconds = (performance.now() - start) / 1000;
  return (2 * s.m * s.n * s.k * s.iterations) / seconds / 1e9;
}

function sgemmBenchmark(s: GemmShape): Benchmark {
  return {
    name: s.name,
    unit: 'GFLOP/s',
    async run(ctx: BenchContext): Promise<BenchResult> {
      const anchor = compileAnchor(ctx.progress);
      ctx.progress(`${s.name}: ${ROUNDS} alternating rounds, ${ctx.threads} threads`);
      let ours = 0;
      let anchorValue: number | null = null;
      for (let round = 0; round < ROUNDS; round++) {
        if ('path' in anchor) anchorValue = Math.max(anchorValue ?? 0, runAnchor(anchor.path, s, ctx.threads));
        ours = Math.max(ours, runOurs(s, ctx.threads));
      }
      if ('missing' in anchor) return { ours, anchor: ANCHOR_NAME, anchorValue: null, note: anchor.missing };
      return { ours, anchor: ANCHOR_NAME, anchorValue };
    },
  };
}

export const benchmarks: Benchmark[] = SHAPES.map(sgemmBenchmark);
