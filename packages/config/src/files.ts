// Reading config files: TOML, JSON or YAML, chosen by extension.
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { parse as parseYaml } from 'yaml';

export type LoadResult = { ok: true; data: Record<string, unknown> } | { ok: false; message: string };

const SUPPORTED = '.json, .yaml, .yml, .toml';

/** Load `file` (as the user wrote it) relative to `cwd`. Errors name the file as given. */
export function loadConfigFile(file: string, cwd: string): LoadResult {
  const full = path.resolve(cwd, file);
  const ext = path.extname(file).toLowerCase();
  if (!['.toml', '.json', '.yaml', '.yml'].includes(ext)) {
    return { ok: false, message: `Unsupported file type: ${file}. Supported: ${SUPPORTED}` };
  }
  let text: string;
  try {
    if (!statSync(full).isFile()) return { ok: false, message: `Config file not found: ${file} (it is a directory)` };
    text = readFileSync(full, 'utf8');
  } catch {
    return { ok: false, message: `Config file not found: ${file}` };
  }
  let data: unknown;
  try {
    if (ext === '.toml') data = parseToml(text);
    else if (ext === '.json') data = JSON.parse(text);
    else data = parseYaml(text);
  } catch (err) {
    const kind = ext === '.toml' ? 'TOML' : ext === '.json' ? 'JSON' : 'YAML';
    const detail = (err as Error).message.split('\n')[0] ?? '';
    return { ok: false, message: `Invalid ${kind} in ${file}: ${detail}` };
  }
  if (data === null || data === undefined) data = {};
  if (typeof data !== 'object' || Array.isArray(data)) {
    return { ok: false, message: `Invalid config in ${file}: the top level must be a table of fields` };
  }
  return { ok: true, data: toPlain(data) as Record<string, unknown> };
}

/** Assign without invoking setters (a key named `__proto__` stays an ordinary key). */
export function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/** TOML dates become ISO strings; everything else is copied into plain objects and arrays. */
function toPlain(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toPlain);
  if (value instanceof Date) return value.toISOString();
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) setOwn(out, k, toPlain(v));
    return out;
  }
  return value;
}
