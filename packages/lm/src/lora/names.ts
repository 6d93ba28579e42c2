// Tensor names in PEFT's layout. PEFT wraps the model twice (PeftModel.base_model = LoraModel,
// LoraModel.model = the transformers model), so every key starts with `base_model.model.`; the adapter
// name (`default`) is dropped from saved keys.

export const PEFT_PREFIX = 'base_model.model.';

/** `base_model.model.<module>.lora_A.weight` / `.lora_B.weight`. */
export function loraTensorName(module: string, which: 'lora_A' | 'lora_B'): string {
  return `${PEFT_PREFIX}${module}.${which}.weight`;
}

/** A modules_to_save parameter: `base_model.model.<parameter>` (e.g. `base_model.model.lm_head.weight`). */
export function savedTensorName(parameter: string): string {
  return `${PEFT_PREFIX}${parameter}`;
}

/** The same parameter as older PEFT versions saved it: `base_model.model.<module>.modules_to_save.<leaf>`. */
export function legacySavedTensorName(parameter: string): string {
  const dot = parameter.lastIndexOf('.');
  return `${PEFT_PREFIX}${parameter.slice(0, dot)}.modules_to_save${parameter.slice(dot)}`;
}
