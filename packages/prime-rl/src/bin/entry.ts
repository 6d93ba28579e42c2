// Shared start-up of every entrypoint binary: resolve the config (with --help, --dry-run,
// --explain, --json-schema), then run the program.
import { main, type ConfigSpec } from '@prime-rl/config';
import type { z } from 'zod';

export type Program<T> = (config: T) => Promise<number | void> | number | void;

/**
 * Start an entrypoint. Programs that this version cannot run yet say so plainly and exit 2
 * after validating the config, so scripts never mistake a validated config for a finished run.
 */
export function entrypoint<S extends z.ZodType>(spec: ConfigSpec<S>, program?: Program<z.output<S>>): void {
  main(spec, {
    run:
      program ??
      (() => {
        process.stderr.write(
          `${spec.prog}: the configuration is valid, but running ${spec.prog} is not available in this version yet.\n` +
            `Use --dry-run to write the resolved configuration, or --explain to see where each value came from.\n`,
        );
        return 2;
      }),
  });
}
