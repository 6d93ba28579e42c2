// Which modules a `target_modules` / `modules_to_save` pattern selects. A pattern matches a module when
// it equals the module's last name component (`q_proj`), the full name
// (`model.layers.0.self_attn.q_proj`) or a dotted suffix of it (`self_attn.q_proj`, PEFT's rule for
// list entries), or when, as a regular expression, it matches the whole full name
// (`model\.layers\.[01]\.self_attn\.(q|v)_proj`).
import { LAYER_LINEARS, decoderParameterShapes, type DecoderConfig } from '../model/config.js';

/** The compiled form of one pattern. */
interface CompiledPattern {
  source: string;
  regex: RegExp;
}

function compile(pattern: string, field: string): CompiledPattern {
  try {
    return { source: pattern, regex: new RegExp(`^(?:${pattern})$`) };
  } catch (error) {
    throw new Error(`LoRA ${field}: '${pattern}' is not a valid regular expression (${(error as Error).message})`);
  }
}

function matches(pattern: CompiledPattern, module: string): boolean {
  const p = pattern.source;
  return module === p || module.endsWith(`.${p}`) || pattern.regex.test(module);
}

/** Whether `pattern` selects `module` (throws on an invalid regular expression). */
export function moduleMatches(pattern: string, module: string): boolean {
  return matches(compile(pattern, 'pattern'), module);
}

/** A short list of what could have been named: distinct last components, then an example full name. */
function describeAvailable(available: readonly string[]): string {
  const short = [...new Set(available.map((m) => m.slice(m.lastIndexOf('.') + 1)))];
  const example = available.find((m) => m.includes('.')) ?? available[0];
  return `available: ${short.join(', ')}${example ? ` (full names like '${example}')` : ''}`;
}

/**
 * The modules of `available` (in its order) that any pattern selects. Every pattern must select
 * at least one module: one that selects none is an error naming it and listing what is available.
 */
export function matchModules(patterns: readonly string[], available: readonly string[], field: string): string[] {
  const compiled = patterns.map((p) => compile(p, field));
  for (const pattern of compiled)
    if (!available.some((m) => matches(pattern, m)))
      throw new Error(`LoRA ${field}: '${pattern.source}' matches no module; ${describeAvailable(available)}`);
  return available.filter((m) => compiled.some((pattern) => matches(pattern, m)));
}

/** The linear layers that can carry a LoRA adapter, by module name, layer by layer. */
export function adaptableModules(config: DecoderConfig): string[] {
  const modules: string[] = [];
  for (let i = 0; i < config.numLayers; i++)
    for (const linear of LAYER_LINEARS) modules.push(`model.layers.${i}.${linear}`);
  return modules;
}

/** Every module that owns parameters (the name before `.weight` / `.bias`), in parameter order. */
export function parameterModules(config: DecoderConfig): string[] {
  const modules = new Set<string>();
  for (const name of decoderParameterShapes(config).keys()) modules.add(moduleOf(name));
  return [...modules];
}

/** The module of a parameter name (`lm_head.weight` → `lm_head`). */
export function moduleOf(parameter: string): string {
  const dot = parameter.lastIndexOf('.');
  return dot < 0 ? parameter : parameter.slice(0, dot);
}
