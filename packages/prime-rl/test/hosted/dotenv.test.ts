// The .env parser used for secrets files.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseDotenv, unquote } from '../../src/hosted/index.js';

test('dotenv: assignments, comments, export, quotes, inline comments', () => {
  const text = [
    '# a comment',
    '',
    'PLAIN=value',
    '  SPACED  =  padded value  ',
    'export EXPORTED=yes',
    'EMPTY=',
    "SINGLE='lit $HOME \\n # not a comment'",
    'DOUBLE="line1\\nline2 \\"q\\" \\\\ # kept"  # trailing comment',
    'INLINE=abc # comment',
    'HASH=abc#def',
    'EQUALS=a=b=c',
    'DUP=first',
    'DUP=second',
    '\tTABBED=1',
  ].join('\n');
  const { values, warnings } = parseDotenv(text, 's.env');
  assert.deepEqual(Object.fromEntries(values), {
    PLAIN: 'value',
    SPACED: 'padded value',
    EXPORTED: 'yes',
    EMPTY: '',
    SINGLE: 'lit $HOME \\n # not a comment',
    DOUBLE: 'line1\nline2 "q" \\ # kept',
    INLINE: 'abc',
    HASH: 'abc#def',
    EQUALS: 'a=b=c',
    DUP: 'second',
    TABBED: '1',
  });
  assert.deepEqual(warnings, []);
});

test('dotenv: CRLF line endings and a BOM', () => {
  const { values } = parseDotenv('\uFEFFA=1\r\nB="2"\r\n', 'w.env');
  assert.deepEqual(Object.fromEntries(values), { A: '1', B: '2' });
});

test('dotenv: bad lines are skipped with a warning that never shows the line', () => {
  const text = [
    'NOEQUALS secret-one',
    '1BAD=secret-two',
    'my-key=secret-three',
    'OPEN="secret-four',
    'TAIL="x" secret-five',
    'OK=fine',
  ].join('\n');
  const { values, warnings } = parseDotenv(text, 's.env');
  assert.deepEqual(Object.fromEntries(values), { OK: 'fine' });
  assert.deepEqual(warnings, [
    "Skipping invalid line 1 in s.env: missing '=' separator",
    'Skipping invalid line 2 in s.env: the variable name must start with a letter or underscore and contain only letters, digits and underscores',
    'Skipping invalid line 3 in s.env: the variable name must start with a letter or underscore and contain only letters, digits and underscores',
    'Skipping invalid line 4 in s.env: unterminated quoted value',
    'Skipping invalid line 5 in s.env: unexpected text after the closing quote',
  ]);
  assert.ok(!warnings.join('\n').includes('secret'));
});

test('unquote strips one pair of matching quotes', () => {
  assert.equal(unquote('"a b"'), 'a b');
  assert.equal(unquote("'a'"), 'a');
  assert.equal(unquote('"a\''), '"a\'');
  assert.equal(unquote('plain'), 'plain');
});
