// Which backend runs kernels in this process. Chosen once, before the first tensor is made:
// `useBackend('ref' | 'cpu')`, or the PRIME_TENSOR_BACKEND environment variable; the default is
// the native `cpu` backend. Thread count: `setThreads(n)` or PRIME_TENSOR_THREADS.
import { availableParallelism } from 'node:os';
import type { Kernels } from './kernels.js';
import { refKernels } from './ref/index.js';
import { createCpuKernels } from './cpu/index.js';

export type BackendName = 'ref' | 'cpu';
export const BACKEND_NAMES: readonly BackendName[] = ['ref', 'cpu'];

let current: Kernels | undefined;

function create(name: BackendName): Kernels {
  return name === 'ref' ? refKernels : createCpuKernels();
}

function parseBackendName(value: string, where: string): BackendName {
  if ((BACKEND_NAMES as readonly string[]).includes(value)) return value as BackendName;
  throw new Error(`${where}: unknown tensor backend '${value}' (expected one of: ${BACKEND_NAMES.join(', ')})`);
}

function defaultThreads(): number {
  const raw = process.env.PRIME_TENSOR_THREADS;
  if (raw === undefined || raw === '') return Math.max(1, availableParallelism());
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 256)
    throw new Error(`PRIME_TENSOR_THREADS: expected an integer in [1, 256], got '${raw}'`);
  return n;
}

/** The active backend (created on first use from PRIME_TENSOR_BACKEND, default 'cpu'). */
export function kernels(): Kernels {
  if (!current) {
    const raw = process.env.PRIME_TENSOR_BACKEND;
    const name = raw ? parseBackendName(raw, 'PRIME_TENSOR_BACKEND') : 'cpu';
    current = create(name);
    current.setThreads(defaultThreads());
  }
  return current;
}

/** Selects the backend for this process. Tensors made under another backend stay valid (both use host memory). */
export function useBackend(name: BackendName, options: { threads?: number } = {}): Kernels {
  current = create(parseBackendName(name, 'useBackend'));
  current.setThreads(options.threads ?? defaultThreads());
  return current;
}

/** Kernels of a named backend without making it the active one (tests compare backends this way). */
export function backendKernels(name: BackendName): Kernels {
  return create(parseBackendName(name, 'backendKernels'));
}

/** Swaps the active kernel object (profiling wrappers use this). */
export function replaceKernels(k: Kernels): void {
  current = k;
}

export function setThreads(n: number): void {
  kernels().setThreads(n);
}

export function backendName(): string {
  return kernels().name;
}
