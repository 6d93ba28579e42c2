// Whether operations record the autograd graph. `noGrad(fn)` turns recording off inside fn.
let enabled = true;

export function isGradEnabled(): boolean {
  return enabled;
}

export function noGrad<T>(fn: () => T): T {
  return withGradMode(false, fn);
}

export function enableGrad<T>(fn: () => T): T {
  return withGradMode(true, fn);
}

function withGradMode<T>(mode: boolean, fn: () => T): T {
  const previous = enabled;
  enabled = mode;
  try {
    return fn();
  } finally {
    enabled = previous;
  }
}
