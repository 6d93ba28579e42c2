// Trainer checkpoints: `<output_dir>/checkpoints/step_N/trainer/` holds everything needed to resume
// after step N finished (spec rl.md §10, current-era semantics): the trainable weights and optimizer
// state as safetensors, and progress, scheduler and data-loader state as JSON. A checkpoint is
// written into a temporary directory and renamed into place, so a crash leaves either the previous
// checkpoint or the complete new one — never a torn one.
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import * as T from '@prime-rl/tensor';
import type { Tensor } from '@prime-rl/tensor';
import { readJsonFile, readSafetensors, storedToF32, writeFileAtomic, writeSafetensors } from '@prime-rl/lm';
import type { StoredTensor } from '@prime-rl/lm';

export interface Progress {
  step: number;
  totalTokens: number;
  totalSamples: number;
}

export interface CheckpointState {
  progress: Progress;
  scheduler: { steps: number };
  /** Data-loader resume point (JSON); null when the trainer has none. */
  dataloader: unknown;
}

const STATE_FILE = 'state.json';
const WEIGHTS_FILE = 'model.safetensors';
const OPTIMIZER_FILE = 'optimizer.safetensors';

export const checkpointDir = (outputDir: string, step: number): string =>
  join(outputDir, 'checkpoints', `step_${step}`);

/** Steps of the complete checkpoints under `<outputDir>/checkpoints`, ascending. */
export async function listCheckpoints(outputDir: string): Promise<number[]> {
  const root = join(outputDir, 'checkpoints');
  const names = await readdir(root).catch(() => [] as string[]);
  const steps: number[] = [];
  for (const name of names) {
    const m = /^step_(\d+)$/.exec(name);
    if (!m) continue;
    const complete = await stat(join(root, name, 'trainer', STATE_FILE)).then(
      () => true,
      () => false,
    );
    if (complete) steps.push(Number(m[1]));
  }
  return steps.sort((a, b) => a - b);
}

/** The step to resume from: `resume_step` N, or −1 for the latest; errors name what is missing. */
export async function resolveResumeStep(outputDir: string, resumeStep: number): Promise<number> {
  const steps = await listCheckpoints(outputDir);
  if (resumeStep === -1) {
    if (steps.length === 0)
      throw new Error(`ckpt.resume_step = -1: no checkpoint found under ${join(outputDir, 'checkpoints')}`);
    return steps[steps.length - 1]!;
  }
  if (!steps.includes(resumeStep))
    throw new Error(
      `ckpt.resume_step = ${resumeStep}: no complete checkpoint at ${checkpointDir(outputDir, resumeStep)}` +
        (steps.length ? ` (available: ${steps.join(', ')})` : ''),
    );
  return resumeStep;
}

function f32Stored(t: Tensor): StoredTensor {
  const c = T.contiguous(t);
  const data = c.f32('checkpoint').slice(c.offset, c.offset + c.size);
  if (c !== t) c.dispose();
  return { dtype: 'F32', shape: [...t.shape], data };
}

/** Writes the checkpoint of step `step` (replacing one that exists). */
export async function saveCheckpoint(
  outputDir: string,
  step: number,
  params: ReadonlyMap<string, Tensor>,
  optimizer: T.Optimizer,
  state: CheckpointState,
): Promise<string> {
  const root = join(outputDir, 'checkpoints');
  await mkdir(root, { recursive: true });
  const final = checkpointDir(outputDir, step);
  const staging = join(root, `.step_${step}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const trainerDir = join(staging, 'trainer');
  await mkdir(trainerDir, { recursive: true });
  try {
    const weights = new Map<string, StoredTensor>();
    for (const [name, p] of params) if (p.requiresGrad) weights.set(name, f32Stored(p));
    await writeSafetensors(join(trainerDir, WEIGHTS_FILE), weights, { format: 'pt' });
    const optimizerState = optimizer.stateDict();
    const slots = new Map<string, StoredTensor>();
    for (const [key, values] of Object.entries(optimizerState.tensors))
      slots.set(key, { dtype: 'F32', shape: [values.length], data: values });
    await writeSafetensors(join(trainerDir, OPTIMIZER_FILE), slots, {
      type: optimizerState.type,
      step: String(optimizerState.step),
      hyper: JSON.stringify(optimizerState.hyper),
    });
    await writeFileAtomic(join(trainerDir, STATE_FILE), JSON.stringify({ version: 1, ...state }, null, 2) + '\n');
    // Swap in: move an existing checkpoint of this step aside first, so one always exists.
    const old = `${staging}.old`;
    const hadOld = await rename(final, old).then(
      () => true,
      () => false,
    );
    await rename(staging, final);
    if (hadOld) await rm(old, { recursive: true, force: true });
    return final;
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw error;
  }
}

export interface LoadedCheckpoint {
  state: CheckpointState;
}

/**
 * Restores step `step`'s checkpoint into `params` (values copied in place) and `optimizer`; returns
 * the JSON state for the caller to apply to progress, scheduler and data loader as its skip_* knobs say.
 */
export async function loadCheckpoint(
  outputDir: string,
  step: number,
  params: ReadonlyMap<string, Tensor>,
  optimizer: T.Optimizer | null,
): Promise<LoadedCheckpoint> {
  const dir = join(checkpointDir(outputDir, step), 'trainer');
  const raw = await readJsonFile(join(dir, STATE_FILE));
  const weightsPath = join(dir, WEIGHTS_FILE);
  const { tensors } = await readSafetensors(weightsPath);
  for (const [name, p] of params) {
    if (!p.requiresGrad) continue;
    const stored = tensors.get(name);
    if (!stored)
      throw new Error(
        `${weightsPath}: no tensor '${name}' (was the checkpoint made with another model or LoRA setup?)`,
      );
    if (stored.shape.join() !== p.shape.join())
      throw new Error(
        `${weightsPath}: '${name}' has shape [${stored.shape.join(', ')}], the model has [${p.shape.join(', ')}]`,
      );
    const values = storedToF32(name, stored, weightsPath);
    p.f32('checkpoint').set(values.f32('checkpoint'));
    values.dispose();
  }
  if (optimizer) {
    const optimizerPath = join(dir, OPTIMIZER_FILE);
    const { tensors: slots, metadata } = await readSafetensors(optimizerPath);
    const state: T.OptimizerState = {
      type: metadata['type'] ?? '',
      step: Number(metadata['step'] ?? 0),
      hyper: JSON.parse(metadata['hyper'] ?? '{}') as Record<string, number | boolean>,
      tensors: {},
    };
    for (const [key, stored] of slots) {
      if (stored.dtype !== 'F32') throw new Error(`${optimizerPath}: '${key}' is ${stored.dtype}, expected F32`);
      state.tensors[key] = stored.data;
    }
    try {
      optimizer.loadStateDict(state);
    } catch (error) {
      throw new Error(`${optimizerPath}: ${(error as Error).message}`);
    }
  }
  return { state: raw as unknown as CheckpointState };
}

/**
 * Retention (spec rl.md §10.3): keep the `keepLast` most recent checkpoints and every step divisible
 * by `keepInterval`; delete the rest. Null keepLast keeps everything.
 */
export async function pruneCheckpoints(
  outputDir: string,
  keepLast: number | null,
  keepInterval: number | null,
): Promise<number[]> {
  if (keepLast === null) return [];
  const steps = await listCheckpoints(outputDir);
  const recent = new Set(steps.slice(-keepLast));
  const removed: number[] = [];
  for (const step of steps) {
    if (recent.has(step) || (keepInterval !== null && step % keepInterval === 0)) continue;
    await rm(checkpointDir(outputDir, step), { recursive: true, force: true });
    removed.push(step);
  }
  return removed;
}
