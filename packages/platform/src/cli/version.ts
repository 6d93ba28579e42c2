// The CLI's version: the platform package's version.
import { readFileSync } from 'node:fs';

let cached: string | undefined;

export function cliVersion(): string {
  if (cached === undefined) {
    // dist/src/cli/version.js → package root
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
      version?: string;
    };
    cached = pkg.version ?? '0.0.0';
  }
  return cached;
}
