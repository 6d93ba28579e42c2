// Stop conditions: stop strings found in text that arrives in pieces (held back while they could still
// complete, truncated or kept on a match), and token-level and length finishes as vLLM reports them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkLength,
  checkStopToken,
  stopStringFinish,
  stopStringsAllowed,
  StopMatcher,
} from '../src/generate/stop.js';
import { resolveSamplingParams } from '../src/generate/sampling-params.js';

function matcher(stop: string[], includeStopStrInOutput = false): StopMatcher {
  return new StopMatcher({ stop, includeStopStrInOutput });
}

/** Feeds the pieces in order; returns everything emitted (flushed at the end when nothing matched). */
function run(stops: StopMatcher, pieces: string[]): { output: string; matched: string | undefined } {
  let output = '';
  for (const piece of pieces) {
    const result = stops.feed(piece);
    output += result.emit;
    if (result.stopped) return { output, matched: result.matched };
  }
  return { output: output + stops.flush(), matched: undefined };
}

test('a stop string split across chunks is found and cut from the output', () => {
  const stops = matcher(['</answer>']);
  assert.deepEqual(stops.feed('The answer is 4 </an'), { emit: 'The answer is 4 ', stopped: false });
  assert.deepEqual(stops.feed('swer> and more'), { emit: '', stopped: true, matched: '</answer>' });
  assert.ok(stops.stopped);
  assert.equal(stops.matched, '</answer>');
});

test('a stop string arriving one character at a time', () => {
  const text = 'abc STOP def';
  const { output, matched } = run(matcher(['STOP']), [...text]);
  assert.equal(output, 'abc ');
  assert.equal(matched, 'STOP');
});

test('every way of cutting the text into pieces gives the same result', () => {
  const text = 'say <|im_end|> now';
  const expected = { output: 'say ', matched: '<|im_end|>' };
  for (let a = 0; a <= text.length; a++) {
    for (let b = a; b <= text.length; b++) {
      const pieces = [text.slice(0, a), text.slice(a, b), text.slice(b)];
      assert.deepEqual(run(matcher(['<|im_end|>', 'never']), pieces), expected, JSON.stringify(pieces));
    }
  }
});

test('with several stop strings the earliest match wins', () => {
  assert.deepEqual(run(matcher(['world', 'lo']), ['hello world']), { output: 'hel', matched: 'lo' });
  assert.deepEqual(run(matcher(['lo', 'world']), ['hello world']), { output: 'hel', matched: 'lo' });
  assert.deepEqual(run(matcher(['world', 'xyz']), ['hello', ' wor', 'ld xyz']), { output: 'hello ', matched: 'world' });
});

test('"earliest" means the first to complete, so chunking cannot change it; ties go to the longer', () => {
  // "c" completes at position 3, before "abcd" does; fed whole or one character at a time alike.
  assert.deepEqual(run(matcher(['abcd', 'c']), ['xabcd']), { output: 'xab', matched: 'c' });
  assert.deepEqual(run(matcher(['abcd', 'c']), [...'xabcd']), { output: 'xab', matched: 'c' });
  // "ab" and "b" complete together; the longer one starts earlier and cuts more.
  assert.deepEqual(run(matcher(['b', 'ab']), ['xaby']), { output: 'x', matched: 'ab' });
});

test('a held-back prefix that turns out not to be a stop string is emitted later', () => {
  const stops = matcher(['STOP']);
  assert.deepEqual(stops.feed('go ST'), { emit: 'go ', stopped: false });
  assert.deepEqual(stops.feed('ART'), { emit: 'START', stopped: false });
  assert.deepEqual(stops.feed('S'), { emit: '', stopped: false });
  assert.deepEqual(stops.feed('TO'), { emit: '', stopped: false });
  assert.deepEqual(stops.feed('TOP'), { emit: 'STOTOP', stopped: false });
  // A prefix inside a prefix: "aab" while waiting for "aaa…" keeps only what can still match.
  const overlapping = matcher(['aaab']);
  assert.deepEqual(overlapping.feed('aa'), { emit: '', stopped: false });
  assert.deepEqual(overlapping.feed('aa'), { emit: 'a', stopped: false });
  assert.deepEqual(overlapping.feed('b!'), { emit: '', stopped: true, matched: 'aaab' });
});

test('includeStopStrInOutput keeps the stop string and drops what follows it', () => {
  assert.deepEqual(run(matcher(['</answer>'], true), ['<answer>4</ans', 'wer> trailing']), {
    output: '<answer>4</answer>',
    matched: '</answer>',
  });
});

test('flush returns the held-back text at the end, and nothing after a stop', () => {
  const stops = matcher(['###']);
  assert.deepEqual(stops.feed('text #'), { emit: 'text ', stopped: false });
  assert.deepEqual(stops.feed('#'), { emit: '', stopped: false });
  assert.equal(stops.flush(), '##');
  assert.equal(stops.flush(), '');

  const stopped = matcher(['!']);
  assert.equal(stopped.feed('hi! there').emit, 'hi');
  assert.deepEqual(stopped.feed('more!'), { emit: '', stopped: true, matched: '!' });
  assert.equal(stopped.flush(), '');
});

test('without stop strings everything is emitted at once', () => {
  const stops = matcher([]);
  assert.deepEqual(stops.feed('anything'), { emit: 'anything', stopped: false });
  assert.equal(stops.flush(), '');
});

test('canStop false ignores a stop string that completes, but not one that completes later', () => {
  const stops = matcher(['END', 'ENDGAME']);
  assert.deepEqual(stops.feed('the END', { canStop: false }), { emit: 'the ', stopped: false });
  assert.deepEqual(stops.feed(' of it', { canStop: false }), { emit: 'END of it', stopped: false });
  assert.deepEqual(stops.feed(' END'), { emit: ' ', stopped: true, matched: 'END' });

  const straddling = matcher(['STOP']);
  assert.equal(straddling.feed('a ST', { canStop: false }).emit, 'a ');
  assert.deepEqual(straddling.feed('OP'), { emit: '', stopped: true, matched: 'STOP' });
});

test('rejects empty stop strings', () => {
  assert.throws(() => matcher(['ok', '']), { name: 'RangeError', message: 'stop cannot contain an empty string' });
});

test('checkStopToken: EOS, ignore_eos, stop token ids and min_tokens', () => {
  const eos = [151645, 151643];
  const params = resolveSamplingParams({ stopTokenIds: [7] });
  assert.deepEqual(checkStopToken(151643, 1, params, eos), { finishReason: 'stop', stopReason: null });
  assert.deepEqual(checkStopToken(7, 3, params, eos), { finishReason: 'stop', stopReason: 7 });
  assert.equal(checkStopToken(8, 3, params, eos), null);

  const ignoring = resolveSamplingParams({ ignoreEos: true, stopTokenIds: [7] });
  assert.equal(checkStopToken(151645, 3, ignoring, eos), null);
  assert.deepEqual(checkStopToken(7, 3, ignoring, eos), { finishReason: 'stop', stopReason: 7 });
  // An EOS id that is also a stop token id stops even with ignore_eos, reported as the stop token.
  assert.deepEqual(checkStopToken(151645, 3, { ...ignoring, stopTokenIds: [151645] }, eos), {
    finishReason: 'stop',
    stopReason: 151645,
  });

  // min_tokens = 2: the first two generated tokens cannot stop; the third can.
  const minimum = resolveSamplingParams({ minTokens: 2, stopTokenIds: [7] });
  assert.equal(checkStopToken(151645, 1, minimum, eos), null);
  assert.equal(checkStopToken(7, 2, minimum, eos), null);
  assert.deepEqual(checkStopToken(151645, 3, minimum, eos), { finishReason: 'stop', stopReason: null });
  assert.ok(!stopStringsAllowed(2, minimum));
  assert.ok(stopStringsAllowed(3, minimum));
});

test('checkLength: max_tokens and the context length', () => {
  const limited = resolveSamplingParams({ maxTokens: 4 });
  assert.equal(checkLength(3, 13, limited, 100), null);
  assert.deepEqual(checkLength(4, 14, limited, 100), { finishReason: 'length', stopReason: null });
  const unlimited = resolveSamplingParams({});
  assert.equal(checkLength(50, 99, unlimited, 100), null);
  assert.deepEqual(checkLength(51, 100, unlimited, 100), { finishReason: 'length', stopReason: null });
  assert.deepEqual(stopStringFinish('</answer>'), { finishReason: 'stop', stopReason: '</answer>' });
});
