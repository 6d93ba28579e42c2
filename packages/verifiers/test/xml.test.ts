// parseXmlAnswer behaves like verifiers' XMLParser field extraction (re.search of <tag>\s*(.*?)\s*</tag> with
// DOTALL, then str.strip()).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseXmlAnswer, stripPythonWhitespace } from '../src/index.js';

test('returns the trimmed content of the tag', () => {
  assert.equal(parseXmlAnswer('<reversed_text>\n.olleH\n</reversed_text>', 'reversed_text'), '.olleH');
  assert.equal(parseXmlAnswer('Sure! <reversed_text> dlrow </reversed_text> done', 'reversed_text'), 'dlrow');
});

test('content spans lines and may be empty', () => {
  assert.equal(parseXmlAnswer('<a>line 1\nline 2</a>', 'a'), 'line 1\nline 2');
  assert.equal(parseXmlAnswer('<a>  \n </a>', 'a'), '');
  assert.equal(parseXmlAnswer('<a></a>', 'a'), '');
});

test('takes the first opening tag and the first closing tag after it', () => {
  assert.equal(parseXmlAnswer('<a>one</a> <a>two</a>', 'a'), 'one');
  assert.equal(parseXmlAnswer('<a><a>x</a>', 'a'), '<a>x');
  assert.equal(parseXmlAnswer('</a> <a>y</a>', 'a'), 'y');
});

test('undefined when the tag is missing or unclosed', () => {
  assert.equal(parseXmlAnswer('no tags here', 'a'), undefined);
  assert.equal(parseXmlAnswer('<a>unclosed', 'a'), undefined);
  assert.equal(parseXmlAnswer('<b>other</b>', 'a'), undefined);
  assert.equal(parseXmlAnswer('<think>x</think>', 'reversed_text'), undefined);
});

test('strips whitespace as Python does, not as String.prototype.trim', () => {
  assert.equal(stripPythonWhitespace('\x1c\x85 x \u3000'), 'x');
  assert.equal(stripPythonWhitespace('\ufeffx\ufeff'), '\ufeffx\ufeff');
  assert.equal(parseXmlAnswer('<a>\u00a0😀\u2029</a>', 'a'), '😀');
});
