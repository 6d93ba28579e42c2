// Checks of the reverse-text example's committed assets: the byte-level tokenizer (made by make-tokenizer.mjs)
// loads in @huggingface/tokenizers and behaves as one token per byte with single-token chat markers and answer
// tags, and the parquet datasets (made by make-data.mjs) have the documented layout.
//   node --test examples/reverse-text/assets.test.mjs
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { Buffer } from 'node:buffer';
import { fileURLToPath, URL } from 'node:url';
import { Template } from '@huggingface/jinja';
import { Tokenizer } from '@huggingface/tokenizers';
import { parquetReadObjects, parquetSchema, parquetMetadata } from 'hyparquet';

const SYSTEM_PROMPT = 'Reverse the text character-by-character. Put your answer in <reversed_text> tags.';
const EXPECTED_ADDED_TOKEN_IDS = {
  '<|endoftext|>': 256,
  '<|im_start|>': 257,
  '<|im_end|>': 258,
  '<tool_call>': 259,
  '</tool_call>': 260,
  '<tool_response>': 261,
  '</tool_response>': 262,
  '<think>': 263,
  '</think>': 264,
  '<reversed_text>': 265,
  '</reversed_text>': 266,
};

function readJson(relativePath) {
  return JSON.parse(readFileSync(fileURLToPath(new URL(relativePath, import.meta.url)), 'utf8'));
}

function readParquetRows(relativePath) {
  const bytes = readFileSync(fileURLToPath(new URL(relativePath, import.meta.url)));
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  return { file, rowsPromise: parquetReadObjects({ file }) };
}

/** GPT-2's bytes_to_unicode order: printable bytes first, then the rest; idOfByte[byte] is the byte's token id. */
function gpt2ByteIds() {
  const printable = [];
  for (const [first, last] of [
    [0x21, 0x7e],
    [0xa1, 0xac],
    [0xae, 0xff],
  ]) {
    for (let byte = first; byte <= last; byte++) printable.push(byte);
  }
  const order = [...printable, ...Array.from({ length: 256 }, (_, byte) => byte).filter((b) => !printable.includes(b))];
  const idOfByte = new Array(256);
  order.forEach((byte, id) => (idOfByte[byte] = id));
  return idOfByte;
}

function reverseCodePoints(text) {
  return [...text].reverse().join('');
}

const tokenizerJson = readJson('./tokenizer/tokenizer.json');
const tokenizerConfig = readJson('./tokenizer/tokenizer_config.json');
const tokenizer = new Tokenizer(tokenizerJson, tokenizerConfig);
const encode = (text) => tokenizer.encode(text, { add_special_tokens: false }).ids;
const decode = (ids) => tokenizer.decode(ids, { skip_special_tokens: false });
const utf8Length = (text) => Buffer.byteLength(text, 'utf8');

describe('byte-level tokenizer', () => {
  test('vocab: 256 byte tokens (ids 0-255) and 11 added tokens (ids 256-266)', () => {
    assert.equal(tokenizer.get_vocab(true).size, 267);
    assert.equal(Object.keys(tokenizerJson.model.vocab).length, 256);
    assert.deepEqual(tokenizerJson.model.merges, []);
    for (const [content, id] of Object.entries(EXPECTED_ADDED_TOKEN_IDS)) {
      assert.equal(tokenizer.token_to_id(content), id, content);
      assert.equal(tokenizerConfig.added_tokens_decoder[String(id)].content, content);
    }
  });

  test('"Hello world" is 11 tokens, one per byte, and decodes back', () => {
    const ids = encode('Hello world');
    assert.equal(ids.length, 11);
    assert.ok(ids.every((id) => id < 256));
    assert.equal(decode(ids), 'Hello world');
  });

  test('chat markers and answer tags are single tokens', () => {
    assert.deepEqual(encode('<reversed_text>'), [265]);
    assert.deepEqual(encode('</reversed_text>'), [266]);
    assert.deepEqual(encode('<|im_end|>'), [258]);
    assert.deepEqual(encode('<|im_start|>assistant\n'), [257, ...encode('assistant\n')]);
    assert.deepEqual(encode('<reversed_text>\nab\n</reversed_text>'), [265, ...encode('\nab\n'), 266]);
  });

  test('every byte round-trips: ASCII one token each, U+0080..U+00FF two tokens each', () => {
    for (let codePoint = 0; codePoint < 256; codePoint++) {
      const text = String.fromCodePoint(codePoint);
      const ids = encode(text);
      assert.equal(ids.length, utf8Length(text), `U+${codePoint.toString(16)}`);
      assert.equal(decode(ids), text, `U+${codePoint.toString(16)}`);
    }
    const allAscii = Array.from({ length: 128 }, (_, codePoint) => String.fromCodePoint(codePoint)).join('');
    assert.equal(encode(allAscii).length, 128);
    assert.equal(decode(encode(allAscii)), allAscii);
  });

  test('token ids are byte values in GPT-2 bytes_to_unicode order, as in Qwen3: encode(text) = ids of its UTF-8 bytes', () => {
    const idOfByte = gpt2ByteIds();
    // Every byte that valid UTF-8 can contain: all of 0x00-0x7F and 0x80-0xBF, leads 0xC2-0xDF, 0xE0-0xEF, 0xF0-0xF4.
    const oneAndTwoByteCharacters = Array.from({ length: 0x800 }, (_, codePoint) => String.fromCodePoint(codePoint));
    const longerCharacters = Array.from({ length: 16 }, (_, lead) =>
      String.fromCodePoint(Math.max(0x800, 0x1000 * lead) + 0x41),
    );
    longerCharacters.push(
      ...Array.from({ length: 5 }, (_, lead) => String.fromCodePoint(0x10000 + 0x40000 * lead - (lead === 4 ? 1 : 0))),
    );
    for (const text of [...oneAndTwoByteCharacters, ...longerCharacters]) {
      const expected = [...Buffer.from(text, 'utf8')].map((byte) => idOfByte[byte]);
      const ids = encode(text);
      if (text.normalize('NFC') === text) assert.deepEqual(ids, expected, `U+${text.codePointAt(0).toString(16)}`);
      assert.equal(decode(ids), text.normalize('NFC'));
    }
  });

  test('emoji and other scripts round-trip, one token per UTF-8 byte', () => {
    for (const text of ['😀', 'Hi 👋🏽 from 👩‍💻 in 🇩🇪!', '東京 Москва café', '  leading and trailing  ']) {
      const ids = encode(text);
      assert.equal(ids.length, utf8Length(text), text);
      assert.equal(decode(ids), text);
    }
  });

  test('reversing ASCII text reverses its tokens', () => {
    const sentence = 'The community in Bruck was merged into it.';
    assert.deepEqual(encode(reverseCodePoints(sentence)), encode(sentence).reverse());
  });

  test('the chat template renders an SFT example with single-token markers', () => {
    assert.equal(tokenizerConfig.eos_token, '<|im_end|>');
    assert.equal(tokenizerConfig.pad_token, '<|endoftext|>');
    assert.equal(tokenizerConfig.bos_token, null);
    assert.equal(tokenizerConfig.model_max_length, 2048);
    const messages = [
      { role: 'system', content: SYSTEM_PROMPT },
      { role: 'user', content: 'Hello world' },
      { role: 'assistant', content: '<reversed_text>\ndlrow olleH\n</reversed_text>' },
    ];
    const rendered = new Template(tokenizerConfig.chat_template).render({ messages, add_generation_prompt: false });
    assert.ok(rendered.startsWith(`<|im_start|>system\n${SYSTEM_PROMPT}<|im_end|>\n<|im_start|>user\nHello world`));
    const ids = encode(rendered);
    assert.equal(ids.filter((id) => id === 257).length, 3);
    assert.equal(ids.filter((id) => id === 258).length, 3);
    assert.equal(ids.filter((id) => id === 265).length, 2, 'one tag in the system prompt, one in the answer');
    assert.equal(ids.filter((id) => id === 266).length, 1);
    assert.equal(decode(ids), rendered);
  });
});

describe('reverse-text datasets', () => {
  test('rl/train.parquet: 1000 prompts, one string column, some of them 200+ characters', async () => {
    const { file, rowsPromise } = readParquetRows('./data/rl/train.parquet');
    const rows = await rowsPromise;
    assert.equal(rows.length, 1000);
    assert.deepEqual(
      parquetSchema(parquetMetadata(file)).children.map((child) => child.element.name),
      ['prompt'],
    );
    assert.ok(rows.every((row) => typeof row.prompt === 'string' && row.prompt.length > 0));
    const longPrompts = rows.filter((row) => [...row.prompt].length >= 200).length;
    assert.ok(longPrompts > 0 && longPrompts < 100, `${longPrompts} long prompts`);
  });

  for (const [path, expectedRows] of [
    ['./data/sft/train.parquet', 20000],
    ['./data/sft/val.parquet', 500],
  ]) {
    test(`${path.slice(7)}: ${expectedRows} chat examples whose completion is the reversed user text`, async () => {
      const rows = await readParquetRows(path).rowsPromise;
      assert.equal(rows.length, expectedRows);
      for (const { prompt, completion } of rows) {
        assert.deepEqual(
          prompt.map((message) => message.role),
          ['system', 'user'],
        );
        assert.equal(prompt[0].content, SYSTEM_PROMPT);
        assert.deepEqual(completion, [
          { role: 'assistant', content: `<reversed_text>\n${reverseCodePoints(prompt[1].content)}\n</reversed_text>` },
        ]);
      }
    });
  }

  test('SFT and RL prompts are disjoint', async () => {
    const rlPrompts = new Set((await readParquetRows('./data/rl/train.parquet').rowsPromise).map((row) => row.prompt));
    for (const path of ['./data/sft/train.parquet', './data/sft/val.parquet']) {
      const sftRows = await readParquetRows(path).rowsPromise;
      assert.equal(sftRows.filter((row) => rlPrompts.has(row.prompt[1].content)).length, 0, path);
    }
  });
});
