// Problems found while resolving a config, and how they are shown to a user.
import { flagOf } from './names.js';
import type { ConfigPath, Source } from './types.js';

export interface ConfigIssue {
  /** Field path the problem is about; absent for problems with the command line or a file as a whole. */
  path?: ConfigPath;
  /** Text shown instead of the flag rendering of `path` (e.g. an unknown flag as typed). */
  label?: string;
  message: string;
  /** Where the offending value came from. */
  source?: Source;
}

export function describeSource(source: Source): string {
  switch (source.kind) {
    case 'default':
      return 'default';
    case 'file':
      return source.file;
    case 'env':
      return `env ${source.variable}`;
    case 'cli':
      return source.flag;
    case 'layer':
      return source.label;
    case 'validator':
      return 'derived by a cross-field rule';
  }
}

/** A user mistake in a config: shown as a report, never as a stack trace. */
export class ConfigError extends Error {
  readonly issues: readonly ConfigIssue[];
  readonly rootName: string;

  constructor(issues: readonly ConfigIssue[], rootName: string) {
    super(formatIssues(issues, rootName));
    this.name = 'ConfigError';
    this.issues = issues;
    this.rootName = rootName;
  }
}

/** Plain-text report: command-line/file problems first, then field problems under one header. */
export function formatIssues(issues: readonly ConfigIssue[], rootName: string): string {
  const general = issues.filter((i) => i.path === undefined && i.label === undefined);
  const fields = issues.filter((i) => i.path !== undefined || i.label !== undefined);
  const lines: string[] = general.map((i) => i.message);
  if (fields.length > 0) {
    const n = fields.length;
    lines.push(`Failed to validate config: ${n} validation error${n === 1 ? '' : 's'} for ${rootName}`);
    for (const issue of fields) {
      const where = issue.label ?? flagOf(issue.path ?? []);
      const from = issue.source && issue.source.kind !== 'default' ? ` (from ${describeSource(issue.source)})` : '';
      lines.push(`${where}${from}`);
      for (const line of issue.message.split('\n')) lines.push(`  ${line}`);
    }
  }
  return lines.join('\n');
}

/** ` (got 'abc')` / ` (got 5)` for scalar inputs; nothing for tables and lists. */
export function echo(value: unknown, secret = false): string {
  if (secret) return '';
  if (typeof value === 'string') return ` (got '${value.length > 80 ? `${value.slice(0, 77)}...` : value}')`;
  if (typeof value === 'number' || typeof value === 'boolean') return ` (got ${String(value)})`;
  return '';
}
