#!/usr/bin/env node
// Exports a Hugging Face model directory (config.json, safetensors weights, tokenizer.json,
// tokenizer_config.json) as a GGUF file for llama.cpp. Build first (npm run build).
//   node packages/lm/scripts/export-gguf.mjs <hf_model_dir> <out.gguf> [--dtype f32|f16] [--name NAME]
import { stat } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Tokenizer, loadPretrained } from '../dist/src/index.js';
import { exportGguf } from '../dist/src/gguf/export.js';

const USAGE = 'usage: export-gguf.mjs <hf_model_dir> <out.gguf> [--dtype f32|f16] [--name NAME]';

async function main() {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        dtype: { type: 'string', default: 'f32' },
        name: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    console.error(`export-gguf: ${error.message}\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (positionals.length !== 2) {
    console.error(`export-gguf: expected a model directory and an output path\n${USAGE}`);
    return 2;
  }
  if (values.dtype !== 'f32' && values.dtype !== 'f16') {
    console.error(`export-gguf: --dtype must be f32 or f16, got '${values.dtype}'`);
    return 2;
  }
  const [dir, out] = positionals;
  const started = performance.now();
  const { model } = await loadPretrained(dir);
  const tokenizer = await Tokenizer.fromDir(dir);
  await exportGguf(model, tokenizer, out, { dtype: values.dtype, ...(values.name ? { name: values.name } : {}) });
  const { size } = await stat(out);
  const c = model.config;
  console.log(
    `${out}: ${c.architecture}, ${c.numLayers} layers, vocab ${c.vocabSize}, ${values.dtype}, ` +
      `${(size / 2 ** 20).toFixed(1)} MiB in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  return 0;
}

main().then(
  (code) => (process.exitCode = code),
  (error) => {
    console.error(`export-gguf: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  },
);
