// Explicit ownership of tensor memory. `tidy(fn)` disposes every tensor created while fn runs,
// except what fn returns and what was `keep()`-ed (parameters, gradients, optimizer state).
// Returned tensors move to the enclosing scope. Outside any scope, tensors live until disposed.
import type { Tensor } from './tensor.js';

const scopes: Tensor[][] = [];

/** Called by the Tensor constructor. */
export function track(t: Tensor): void {
  scopes[scopes.length - 1]?.push(t);
}

export function scopeDepth(): number {
  return scopes.length;
}

function collect(value: unknown, into: Set<Tensor>, depth = 0): void {
  if (value === null || typeof value !== 'object' || depth > 3) return;
  if ((value as { isTensor?: unknown }).isTensor === true) {
    into.add(value as Tensor);
    return;
  }
  if (Array.isArray(value)) for (const v of value) collect(v, into, depth + 1);
  else if (value instanceof Map) for (const v of value.values()) collect(v, into, depth + 1);
  else if (Object.getPrototypeOf(value) === Object.prototype)
    for (const v of Object.values(value as Record<string, unknown>)) collect(v, into, depth + 1);
}

/**
 * Runs fn in a new scope. Tensors created inside are disposed when it returns, except those in
 * its result (a tensor, or arrays / plain objects / Maps of them) and kept tensors.
 */
export function tidy<T>(fn: () => T): T {
  scopes.push([]);
  let result: T;
  let created: Tensor[];
  try {
    result = fn();
  } catch (error) {
    created = scopes.pop()!;
    for (const t of created) if (!t.kept) t.dispose();
    throw error;
  }
  created = scopes.pop()!;
  if (result instanceof Promise) throw new TypeError('tidy: the function must be synchronous (it returned a Promise)');
  const survivors = new Set<Tensor>();
  collect(result, survivors);
  for (const t of created) {
    if (t.kept || t.isDisposed) continue;
    if (survivors.has(t)) scopes[scopes.length - 1]?.push(t);
    else t.dispose();
  }
  return result;
}

/** Marks a tensor as owned by the caller: no scope will dispose it. Returns it. */
export function keep<T extends Tensor>(t: T): T {
  t.kept = true;
  return t;
}
