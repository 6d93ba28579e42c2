// A small `.env` parser for secrets files. It never puts a value into a warning or an error.
//
// Grammar, one assignment per line:
//   - blank lines and lines whose first non-blank character is `#` are ignored;
//   - an optional leading `export ` is dropped;
//   - `KEY=VALUE`: KEY matches [A-Za-z_][A-Za-z0-9_]*, surrounding blanks are trimmed;
//   - VALUE unquoted: trimmed, a ` #…` comment after whitespace is dropped;
//   - VALUE in single quotes: taken literally; in double quotes: \n \r \t \" \\ are unescaped;
//     a comment may follow the closing quote; values cannot span lines;
//   - no variable expansion; a later assignment of the same key wins.

export const ENV_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface DotenvResult {
  values: Map<string, string>;
  /** Problems with single lines (the line is skipped); they name the line, never its content. */
  warnings: string[];
}

const ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t', '"': '"', '\\': '\\' };

/** The value part of a line, or an error reason. */
function parseValue(rest: string): { value: string } | { error: string } {
  const s = rest.trimStart();
  const q = s[0];
  if (q === '"' || q === "'") {
    let out = '';
    let i = 1;
    for (; i < s.length; i++) {
      const c = s[i] as string;
      if (c === q) break;
      if (q === '"' && c === '\\' && i + 1 < s.length) {
        const next = s[i + 1] as string;
        out += ESCAPES[next] ?? `\\${next}`;
        i++;
      } else {
        out += c;
      }
    }
    if (i >= s.length) return { error: 'unterminated quoted value' };
    const tail = s.slice(i + 1).trim();
    if (tail !== '' && !tail.startsWith('#')) return { error: 'unexpected text after the closing quote' };
    return { value: out };
  }
  const hash = s.search(/\s#/);
  return { value: (hash >= 0 ? s.slice(0, hash) : s).trim() };
}

/** Parse the text of a `.env` file. `file` only labels warnings. */
export function parseDotenv(text: string, file: string): DotenvResult {
  const values = new Map<string, string>();
  const warnings: string[] = [];
  const lines = text.replace(/^\uFEFF/, '').split(/\r\n|\n|\r/);
  lines.forEach((rawLine, idx) => {
    const n = idx + 1;
    let line = rawLine.trim();
    if (line === '' || line.startsWith('#')) return;
    line = line.replace(/^export\s+/, '');
    const eq = line.indexOf('=');
    if (eq < 0) {
      warnings.push(`Skipping invalid line ${n} in ${file}: missing '=' separator`);
      return;
    }
    const key = line.slice(0, eq).trim();
    if (!ENV_KEY.test(key)) {
      warnings.push(
        `Skipping invalid line ${n} in ${file}: the variable name must start with a letter or underscore ` +
          `and contain only letters, digits and underscores`,
      );
      return;
    }
    const parsed = parseValue(line.slice(eq + 1));
    if ('error' in parsed) {
      warnings.push(`Skipping invalid line ${n} in ${file}: ${parsed.error}`);
      return;
    }
    values.set(key, parsed.value);
  });
  return { values, warnings };
}

/** Strip one pair of matching surrounding quotes (`-e KEY="v"` after shell processing). */
export function unquote(value: string): string {
  const v = value.trim();
  if (v.length >= 2 && (v[0] === '"' || v[0] === "'") && v[v.length - 1] === v[0]) return v.slice(1, -1);
  return v;
}
