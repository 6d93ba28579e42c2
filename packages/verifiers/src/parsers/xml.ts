// The answer extraction of verifiers' XMLParser for one field: Python's re.search(r"<tag>\s*(.*?)\s*</tag>",
// text, re.DOTALL) followed by str.strip(), i.e. the text between the first <tag> and the first </tag> after it,
// with surrounding whitespace removed. Whitespace is Python's (str.isspace), which differs slightly from
// String.prototype.trim: it includes U+001C..U+001F and U+0085 but not U+FEFF.

const PYTHON_WHITESPACE = new Set(
  [
    '\t',
    '\n',
    '\v',
    '\f',
    '\r',
    '\x1c',
    '\x1d',
    '\x1e',
    '\x1f',
    ' ',
    '\x85',
    '\xa0',
    '\u1680',
    '\u2000',
    '\u2001',
    '\u2002',
    '\u2003',
    '\u2004',
    '\u2005',
    '\u2006',
    '\u2007',
    '\u2008',
    '\u2009',
    '\u200a',
    '\u2028',
    '\u2029',
    '\u202f',
    '\u205f',
    '\u3000',
  ].map((character) => character.charCodeAt(0)),
);

/** Python's `str.strip()` without arguments (every whitespace character above is a single UTF-16 unit). */
export function stripPythonWhitespace(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && PYTHON_WHITESPACE.has(text.charCodeAt(start))) start++;
  while (end > start && PYTHON_WHITESPACE.has(text.charCodeAt(end - 1))) end--;
  return text.slice(start, end);
}

/** The trimmed content of the first `<tag>…</tag>` in `text`; undefined when there is no such pair. */
export function parseXmlAnswer(text: string, tag: string): string | undefined {
  const openTag = `<${tag}>`;
  const closeTag = `</${tag}>`;
  const openAt = text.indexOf(openTag);
  if (openAt < 0) return undefined;
  const contentStart = openAt + openTag.length;
  const closeAt = text.indexOf(closeTag, contentStart);
  if (closeAt < 0) return undefined;
  return stripPythonWhitespace(text.slice(contentStart, closeAt));
}
