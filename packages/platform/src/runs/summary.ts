// The human summary printed before a run is created (hosted CLI spec C.4 step 4). Secret values
// never appear: only their names.
import type { RunRequest } from './request.js';

export function runSummary(req: RunRequest): string[] {
  const lines: string[] = ['Configuration:'];
  const section = (title: string, rows: Array<[string, unknown]>): void => {
    const shown = rows.filter(([, v]) => v !== undefined);
    if (shown.length === 0) return;
    const width = Math.max(...shown.map(([k]) => k.length)) + 1;
    lines.push('', `  ${title}`);
    for (const [k, v] of shown) lines.push(`    ${`${k}:`.padEnd(width + 1)}${String(v)}`);
  };
  section('Model & Environment', [
    ['Model', req.model.name],
    ['Environments', req.environments.map((e) => e.id).join(', ')],
    ['Team', req.team_id],
  ]);
  section('Training', [
    ['Max Steps', req.max_steps],
    ['Batch Size', req.batch_size],
    ['Rollouts per Example', req.rollouts_per_example],
    ['Learning Rate', req.learning_rate],
    ['LoRA Alpha', req.lora_alpha],
    ['Oversampling Factor', req.oversampling_factor],
    ['Max Async Level', req.max_async_level],
    ['Trajectory Strategy', req.trajectory_strategy],
  ]);
  if (req.max_tokens || req.temperature !== undefined) {
    section('Sampling', [
      ['Max Tokens', req.max_tokens],
      ['Temperature', req.temperature],
    ]);
  }
  const w = req.monitoring?.wandb;
  if (w && (w.entity !== undefined || w.project !== undefined)) {
    section('Weights & Biases', [
      ['Project', `${w.entity ?? '?'}/${w.project ?? '?'}`],
      ['Run Name', w.name],
    ]);
  }
  if (req.eval) {
    section('Evaluation', [
      ['Environments', req.eval.environments.map((e) => e.id).join(', ')],
      ['Interval', req.eval.interval],
    ]);
  }
  if (req.val) {
    section('Validation', [
      ['Num Examples', req.val.num_examples ?? 'default'],
      ['Interval', req.val.interval ?? 'default'],
    ]);
  }
  if (req.secrets.length > 0) section('Secrets', [['Keys', req.secrets.map((s) => s.key).join(', ')]]);
  return lines;
}
