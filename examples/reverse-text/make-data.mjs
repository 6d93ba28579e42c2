#!/usr/bin/env node
// Synthetic datasets for the reverse-text example, the offline stand-in of the spec (B.1): English-like sentences
// of common words, drawn with a seeded PRNG so that every run writes byte-identical parquet files.
//
//   node examples/reverse-text/make-data.mjs [--out DIR] [--sft-rows N] [--rl-rows N] [--seed S]
//
// Writes, under DIR (default examples/reverse-text/data):
//   rl/train.parquet   one string column `prompt` (the environment derives answer = prompt reversed by code points)
//   sft/train.parquet  columns `prompt` and `completion`, each a list of chat messages {role, content}
//   sft/val.parquet    the same, 500 rows from another PRNG stream
// The three sets use different PRNG streams, so SFT and RL prompts differ.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parquetReadObjects } from 'hyparquet';
import { parquetWriteBuffer } from 'hyparquet-writer';

const HERE = dirname(fileURLToPath(import.meta.url));
const SYSTEM_PROMPT = 'Reverse the text character-by-character. Put your answer in <reversed_text> tags.';
const ANSWER_TAG = 'reversed_text';
const SFT_VAL_ROWS = 500;

// A fixed vocabulary of common English words (lower case) and a few proper nouns (kept capitalised).
const COMMON_WORDS = `
the of and to in is was for on that with as by at from it his her their this which an be are were has had have
not but or one two three first new old after when all who also other into more time year years city town river
people world school family house water part area state group life work book game team music film war king church
village county station road line name day night home land island north south east west small large long early
late great good high local major second same several many most some each both such only own often still later
during before while where there then than about over under between through against since until around near along
made became played known called used began found named built moved took gave won lost held led opened wrote
released formed served returned based located born died married joined left received created described include
included became continued started remained produced published designed reached appeared announced considered
album song band club season league player coach party election president member council government company market
system power service form field court board park street bridge hall tower castle garden forest mountain valley
lake sea coast bay port ship train car plane engine light fire stone wood iron gold silver paper glass door window
table chair bed room floor wall roof kitchen school student teacher class lesson story letter word page language
history science art culture nature animal bird fish horse dog cat tree flower grass rain snow wind sun moon star
summer winter spring autumn morning evening week month century today yesterday tomorrow always never sometimes
quickly slowly quietly carefully together alone again away back down up out off here very well just even almost
young red blue green white black brown bright dark warm cold hot dry wet heavy quiet loud happy simple famous
important popular public private national royal central southern northern western eastern ancient modern final
open close read write play sing walk run swim drive carry follow visit build grow keep bring hold give take make
`;
const PROPER_NOUNS = ['London', 'Paris', 'Berlin', 'Vienna', 'Bruck', 'Mary', 'John', 'Anna', 'Europe', 'Africa'];
const VOCABULARY = [...new Set(COMMON_WORDS.split(/\s+/).filter((word) => word.length > 0)), ...PROPER_NOUNS];

// Sentence lengths in words, as [weight, minWords, maxWords] bands. The RL set follows B.1 (5–20 words, a few
// longer ones that pass 200 characters and so exercise difflib's autojunk); the SFT sets favour short sentences
// that a tiny model can learn to reverse.
const RL_LENGTH_BANDS = [
  [0.97, 5, 20],
  [0.03, 32, 45],
];
const SFT_LENGTH_BANDS = [
  [0.75, 5, 12],
  [0.22, 13, 20],
  [0.03, 21, 32],
];

/** mulberry32: a small, fast 32-bit PRNG; returns floats in [0, 1). */
function mulberry32(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A PRNG stream per (seed, name), so adding rows to one set never changes another. FNV-1a mixes the name in. */
function streamRandom(seed, streamName) {
  let hash = 0x811c9dc5 ^ seed;
  for (const character of streamName) hash = Math.imul(hash ^ character.charCodeAt(0), 0x01000193);
  return mulberry32(hash);
}

function randomInt(random, min, max) {
  return min + Math.floor(random() * (max - min + 1));
}

function pick(random, items) {
  return items[Math.floor(random() * items.length)];
}

function wordCount(random, lengthBands) {
  let roll = random();
  for (const [weight, minWords, maxWords] of lengthBands) {
    if (roll < weight) return randomInt(random, minWords, maxWords);
    roll -= weight;
  }
  const [, minWords, maxWords] = lengthBands[lengthBands.length - 1];
  return randomInt(random, minWords, maxWords);
}

/** Sentence-cased words, an occasional comma between words, and usually a final period. */
function makeSentence(random, lengthBands) {
  const count = wordCount(random, lengthBands);
  let sentence = '';
  for (let index = 0; index < count; index++) {
    const word = pick(random, VOCABULARY);
    if (index === 0) sentence = word[0].toUpperCase() + word.slice(1);
    else sentence += (index > 1 && random() < 0.08 ? ', ' : ' ') + word;
  }
  return random() < 0.7 ? sentence + '.' : sentence;
}

function reverseCodePoints(text) {
  return [...text].reverse().join('');
}

function makeSentences(seed, streamName, rows, lengthBands) {
  const random = streamRandom(seed, streamName);
  return Array.from({ length: rows }, () => makeSentence(random, lengthBands));
}

/** Parquet schema of a list<struct<role, content>> column, in the 3-level LIST layout that pyarrow writes. */
function chatColumnSchema(name) {
  return [
    { name, repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
    { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
    { name: 'element', repetition_type: 'OPTIONAL', num_children: 2 },
    { name: 'role', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
    { name: 'content', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
  ];
}

function sftColumns(sentences) {
  const prompt = sentences.map((sentence) => [
    { role: 'system', content: SYSTEM_PROMPT },
    { role: 'user', content: sentence },
  ]);
  const completion = sentences.map((sentence) => [
    { role: 'assistant', content: `<${ANSWER_TAG}>\n${reverseCodePoints(sentence)}\n</${ANSWER_TAG}>` },
  ]);
  return {
    columnData: [
      { name: 'prompt', data: prompt },
      { name: 'completion', data: completion },
    ],
    schema: [{ name: 'root', num_children: 2 }, ...chatColumnSchema('prompt'), ...chatColumnSchema('completion')],
  };
}

function rlColumns(sentences) {
  return { columnData: [{ name: 'prompt', data: sentences, type: 'STRING' }] };
}

/** Checks that the encoded file reads back row for row, then writes it through a temporary file and a rename. */
async function writeParquet(path, { columnData, schema }) {
  const bytes = new Uint8Array(parquetWriteBuffer({ columnData, schema, codec: 'SNAPPY', createdBy: 'make-data.mjs' }));
  const rows = await parquetReadObjects({ file: bytes.buffer });
  const expectedRows = columnData[0].data.length;
  if (rows.length !== expectedRows) throw new Error(`${path}: read back ${rows.length} rows, wrote ${expectedRows}`);
  for (const { name, data } of columnData) {
    rows.forEach((row, index) => {
      if (JSON.stringify(row[name]) !== JSON.stringify(data[index])) {
        throw new Error(`${path}: row ${index} column ${name} reads back as ${JSON.stringify(row[name])}`);
      }
    });
  }

  mkdirSync(dirname(path), { recursive: true });
  const temporaryPath = `${path}.tmp`;
  writeFileSync(temporaryPath, bytes);
  renameSync(temporaryPath, path);
  return bytes.length;
}

function parseNonNegativeInteger(value, flag) {
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed) || parsed < 0)
    throw new Error(`${flag} must be a non-negative integer, got "${value}"`);
  return parsed;
}

function describe(sentences) {
  const lengths = sentences.map((sentence) => [...sentence].length);
  const over200 = lengths.filter((length) => length >= 200).length;
  const mean = lengths.reduce((sum, length) => sum + length, 0) / Math.max(1, lengths.length);
  return `chars mean ${mean.toFixed(1)}, max ${Math.max(0, ...lengths)}, ${over200} of ${lengths.length} ≥ 200`;
}

async function main() {
  const { values } = parseArgs({
    options: {
      out: { type: 'string', default: join(HERE, 'data') },
      'sft-rows': { type: 'string', default: '20000' },
      'rl-rows': { type: 'string', default: '1000' },
      seed: { type: 'string', default: '20250601' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log('usage: node examples/reverse-text/make-data.mjs [--out DIR] [--sft-rows N] [--rl-rows N] [--seed S]');
    return;
  }
  const outputDirectory = resolve(values.out);
  const seed = parseNonNegativeInteger(values.seed, '--seed') >>> 0;
  const sftRows = parseNonNegativeInteger(values['sft-rows'], '--sft-rows');
  const rlRows = parseNonNegativeInteger(values['rl-rows'], '--rl-rows');

  const sets = [
    {
      file: 'rl/train.parquet',
      sentences: makeSentences(seed, 'rl/train', rlRows, RL_LENGTH_BANDS),
      columns: rlColumns,
    },
    {
      file: 'sft/train.parquet',
      sentences: makeSentences(seed, 'sft/train', sftRows, SFT_LENGTH_BANDS),
      columns: sftColumns,
    },
    {
      file: 'sft/val.parquet',
      sentences: makeSentences(seed, 'sft/val', SFT_VAL_ROWS, SFT_LENGTH_BANDS),
      columns: sftColumns,
    },
  ];
  for (const { file, sentences, columns } of sets) {
    const path = join(outputDirectory, file);
    const size = await writeParquet(path, columns(sentences));
    console.log(
      `wrote ${relative(process.cwd(), path)}: ${sentences.length} rows, ${size} bytes (${describe(sentences)})`,
    );
  }
}

main().catch((error) => {
  console.error(`make-data: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
