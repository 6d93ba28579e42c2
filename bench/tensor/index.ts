// The tensor suite: GEMM against OpenBLAS, training throughput against PyTorch.
import type { Benchmark } from '../types.js';
import { benchmarks as sgemm } from './sgemm.js';
import { benchmarks as train } from './train.js';

export const benchmarks: Benchmark[] = [...sgemm, ...train];
