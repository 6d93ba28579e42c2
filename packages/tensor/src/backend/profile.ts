// Kernel-level profiling: time and call count per kernel while a function runs.
//   const { result, report } = T.profileKernels(() => step());
import type { Kernels } from './kernels.js';
import { kernels, replaceKernels } from './select.js';

export interface KernelTiming {
  kernel: string;
  calls: number;
  ms: number;
}

export function profileKernels<T>(fn: () => T): { result: T; report: KernelTiming[]; totalMs: number } {
  const inner = kernels();
  const timings = new Map<string, KernelTiming>();
  const wrapped = { ...inner } as Record<string, unknown>;
  for (const [name, value] of Object.entries(inner)) {
    if (typeof value !== 'function' || name === 'threads' || name === 'setThreads') continue;
    const f = value as (...args: unknown[]) => unknown;
    wrapped[name] = (...args: unknown[]) => {
      const start = performance.now();
      try {
        return f.apply(inner, args);
      } finally {
        const op = typeof args[0] === 'string' ? `${name}:${args[0]}` : name;
        let t = timings.get(op);
        if (!t) timings.set(op, (t = { kernel: op, calls: 0, ms: 0 }));
        t.calls++;
        t.ms += performance.now() - start;
      }
    };
  }
  replaceKernels(wrapped as unknown as Kernels);
  const start = performance.now();
  try {
    const result = fn();
    return { result, report: [...timings.values()].sort((a, b) => b.ms - a.ms), totalMs: performance.now() - start };
  } finally {
    replaceKernels(inner);
  }
}
