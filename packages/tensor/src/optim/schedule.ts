// Learning-rate schedules (spec rl.md §8.2). k counts previous scheduler steps, so the first
// optimizer update uses k = 0.

export type ScheduleConfig =
  | { type: 'constant' }
  | { type: 'linear'; warmupSteps: number; decaySteps: number; minLr: number; maxSteps?: number }
  | { type: 'cosine'; warmupSteps: number; minLr: number; maxSteps: number };

/** The learning rate of update k for base rate lr. */
export function learningRateAt(config: ScheduleConfig, lr: number, k: number): number {
  if (config.type === 'constant') return lr;
  const w = config.warmupSteps;
  const f0 = config.minLr > 0 ? config.minLr / lr : 1e-8;
  if (k < w) return lr * (f0 + ((1 - f0) * k) / w);
  if (config.type === 'linear') {
    const d = config.decaySteps;
    if (d === 0 || config.maxSteps === undefined) return lr;
    const decayStart = config.maxSteps - d;
    if (k < decayStart) return lr;
    const j = k - decayStart;
    const progress = d === 1 ? 1 : Math.min(j, d - 1) / (d - 1);
    return lr * (1 + (f0 - 1) * progress);
  }
  const j = k - w;
  const t = config.maxSteps - w;
  return config.minLr + ((lr - config.minLr) * (1 + Math.cos((Math.PI * Math.min(j, t)) / t))) / 2;
}

/** Validates a schedule against the run length; throws naming the offending field. */
export function validateSchedule(config: ScheduleConfig, maxSteps: number | undefined): void {
  if (config.type === 'constant') return;
  if (!(config.warmupSteps >= 0)) throw new RangeError(`scheduler.warmup_steps must be ≥ 0, got ${config.warmupSteps}`);
  if (config.type === 'linear') {
    if (config.warmupSteps === 0 && config.decaySteps === 0)
      throw new RangeError('scheduler: linear needs warmup_steps > 0 or decay_steps > 0');
    if (config.decaySteps > 0) {
      if (maxSteps === undefined) throw new RangeError('scheduler.decay_steps needs max_steps');
      if (config.warmupSteps + config.decaySteps > maxSteps)
        throw new RangeError(
          `scheduler: warmup_steps + decay_steps (${config.warmupSteps + config.decaySteps}) exceeds max_steps (${maxSteps})`,
        );
    }
  } else if (config.warmupSteps >= config.maxSteps)
    throw new RangeError(
      `scheduler: cosine needs warmup_steps (${config.warmupSteps}) < max_steps (${config.maxSteps})`,
    );
}

/** A stepping scheduler: lr() for the next update, step() after it; state is one counter. */
export class Scheduler {
  steps = 0;
  constructor(
    readonly config: ScheduleConfig,
    readonly baseLr: number,
  ) {}

  lr(): number {
    return learningRateAt(this.config, this.baseLr, this.steps);
  }

  step(): void {
    this.steps++;
  }

  stateDict(): { steps: number } {
    return { steps: this.steps };
  }

  loadStateDict(state: { steps: number }): void {
    if (!Number.isInteger(state.steps) || state.steps < 0)
      throw new RangeError(`scheduler state: steps must be a non-negative integer, got ${state.steps}`);
    this.steps = state.steps;
  }
}
