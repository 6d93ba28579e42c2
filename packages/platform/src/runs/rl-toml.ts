// Writing a translated prime-rl `rl` config as TOML (the `--dry-run --output-dir` artefact).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'smol-toml';

/** Drop null/undefined values (TOML has no null), recursively. */
export function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.filter((v) => v !== null && v !== undefined).map(withoutNulls);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== null && v !== undefined) out[k] = withoutNulls(v);
    return out;
  }
  return value;
}

export function rlConfigToml(rl: Record<string, unknown>, sourceLabel: string): string {
  const header = [
    `# prime-rl \`rl\` config translated from the hosted config ${sourceLabel}.`,
    '# Run it locally with: rl @ rl.toml',
    '',
  ].join('\n');
  return `${header}${stringify(withoutNulls(rl))}\n`;
}

/** Write `<outputDir>/configs/rl.toml`; returns the written path. */
export function writeRlConfig(outputDir: string, rl: Record<string, unknown>, sourceLabel: string): string {
  const dir = join(outputDir, 'configs');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'rl.toml');
  writeFileSync(file, rlConfigToml(rl, sourceLabel));
  return file;
}
