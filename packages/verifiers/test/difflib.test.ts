// The difflib port against CPython: the spec's test vectors, and ~300 pairs whose ratio and matching blocks were
// produced by Python's own difflib (test/fixtures/difflib-ratio.json, made by scripts/make-difflib-fixture.py).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { difflibRatio, SequenceMatcher } from '../src/index.js';

// Tests run from dist/test, so the fixture sits two levels up, in the source tree.
const FIXTURE_PATH = fileURLToPath(new URL('../../test/fixtures/difflib-ratio.json', import.meta.url));

interface FixtureCase {
  a: string;
  b: string;
  ratio: number;
  blocks: [number, number, number][];
}

const fixture = JSON.parse(readFileSync(FIXTURE_PATH, 'utf8')) as { python: string; cases: FixtureCase[] };

const FOX = 'The quick brown fox jumps over the lazy dog. ';

describe('difflibRatio: the spec test vectors (B.0.1)', () => {
  const vectors: [string, string, number][] = [
    ['abcd', 'abdc', 0.75],
    ['kitten', 'sitting', 0.6153846153846154],
    ['abcxyz', 'xyzabc', 0.5],
    ['', 'abc', 0],
    ['', '', 1],
    [
      '.ti otni degrem saw kcuBr ni ytinummoc ehT',
      [...'The community in Bruck was merged into it'].reverse().join(''),
      0.963855421686747,
    ],
    [FOX.repeat(5), FOX.repeat(5), 1],
    [FOX.repeat(5).replaceAll('fox', 'cat'), FOX.repeat(5), 0.07111111111111111],
  ];
  for (const [a, b, expected] of vectors) {
    test(`ratio(${JSON.stringify(a.slice(0, 24))}, ${JSON.stringify(b.slice(0, 24))}) = ${expected}`, () => {
      assert.equal(difflibRatio(a, b), expected);
    });
  }
});

describe(`difflib against CPython ${fixture.python} (${fixture.cases.length} fixture pairs)`, () => {
  test('the fixture covers empty, long (autojunk) and astral-plane inputs', () => {
    assert.ok(fixture.cases.length >= 250);
    assert.ok(fixture.cases.some((c) => c.a === '' && c.b === ''));
    assert.ok(fixture.cases.some((c) => [...c.b].length >= 200 && c.ratio < 1 && c.ratio > 0));
    assert.ok(fixture.cases.some((c) => [...c.a].length !== c.a.length));
  });

  test('ratio() equals Python bit for bit on every pair', () => {
    const mismatches = fixture.cases
      .map((c, index) => ({ index, c, actual: difflibRatio(c.a, c.b) }))
      .filter(({ c, actual }) => actual !== c.ratio)
      .map(
        ({ index, c, actual }) => `#${index} a=${JSON.stringify(c.a)} b=${JSON.stringify(c.b)}: ${actual} ≠ ${c.ratio}`,
      );
    assert.deepEqual(mismatches, []);
  });

  test('getMatchingBlocks() equals Python on every pair (tie-breaking, merging, sentinel)', () => {
    for (const [index, c] of fixture.cases.entries()) {
      const blocks = new SequenceMatcher(c.a, c.b).getMatchingBlocks().map((b) => [b.aStart, b.bStart, b.size]);
      assert.deepEqual(blocks, c.blocks, `case #${index}: a=${JSON.stringify(c.a)} b=${JSON.stringify(c.b)}`);
    }
  });
});

describe('SequenceMatcher details', () => {
  test('autojunk applies to b only: a long a against a short b matches fully', () => {
    const long = FOX.repeat(5);
    assert.equal(difflibRatio(long, long.slice(0, 100)), (2 * 100) / (long.length + 100));
  });

  test('strings are compared by code points: one emoji is one element', () => {
    const matcher = new SequenceMatcher('😀a', 'a😀');
    assert.deepEqual(
      matcher.getMatchingBlocks().map((b) => [b.aStart, b.bStart, b.size]),
      [
        [0, 1, 1],
        [2, 2, 0],
      ],
    );
    assert.equal(matcher.ratio(), 0.5);
  });

  test('findLongestMatch prefers the earliest start in a, then in b', () => {
    const match = new SequenceMatcher('abab', 'abab').findLongestMatch(0, 4, 0, 4);
    assert.deepEqual(match, { aStart: 0, bStart: 0, size: 4 });
    const tie = new SequenceMatcher('xab_ab', 'abxab').findLongestMatch(0, 6, 0, 5);
    assert.deepEqual(tie, { aStart: 0, bStart: 2, size: 3 });
  });
});
