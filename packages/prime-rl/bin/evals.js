#!/usr/bin/env node
// `evals`: the eval entrypoint under a name that is not a shell builtin, so `npx evals` works
// (`npx eval` runs the shell's own `eval`).
import '../dist/src/bin/eval.js';
