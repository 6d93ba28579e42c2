// The optimizer and learning-rate schedule of a trainer, built from the `[optim]` and `[scheduler]`
// config sections (spec rl.md §8.1–8.2).
import * as T from '@prime-rl/tensor';
import type { Tensor } from '@prime-rl/tensor';
import type { z } from 'zod';
import type { optimUnion, schedulerUnion } from '../config/training.js';

export type OptimConfig = z.output<ReturnType<typeof optimUnion>>;
export type SchedulerConfig = z.output<ReturnType<typeof schedulerUnion>>;

/** An optimizer over the trainable (requiresGrad) tensors of `params`. */
export function buildOptimizer(config: OptimConfig, params: ReadonlyMap<string, Tensor>): T.Optimizer {
  const common = { lr: config.lr, weightDecay: config.weight_decay };
  switch (config.type) {
    case 'adamw':
      return new T.AdamW(params, { ...common, betas: [config.betas1, config.betas2] });
    case 'sgd':
      return new T.SGD(params, { ...common, momentum: config.momentum, nesterov: config.nesterov });
    case 'muon':
      return new T.Muon(params, { ...common, mu: config.mu, betas: [config.betas1, config.betas2] });
  }
}

/** The schedule for a run of `maxSteps` updates (null: unbounded). */
export function buildScheduler(config: SchedulerConfig, lr: number, maxSteps: number | null): T.Scheduler {
  const steps = maxSteps ?? undefined;
  let schedule: T.ScheduleConfig;
  if (config.type === 'constant') schedule = { type: 'constant' };
  else if (config.type === 'linear')
    schedule = {
      type: 'linear',
      warmupSteps: config.warmup_steps,
      decaySteps: config.decay_steps,
      minLr: config.min_lr,
      ...(steps === undefined ? {} : { maxSteps: steps }),
    };
  else {
    if (steps === undefined) throw new RangeError('scheduler: cosine needs max_steps');
    schedule = { type: 'cosine', warmupSteps: config.warmup_steps, minLr: config.min_lr, maxSteps: steps };
  }
  T.validateSchedule(schedule, steps);
  return new T.Scheduler(schedule, lr);
}
