// LoRA hyper-parameters (`model.experimental.lora` in the trainer config, in camelCase): rank, alpha,
// dropout, which linear layers get adapters, and which modules stay fully trainable.

export const DEFAULT_LORA_TARGET_MODULES: readonly string[] = [
  'q_proj',
  'k_proj',
  'v_proj',
  'o_proj',
  'gate_proj',
  'up_proj',
  'down_proj',
];

export interface LoraConfig {
  /** Rank r of the low-rank update B·A. */
  rank: number;
  /** The update is scaled by alpha / rank. */
  alpha: number;
  /** Dropout probability on the adapter's input (training mode only). */
  dropout: number;
  /** Linear layers that get adapters: module names or regular expressions (see match.ts). */
  targetModules: readonly string[];
  /** Modules trained in full (a trainable copy replaces their weights while attached). */
  modulesToSave: readonly string[];
}

/** The defaults of `model.experimental.lora`, with `options` on top; throws naming a bad field. */
export function loraConfig(options: Partial<LoraConfig> = {}): LoraConfig {
  const config: LoraConfig = {
    rank: options.rank ?? 16,
    alpha: options.alpha ?? 16,
    dropout: options.dropout ?? 0,
    targetModules: [...(options.targetModules ?? DEFAULT_LORA_TARGET_MODULES)],
    modulesToSave: [...(options.modulesToSave ?? [])],
  };
  validateLoraConfig(config);
  return config;
}

/** Checks the ranges of the spec (rank ≥ 1, alpha ≥ 0, dropout in [0, 1], non-empty pattern strings). */
export function validateLoraConfig(config: LoraConfig): void {
  if (!Number.isInteger(config.rank) || config.rank < 1)
    throw new RangeError(`LoRA config: rank must be a positive integer, got ${String(config.rank)}`);
  if (!(Number.isFinite(config.alpha) && config.alpha >= 0))
    throw new RangeError(`LoRA config: alpha must be a finite number ≥ 0, got ${String(config.alpha)}`);
  if (!(config.dropout >= 0 && config.dropout <= 1))
    throw new RangeError(`LoRA config: dropout must be in [0, 1], got ${String(config.dropout)}`);
  if (config.targetModules.length === 0) throw new RangeError('LoRA config: targetModules is empty');
  for (const [field, patterns] of [
    ['targetModules', config.targetModules],
    ['modulesToSave', config.modulesToSave],
  ] as const)
    for (const pattern of patterns)
      if (typeof pattern !== 'string' || pattern.length === 0)
        throw new TypeError(`LoRA config: ${field} entries must be non-empty strings, got ${JSON.stringify(pattern)}`);
}

/** The factor on B·A: alpha / rank (PEFT's `scaling` without rsLoRA). */
export function loraScale(config: Pick<LoraConfig, 'rank' | 'alpha'>): number {
  return config.alpha / config.rank;
}
