// Schema (zod) findings rewritten in the wording users of the reference know
// ("Input should be greater than or equal to 1"), with the offending input echoed.
import type { z } from 'zod';
import { echo, type ConfigIssue } from './issues.js';
import { isTable, type Provenance } from './merge.js';
import { dotted } from './names.js';
import type { ConfigPath } from './types.js';

/** `raw` is the merged input as written (echoed as typed); `data` the coerced tree zod saw. */
export function fromZod(issue: z.core.$ZodIssue, data: unknown, raw: unknown, prov: Provenance): ConfigIssue {
  const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
  const typed = valueAt(raw, path);
  const input = typed === undefined || typeof typed === 'object' ? valueAt(data, path) : typed;
  const source = prov.lookup(dotted(path));
  const out: ConfigIssue = { path, message: message(issue, input) };
  if (source) out.source = source;
  return out;
}

function message(issue: z.core.$ZodIssue, input: unknown): string {
  const got = echo(input);
  switch (issue.code) {
    case 'too_small': {
      const min = String(issue.minimum);
      if (issue.origin === 'array' || issue.origin === 'set') return `List should have at least ${min} item(s)${got}`;
      if (issue.origin === 'string') return `String should have at least ${min} character(s)${got}`;
      return `Input should be greater than ${issue.inclusive ? 'or equal to ' : ''}${min}${got}`;
    }
    case 'too_big': {
      const max = String(issue.maximum);
      if (issue.origin === 'array' || issue.origin === 'set') return `List should have at most ${max} item(s)${got}`;
      if (issue.origin === 'string') return `String should have at most ${max} character(s)${got}`;
      return `Input should be less than ${issue.inclusive ? 'or equal to ' : ''}${max}${got}`;
    }
    case 'invalid_type': {
      if (input === undefined) return 'Field required';
      const names: Record<string, string> = {
        number: 'number',
        int: 'integer',
        string: 'string',
        boolean: 'boolean',
        object: 'dictionary',
        array: 'list',
      };
      return `Input should be a valid ${names[issue.expected] ?? issue.expected}${got}`;
    }
    case 'invalid_value': {
      const values = issue.values.map((v) => (typeof v === 'string' ? `'${v}'` : String(v)));
      const list = values.length <= 1 ? values.join('') : `${values.slice(0, -1).join(', ')} or ${values.at(-1)}`;
      return `Input should be ${list}${got}`;
    }
    case 'unrecognized_keys':
      return `Unknown field(s) ${issue.keys.map((k) => `'${k}'`).join(', ')}: extra inputs are not permitted`;
    case 'not_multiple_of':
      return `Input should be a multiple of ${String(issue.divisor)}${got}`;
    case 'invalid_format':
      return `Input should be a valid ${issue.format}${got}`;
    default:
      return issue.message;
  }
}

export function valueAt(data: unknown, path: ConfigPath): unknown {
  let cur = data;
  for (const seg of path) {
    if (Array.isArray(cur) && typeof seg === 'number') cur = cur[seg];
    else if (isTable(cur) && typeof seg === 'string') cur = cur[seg];
    else return undefined;
  }
  return cur;
}
