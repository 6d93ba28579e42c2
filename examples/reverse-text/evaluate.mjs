#!/usr/bin/env node
// Scores a model on the reverse-text task (spec environments B.1): for each prompt of the RL
// dataset, generate a completion from [system, user(prompt)], parse the first <reversed_text>…</reversed_text>
// and reward it with difflib's ratio against the prompt reversed by code points. Prints the mean.
//
//   node examples/reverse-text/evaluate.mjs [--model DIR] [--rows N] [--max-tokens N]
//        [--temperature T] [--batch N] [--seed S] [--show N]
//
// Needs a build (`npm run build`). Until the `eval` entrypoint exists, this is how the shipped model's
// reward is measured.
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { asyncBufferFromFile, parquetReadObjects } from 'hyparquet';
import { Tokenizer, generate, loadPretrained } from '@prime-rl/lm';
import { difflibRatio, parseXmlAnswer } from '@prime-rl/verifiers';

const here = dirname(fileURLToPath(import.meta.url));
const SYSTEM_PROMPT = 'Reverse the text character-by-character. Put your answer in <reversed_text> tags.';

const { values } = parseArgs({
  options: {
    model: { type: 'string', default: join(here, 'models', 'sft') },
    data: { type: 'string', default: join(here, 'data', 'rl', 'train.parquet') },
    rows: { type: 'string', default: '200' },
    'max-tokens': { type: 'string', default: '256' },
    temperature: { type: 'string', default: '0' },
    batch: { type: 'string', default: '32' },
    seed: { type: 'string', default: '0' },
    show: { type: 'string', default: '3' },
  },
});
const number = (name) => {
  const v = Number(values[name]);
  if (!Number.isFinite(v) || v < 0) {
    console.error(`evaluate: --${name} must be a non-negative number, got '${values[name]}'`);
    process.exit(2);
  }
  return v;
};

const modelDir = resolve(values.model);
const started = performance.now();
const tokenizer = await Tokenizer.fromDir(modelDir);
const { model } = await loadPretrained(modelDir);
const file = await asyncBufferFromFile(resolve(values.data));
const rows = await parquetReadObjects({ file, columns: ['prompt'], rowEnd: number('rows') });
const questions = rows.map((r) => String(r.prompt));
const reverse = (s) => [...s].reverse().join('');

const requests = questions.map((question, i) => ({
  promptIds: tokenizer.encodeChat(
    [
      { role: 'system', content: SYSTEM_PROMPT },
      { role: 'user', content: question },
    ],
    { addGenerationPrompt: true },
  ),
  params: { temperature: number('temperature'), maxTokens: number('max-tokens'), seed: number('seed') + i },
}));
const results = generate(model, requests, { tokenizer, maxBatch: number('batch') });
let total = 0;
let generated = 0;
const rewards = results.map((result, i) => {
  generated += result.tokenIds.length;
  const answer = parseXmlAnswer(result.text, 'reversed_text') ?? '';
  return difflibRatio(answer, reverse(questions[i]));
});
for (const r of rewards) total += r;
const seconds = (performance.now() - started) / 1000;
for (let i = 0; i < Math.min(number('show'), results.length); i++)
  console.log(`--- ${questions[i]}\n${results[i].text}\nreward ${rewards[i].toFixed(3)}`);
console.log(
  `reverse-text: mean reward ${(total / rewards.length).toFixed(4)} over ${rewards.length} prompts ` +
    `(temperature ${values.temperature}, ${generated} tokens generated in ${seconds.toFixed(1)} s)`,
);
model.dispose();
