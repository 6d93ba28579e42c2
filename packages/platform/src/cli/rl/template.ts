// The commented `rl.toml` written by `prime rl init`. The active part is a complete, valid config;
// every commented example block is valid too when its lines are uncommented (tests check both).

/** The model the template trains: a small model already warmed up on reverse-text by SFT. */
export const TEMPLATE_MODEL = 'PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT';
export const DEFAULT_TEMPLATE_ENV = 'primeintellect/reverse-text';

/**
 * `note`: explanation lines (rendered `# …`); `active`: TOML as is; `example`: TOML rendered
 * commented out (`# …`), meant to be uncommented as a whole.
 */
export interface TemplatePart {
  kind: 'note' | 'active' | 'example';
  lines: string[];
}

export function templateParts(envId: string = DEFAULT_TEMPLATE_ENV): TemplatePart[] {
  const note = (...lines: string[]): TemplatePart => ({ kind: 'note', lines });
  const active = (...lines: string[]): TemplatePart => ({ kind: 'active', lines });
  const example = (...lines: string[]): TemplatePart => ({ kind: 'example', lines });
  return [
    note(
      'rl.toml: one hosted RL training run, started with `prime rl run rl.toml`.',
      'Commented-out settings (like "# name = ...") are optional: delete the "# " to use one.',
      'Keys not described here are rejected.',
    ),
    note('Model to train (Hugging Face id). `prime rl models` lists the models the service offers.'),
    active(`model = "${TEMPLATE_MODEL}"`),
    note(
      'One step trains on one batch. batch_size counts rollouts; rollouts_per_example is the group',
      'of rollouts sampled for the same prompt and scored against each other.',
      'batch_size must be a multiple of rollouts_per_example.',
    ),
    active('max_steps = 100', 'batch_size = 128', 'rollouts_per_example = 8'),
    note('A display name for the run.'),
    example('name = "reverse-text-lora"'),
    note(
      'Secrets for the run (W&B key, API keys your environment reads), as .env files.',
      'Paths are relative to this file. Also possible: --env-file FILE and -e KEY[=VALUE].',
    ),
    example('env_files = ["secrets.env"]'),
    note('Advanced training options.'),
    example(
      'trajectory_strategy = "interleaved"  # or "branching": one training sample per turn',
      'learning_rate = 1e-6',
      'lora_alpha = 16',
      'oversampling_factor = 2.0           # rollouts in flight per batch; 2.0 suits difficulty filtering',
      'max_async_level = 2                 # steps inference may run ahead; keep it >= oversampling_factor',
    ),
    note("Sampling. max_tokens is per turn: keep it set, and below the cluster's sequence length."),
    active('[sampling]', 'max_tokens = 2048'),
    example('temperature = 1.0                   # 0 = greedy; must not be negative'),
    note('Training environments from the Environments Hub (owner/name), one [[env]] table each.'),
    active('[[env]]', `id = "${envId}"`),
    note(
      'Another environment, with keyword arguments for its load_environment(). Never put a secret',
      'in args: pass the name of a variable (e.g. api_key_var = "MY_API_KEY") and provide it as a secret.',
    ),
    example(
      '[[env]]',
      'id = "primeintellect/alphabet-sort"',
      'name = "alphabet-sort"',
      'args = { max_examples = 1000 }',
    ),
    note('Weights & Biases logging. Needs WANDB_API_KEY among the secrets.'),
    example('[wandb]', 'project = "my-project"', 'entity = "my-team"', 'name = "reverse-text-lora"'),
    note('Evaluation during training. [eval] sets defaults; each [[eval.env]] may override them.'),
    example(
      '[eval]',
      'interval = 50                       # every 50 steps',
      'num_examples = -1                   # -1 = all examples',
      'rollouts_per_example = 1',
      'eval_base_model = true              # also evaluate the model before training',
      '',
      '[[eval.env]]',
      `id = "${envId}"`,
      'num_examples = 64',
      'rollouts_per_example = 2',
    ),
    note("Validation on the training environments' eval split (their training data when they have none)."),
    example('[val]', 'num_examples = 64', 'rollouts_per_example = 1', 'interval = 10'),
    note(
      'Sampling buffer and online difficulty filtering. env_ratios holds one weight per [[env]]',
      '(e.g. [0.5, 0.5] with two environments).',
    ),
    example(
      '[buffer]',
      'online_difficulty_filtering = true  # skip groups whose rollouts all scored 0 or all scored 1',
      'easy_threshold = 0.8                # retire examples whose mean reward reaches 0.8 ...',
      'hard_threshold = 0.2                # ... or stays at 0.2 or below',
      'easy_fraction = 0.0                 # share of retired easy / hard examples brought back on resume',
      'hard_fraction = 0.0',
      'env_ratios = [1.0]',
      'skip_verification = false',
      'seed = 42',
    ),
  ];
}

/** Render the parts; `uncomment` selects example parts (by index in the parts list) to render active. */
export function renderTemplate(parts: readonly TemplatePart[], uncomment: ReadonlySet<number> = new Set()): string {
  const out: string[] = [];
  parts.forEach((part, i) => {
    // a blank line before every note, so each note starts a paragraph with what follows it
    if (part.kind === 'note' && out.length > 0) out.push('');
    for (const line of part.lines) {
      if (part.kind === 'note') out.push(`# ${line}`);
      else if (part.kind === 'active' || uncomment.has(i)) out.push(line);
      else out.push(line === '' ? '#' : `# ${line}`);
    }
  });
  return `${out.join('\n')}\n`;
}

export function renderDefaultTemplate(envId?: string): string {
  return renderTemplate(templateParts(envId));
}
