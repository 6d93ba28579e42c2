// Attaching LoRA to a DecoderModel: adapters on the targeted linear layers, trainable copies of the
// modules_to_save (PEFT's ModulesToSaveWrapper: the original stays untouched and comes back on
// detach), every base parameter frozen. Merge folds scale·B·A into the base weights in place and
// unmerge takes it out again; mergedParams gives merged weights without touching the model.
import * as T from '@prime-rl/tensor';
import type { Tensor } from '@prime-rl/tensor';
import type { DecoderModel } from '../model/decoder.js';
import { loraConfig, loraScale, type LoraConfig } from './config.js';
import { LoraLinear, type LoraState } from './linear.js';
import { adaptableModules, matchModules, moduleOf, parameterModules } from './match.js';
import { loraTensorName, savedTensorName } from './names.js';

export interface AttachOptions {
  /** Seeds the init of A and the dropout masks (default 0). */
  seed?: number;
  /** Start in training mode, i.e. with dropout on (default true). */
  training?: boolean;
}

/** The modules one config selects on one model. */
export interface LoraModules {
  /** Linear layers that get adapters, in layer order. */
  targets: string[];
  /** Modules trained in full. */
  savedModules: string[];
  /** The parameters of savedModules, by Hugging Face name. */
  savedParameters: string[];
}

/** The adapter tensors to attach: A and B by module, trainable copies by parameter name. */
export interface LoraWeights {
  lora: Map<string, { loraA: Tensor; loraB: Tensor }>;
  saved: Map<string, Tensor>;
}

/** Which modules `config` selects on `model`; throws for a pattern that matches nothing. */
export function resolveLoraModules(model: DecoderModel, config: LoraConfig): LoraModules {
  const targets = matchModules(config.targetModules, adaptableModules(model.config), 'target_modules');
  const savedModules =
    config.modulesToSave.length > 0
      ? matchModules(config.modulesToSave, parameterModules(model.config), 'modules_to_save')
      : [];
  const targetSet = new Set(targets);
  for (const module of savedModules)
    if (targetSet.has(module))
      throw new Error(`LoRA: module '${module}' is selected by both target_modules and modules_to_save`);
  const savedSet = new Set(savedModules);
  const savedParameters = [...model.params.keys()].filter((name) => savedSet.has(moduleOf(name)));
  return { targets, savedModules, savedParameters };
}

/** Models with an attached LoRA (one at a time: adapters would otherwise stack on the same layers). */
const attachments = new WeakMap<DecoderModel, LoraHandle>();

/** The LoRA attached to `model`, if any. */
export function attachedLora(model: DecoderModel): LoraHandle | undefined {
  return attachments.get(model);
}

/** Throws when `model` cannot take adapters on `targets` (a LoRA is attached, or a layer has an adapter). */
export function checkCanAttach(model: DecoderModel, targets: readonly string[]): void {
  if (attachments.has(model)) throw new Error('attachLora: this model already has a LoRA attached; detach it first');
  for (const module of targets)
    if (model.adapters.has(module)) throw new Error(`attachLora: module '${module}' already has an adapter`);
}

/**
 * Attaches fresh LoRA adapters (PEFT's init: A uniform(±1/√in) from the seed, B zeros, so the model's
 * output is unchanged until training moves B).
 */
export function attachLora(
  model: DecoderModel,
  config: Partial<LoraConfig> = {},
  options: AttachOptions = {},
): LoraHandle {
  const full = loraConfig(config);
  const modules = resolveLoraModules(model, full);
  checkCanAttach(model, modules.targets);
  const generator = new T.Generator(options.seed ?? 0);
  const weights: LoraWeights = { lora: new Map(), saved: new Map() };
  for (const module of modules.targets) {
    const [outFeatures, inFeatures] = model.params.get(`${module}.weight`)!.shape as [number, number];
    weights.lora.set(module, LoraLinear.initWeights(outFeatures, inFeatures, full.rank, generator));
  }
  for (const name of modules.savedParameters) {
    const base = model.params.get(name)!;
    weights.saved.set(name, T.keep(T.tensor(base.toArray(), base.shape)));
  }
  return new LoraHandle(model, full, modules, weights, {
    generator,
    training: options.training ?? true,
    trainable: true,
  });
}

/** One LoRA attached to one model. */
export class LoraHandle {
  /** The trainable tensors under PEFT's names (give these to the optimizer). */
  readonly params = new Map<string, Tensor>();
  /** The adapters by module name. */
  readonly adapters = new Map<string, LoraLinear>();
  readonly scale: number;
  private readonly state: LoraState;
  /** The base tensors the trainable copies replaced, by parameter name. */
  private readonly originals = new Map<string, Tensor>();
  /** requiresGrad of every base parameter before attaching. */
  private readonly requiredGrad = new Map<string, boolean>();
  private isAttached = true;

  /** Attaches `weights` (takes ownership of them); see attachLora and loadAdapter. */
  constructor(
    readonly model: DecoderModel,
    readonly config: LoraConfig,
    readonly modules: LoraModules,
    weights: LoraWeights,
    options: { generator: T.Generator; training: boolean; trainable: boolean },
  ) {
    checkCanAttach(model, modules.targets);
    this.scale = loraScale(config);
    this.state = { training: options.training, merged: false, generator: options.generator };

    for (const [name, p] of model.params) {
      this.requiredGrad.set(name, p.requiresGrad);
      p.requiresGrad = false;
    }
    for (const name of modules.savedParameters) {
      const copy = weights.saved.get(name)!;
      copy.requiresGrad = options.trainable;
      copy.name = name;
      this.originals.set(name, model.params.get(name)!);
      model.params.set(name, copy);
      this.params.set(savedTensorName(name), copy);
    }
    for (const module of modules.targets) {
      const { loraA, loraB } = weights.lora.get(module)!;
      const adapter = new LoraLinear(module, loraA, loraB, this.scale, config.dropout, this.state);
      for (const [which, t] of [
        ['lora_A', loraA],
        ['lora_B', loraB],
      ] as const) {
        t.requiresGrad = options.trainable;
        t.name = loraTensorName(module, which);
        this.params.set(t.name, t);
      }
      this.adapters.set(module, adapter);
      model.adapters.set(module, adapter);
    }
    attachments.set(model, this);
  }

  get attached(): boolean {
    return this.isAttached;
  }

  get training(): boolean {
    return this.state.training;
  }

  /** Training mode (dropout on) or evaluation mode (dropout off). */
  train(training = true): void {
    this.state.training = training;
  }

  get merged(): boolean {
    return this.state.merged;
  }

  /** Number of trainable elements (adapters and modules_to_save copies). */
  parameterCount(): number {
    let n = 0;
    for (const p of this.params.values()) n += p.size;
    return n;
  }

  /** Adds scale·B·A into each targeted base weight in place; the adapters then pass through. No-op when merged. */
  merge(): void {
    this.assertAttached('merge');
    if (this.state.merged) return;
    this.applyDeltas(1);
    this.state.merged = true;
  }

  /** Subtracts what merge() added (exact up to float rounding). No-op when not merged. */
  unmerge(): void {
    this.assertAttached('unmerge');
    if (!this.state.merged) return;
    this.applyDeltas(-1);
    this.state.merged = false;
  }

  private applyDeltas(sign: 1 | -1): void {
    T.noGrad(() => {
      for (const [module, adapter] of this.adapters)
        T.tidy(() => {
          const weight = this.model.params.get(`${module}.weight`)!;
          const delta = adapter.delta();
          T.copyInto(sign > 0 ? T.add(weight, delta) : T.sub(weight, delta), weight);
        });
    });
  }

  /**
   * The model's parameters by Hugging Face name with the LoRA updates merged in, for
   * `savePretrained(model, dir, { params })`. The model is not touched. The merged weights of targeted
   * modules are new tensors (free them with `disposeMergedParams`); the rest are the model's own
   * (modules_to_save as their trained copies).
   */
  mergedParams(): Map<string, Tensor> {
    this.assertAttached('mergedParams');
    const out = new Map(this.model.params);
    if (this.state.merged) return out;
    T.noGrad(() => {
      for (const [module, adapter] of this.adapters) {
        const name = `${module}.weight`;
        out.set(
          name,
          T.tidy(() => T.add(this.model.params.get(name)!, adapter.delta())),
        );
      }
    });
    return out;
  }

  /** Frees the tensors of a mergedParams() result that are not the model's own. */
  disposeMergedParams(params: ReadonlyMap<string, Tensor>): void {
    const own = new Set(this.model.params.values());
    for (const t of params.values()) if (!own.has(t)) t.dispose();
  }

  /**
   * Removes the adapters (unmerging first if merged), puts the original modules_to_save tensors and
   * every parameter's requiresGrad back, and frees the adapter tensors. Save before detaching.
   */
  detach(): void {
    this.assertAttached('detach');
    this.unmerge();
    for (const [module, adapter] of this.adapters)
      if (this.model.adapters.get(module) === adapter) this.model.adapters.delete(module);
    for (const [name, original] of this.originals) this.model.params.set(name, original);
    for (const [name, requiresGrad] of this.requiredGrad) {
      const p = this.model.params.get(name);
      if (p) p.requiresGrad = requiresGrad;
    }
    for (const p of this.params.values()) p.dispose();
    attachments.delete(this.model);
    this.isAttached = false;
  }

  private assertAttached(what: string): void {
    if (!this.isAttached) throw new Error(`LoRA ${what}: the adapters were detached`);
  }
}
