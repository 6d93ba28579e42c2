// fnmatch-style patterns, as huggingface_hub applies them to repository file paths: the whole path must
// match, `*` matches any run of characters including `/`, `?` one character, `[abc]`/`[a-z]` a set and
// `[!abc]` its complement. A pattern ending in `/` means everything under that folder.

const REGEX_SPECIAL = /[.*+?^${}()|[\]\\/]/g;

function escapeRegex(text: string): string {
  return text.replace(REGEX_SPECIAL, '\\$&');
}

/** A character as a member of a regex set, where `\\`, `]`, `[`, `^` and `-` would otherwise be syntax. */
function escapeSetMember(char: string): string {
  return /[\\\][^-]/.test(char) ? `\\${char}` : char;
}

/** The regex source of a bracket set's contents (between `[` and `]`, negation already removed). */
function translateSet(contents: string): string {
  let out = '';
  for (let i = 0; i < contents.length; i++) {
    const low = contents[i] as string;
    const high = contents[i + 2];
    if (contents[i + 1] === '-' && high !== undefined) {
      // Python drops reversed ranges like `z-a` (they match nothing); a JS regex would throw on them.
      if (low <= high) out += `${escapeSetMember(low)}-${escapeSetMember(high)}`;
      i += 2;
    } else {
      out += escapeSetMember(low);
    }
  }
  return out;
}

/** The anchored regex source for one fnmatch pattern (Python's fnmatch.translate). */
export function globToRegexSource(pattern: string): string {
  let out = '';
  let i = 0;
  while (i < pattern.length) {
    const char = pattern[i] as string;
    i++;
    if (char === '*') {
      while (pattern[i] === '*') i++; // `**` is the same as `*` in fnmatch
      out += '.*';
    } else if (char === '?') {
      out += '.';
    } else if (char === '[') {
      // A `]` right after `[` or `[!` is a member of the set, not its end.
      let end = i;
      if (pattern[end] === '!') end++;
      if (pattern[end] === ']') end++;
      while (end < pattern.length && pattern[end] !== ']') end++;
      if (end >= pattern.length) {
        out += '\\['; // an unterminated `[` is a literal character
        continue;
      }
      let contents = pattern.slice(i, end);
      i = end + 1;
      const negated = contents.startsWith('!');
      if (negated) contents = contents.slice(1);
      const set = translateSet(contents);
      if (set === '') out += negated ? '.' : '(?!)';
      else out += negated ? `[^${set}]` : `[${set}]`;
    } else {
      out += escapeRegex(char);
    }
  }
  return `^${out}$`;
}

/** Whether `path` matches the fnmatch `pattern` in full. */
export function matchesGlob(path: string, pattern: string): boolean {
  return new RegExp(globToRegexSource(pattern), 's').test(path);
}

/** huggingface_hub's convention: `folder/` means `folder/*`. */
function normalizePattern(pattern: string): string {
  return pattern.endsWith('/') ? `${pattern}*` : pattern;
}

/**
 * The paths that match at least one allow pattern (all of them when `allowPatterns` is undefined) and no
 * ignore pattern (huggingface_hub's filter_repo_objects).
 */
export function filterPaths(
  paths: readonly string[],
  allowPatterns: readonly string[] | undefined,
  ignorePatterns: readonly string[] | undefined,
): string[] {
  const compile = (patterns: readonly string[] | undefined): RegExp[] | undefined =>
    patterns?.map((pattern) => new RegExp(globToRegexSource(normalizePattern(pattern)), 's'));
  const allow = compile(allowPatterns);
  const ignore = compile(ignorePatterns) ?? [];
  return paths.filter(
    (path) => (allow === undefined || allow.some((re) => re.test(path))) && !ignore.some((re) => re.test(path)),
  );
}
