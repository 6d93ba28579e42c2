// Spelling of field paths: snake_case in files, kebab-case on the command line.
import type { ConfigPath } from './types.js';

export const toKebab = (s: string): string => s.replace(/_/g, '-');
export const toSnake = (s: string): string => s.replace(/-/g, '_');

/** `['env', 0, 'max_tokens']` → `--env[0].max-tokens`; `[]` → `<root>`. */
export function flagOf(path: ConfigPath): string {
  if (path.length === 0) return '<root>';
  let out = '--';
  path.forEach((seg, i) => {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += (i === 0 ? '' : '.') + toKebab(seg);
  });
  return out;
}

/** `['env', 0, 'id']` → `env.0.id` (the key used for provenance). */
export const dotted = (path: ConfigPath): string => path.join('.');

export const isIndex = (seg: string): boolean => /^(0|[1-9]\d*)$/.test(seg);
