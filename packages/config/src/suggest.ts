// "Did you mean" suggestions: the most similar known name, if similar enough.

/** Similarity in [0, 1]: 2·LCS / (|a| + |b|), close to Python difflib's ratio for short names. */
export function similarity(a: string, b: string): number {
  if (a.length + b.length === 0) return 1;
  const prev = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    let diag = 0;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j]!;
      prev[j] = a[i - 1] === b[j - 1] ? diag + 1 : Math.max(prev[j]!, prev[j - 1]!);
      diag = up;
    }
  }
  return (2 * prev[b.length]!) / (a.length + b.length);
}

export function closest(name: string, candidates: Iterable<string>, cutoff = 0.6): string | undefined {
  let best: string | undefined;
  let bestScore = cutoff;
  for (const c of candidates) {
    const score = similarity(name, c);
    if (score >= bestScore && (best === undefined || score > bestScore)) {
      best = c;
      bestScore = score;
    }
  }
  return best;
}
