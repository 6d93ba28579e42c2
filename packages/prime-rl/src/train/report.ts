// Terminal reporting shared by trainers: one progress line per step and summary statistics.

export interface StepLine {
  seconds: number;
  loss: number;
  gradNorm: number;
  lr: number;
  tokensPerSecond: number;
  extra?: string;
}

/** `Step 12/100 | Time 1.23s | Loss 2.3456 | Grad. Norm 0.812 | LR 1.00e-3 | Throughput 12,345 tok/s`. */
export function formatStepLine(step: number, maxSteps: number | null, line: StepLine): string {
  const parts = [
    `Step ${step}${maxSteps === null ? '' : `/${maxSteps}`}`,
    `Time ${line.seconds.toFixed(2)}s`,
    `Loss ${line.loss.toFixed(4)}`,
    `Grad. Norm ${line.gradNorm.toFixed(3)}`,
    `LR ${line.lr.toExponential(2)}`,
    `Throughput ${Math.round(line.tokensPerSecond).toLocaleString('en-US')} tok/s`,
  ];
  if (line.extra) parts.push(line.extra);
  return parts.join(' | ');
}

/** "mean ± std [min, max]" of the values (as the reference's bench table prints). */
export function summarize(values: readonly number[]): string {
  if (values.length === 0) return 'n/a';
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  const std = Math.sqrt(values.reduce((a, b) => a + (b - mean) ** 2, 0) / values.length);
  const fmt = (x: number): string => Math.round(x).toLocaleString('en-US');
  return `${fmt(mean)} ± ${fmt(std)} [${fmt(Math.min(...values))}, ${fmt(Math.max(...values))}]`;
}
