// Turning zod's schema issues into the hosted CLI's bullet lines: `<dotted.loc>: <message>`.
// Messages follow the wording users of prime-rl know from its Python reference (pydantic style).
import type { z } from 'zod';

type Issue = z.core.$ZodIssue;

const TYPE_NAMES: Record<string, string> = {
  int: 'a valid integer',
  number: 'a valid number',
  string: 'a valid string',
  boolean: 'a valid boolean',
  array: 'a valid list',
  object: 'a valid table',
  record: 'a valid table',
};

/** ` (got 'abc')` / ` (got 5)` for scalar inputs; nothing for tables, lists or missing values. */
function got(input: unknown): string {
  if (typeof input === 'string') return ` (got '${input.length > 80 ? `${input.slice(0, 77)}...` : input}')`;
  if (typeof input === 'number' || typeof input === 'boolean') return ` (got ${String(input)})`;
  return '';
}

function quoteList(values: readonly unknown[]): string {
  const q = values.map((v) => (typeof v === 'string' ? `'${v}'` : String(v)));
  if (q.length <= 1) return q.join('');
  return `${q.slice(0, -1).join(', ')} or ${q[q.length - 1]}`;
}

/** Dotted location of a field (`env.0.id`); the file itself is `<root>`. */
export function dottedLoc(path: ReadonlyArray<PropertyKey>): string {
  return path.length === 0 ? '<root>' : path.map((p) => String(p)).join('.');
}

/** One message per issue; an unknown-keys issue yields one line per key. */
export function issueLines(issue: Issue): string[] {
  const loc = issue.path;
  const input = (issue as { input?: unknown }).input;
  switch (issue.code) {
    case 'unrecognized_keys':
      return issue.keys.map((k) => `${dottedLoc([...loc, k])}: Extra inputs are not permitted`);
    case 'invalid_type': {
      if (input === undefined) return [`${dottedLoc(loc)}: Field required`];
      // schema-provided wording (see the integer fields of the hosted schema)
      if (issue.message.startsWith('Input should be ')) return [`${dottedLoc(loc)}: ${issue.message}${got(input)}`];
      const what = TYPE_NAMES[issue.expected] ?? `of type ${issue.expected}`;
      return [`${dottedLoc(loc)}: Input should be ${what}${got(input)}`];
    }
    case 'too_small': {
      if (issue.origin === 'string') {
        const n = Number(issue.minimum);
        return [`${dottedLoc(loc)}: String should have at least ${n} character${n === 1 ? '' : 's'}`];
      }
      if (issue.origin === 'array')
        return [`${dottedLoc(loc)}: List should have at least ${Number(issue.minimum)} item(s)`];
      const rel = issue.inclusive ? 'greater than or equal to' : 'greater than';
      return [`${dottedLoc(loc)}: Input should be ${rel} ${String(issue.minimum)}${got(input)}`];
    }
    case 'too_big': {
      if (issue.origin === 'string' || issue.origin === 'array') {
        return [`${dottedLoc(loc)}: should have at most ${Number(issue.maximum)} item(s)`];
      }
      const rel = issue.inclusive ? 'less than or equal to' : 'less than';
      return [`${dottedLoc(loc)}: Input should be ${rel} ${String(issue.maximum)}${got(input)}`];
    }
    case 'invalid_value':
      return [`${dottedLoc(loc)}: Input should be ${quoteList(issue.values)}${got(input)}`];
    case 'custom':
      return [`${dottedLoc(loc)}: ${issue.message.replace(/^Value error, /, '')}${got(input)}`];
    default:
      return [`${dottedLoc(loc)}: ${issue.message}${got(input)}`];
  }
}

/** All issues of a failed parse, in schema order. */
export function formatIssues(issues: readonly Issue[]): string[] {
  return issues.flatMap(issueLines);
}
