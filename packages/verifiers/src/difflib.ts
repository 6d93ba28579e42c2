// Python's difflib.SequenceMatcher(None, a, b) on strings, reproduced step for step so that rewards built on
// ratio() (reverse-text's "LCS" reward) are bit-identical to the Python originals. This is the Ratcliff/Obershelp
// "gestalt" matcher, not a true longest common subsequence, and it keeps CPython's autojunk heuristic: in a `b` of
// 200 or more elements, elements occurring more than len(b)/100 + 1 times cannot start a match. There is no isjunk.
// Strings are compared by Unicode code points, as Python does (not by UTF-16 code units).

/** A run of equal elements: a[aStart .. aStart+size) equals b[bStart .. bStart+size). */
export interface MatchingBlock {
  readonly aStart: number;
  readonly bStart: number;
  readonly size: number;
}

/** CPython applies autojunk only to sequences at least this long. */
const AUTOJUNK_MIN_LENGTH = 200;

const NO_POSITIONS: readonly number[] = [];

function toCodePoints(text: string): number[] {
  const codePoints: number[] = [];
  for (const character of text) codePoints.push(character.codePointAt(0) ?? 0);
  return codePoints;
}

/** Ascending positions of each element of b, without the popular elements (CPython's b2j after __chain_b). */
function indexPositionsWithoutPopular(b: readonly number[]): Map<number, number[]> {
  const positionsByElement = new Map<number, number[]>();
  b.forEach((element, position) => {
    const positions = positionsByElement.get(element);
    if (positions === undefined) positionsByElement.set(element, [position]);
    else positions.push(position);
  });
  if (b.length >= AUTOJUNK_MIN_LENGTH) {
    const popularThreshold = Math.floor(b.length / 100) + 1;
    for (const [element, positions] of positionsByElement) {
      if (positions.length > popularThreshold) positionsByElement.delete(element);
    }
  }
  return positionsByElement;
}

export class SequenceMatcher {
  private readonly a: readonly number[];
  private readonly b: readonly number[];
  private readonly bPositions: Map<number, number[]>;
  private matchingBlocks: MatchingBlock[] | undefined;

  constructor(a: string, b: string) {
    this.a = toCodePoints(a);
    this.b = toCodePoints(b);
    this.bPositions = indexPositionsWithoutPopular(this.b);
  }

  /**
   * Longest matching block in a[aLow..aHigh) × b[bLow..bHigh), as CPython's find_longest_match: among the longest
   * blocks that start with a non-popular element, the one starting earliest in a, then earliest in b; then grown
   * over equal neighbours on both sides (popular elements allowed). Size 0 when nothing matches.
   */
  findLongestMatch(aLow: number, aHigh: number, bLow: number, bHigh: number): MatchingBlock {
    const { a, b } = this;
    let bestA = aLow;
    let bestB = bLow;
    let bestSize = 0;
    // matchLengthEndingAt.get(j) = length of the match ending at a[i-1], b[j]
    let matchLengthEndingAt = new Map<number, number>();
    for (let i = aLow; i < aHigh; i++) {
      const nextMatchLengthEndingAt = new Map<number, number>();
      for (const j of this.bPositions.get(a[i] as number) ?? NO_POSITIONS) {
        if (j < bLow) continue;
        if (j >= bHigh) break;
        const length = (matchLengthEndingAt.get(j - 1) ?? 0) + 1;
        nextMatchLengthEndingAt.set(j, length);
        if (length > bestSize) {
          bestA = i - length + 1;
          bestB = j - length + 1;
          bestSize = length;
        }
      }
      matchLengthEndingAt = nextMatchLengthEndingAt;
    }
    while (bestA > aLow && bestB > bLow && a[bestA - 1] === b[bestB - 1]) {
      bestA--;
      bestB--;
      bestSize++;
    }
    while (bestA + bestSize < aHigh && bestB + bestSize < bHigh && a[bestA + bestSize] === b[bestB + bestSize]) {
      bestSize++;
    }
    return { aStart: bestA, bStart: bestB, size: bestSize };
  }

  /**
   * CPython's get_matching_blocks: divide and conquer around the longest match, sorted, adjacent blocks merged,
   * and terminated by the sentinel block (len(a), len(b), 0).
   */
  getMatchingBlocks(): readonly MatchingBlock[] {
    if (this.matchingBlocks !== undefined) return this.matchingBlocks;
    const aLength = this.a.length;
    const bLength = this.b.length;
    // CPython pops windows from the end of a list; the order only affects discovery, not the sorted result.
    const windows: [number, number, number, number][] = [[0, aLength, 0, bLength]];
    const found: MatchingBlock[] = [];
    for (let window = windows.pop(); window !== undefined; window = windows.pop()) {
      const [aLow, aHigh, bLow, bHigh] = window;
      const match = this.findLongestMatch(aLow, aHigh, bLow, bHigh);
      if (match.size === 0) continue;
      found.push(match);
      if (aLow < match.aStart && bLow < match.bStart) windows.push([aLow, match.aStart, bLow, match.bStart]);
      const aEnd = match.aStart + match.size;
      const bEnd = match.bStart + match.size;
      if (aEnd < aHigh && bEnd < bHigh) windows.push([aEnd, aHigh, bEnd, bHigh]);
    }
    found.sort((left, right) => left.aStart - right.aStart || left.bStart - right.bStart || left.size - right.size);

    const merged: MatchingBlock[] = [];
    let pending: MatchingBlock = { aStart: 0, bStart: 0, size: 0 };
    for (const block of found) {
      if (pending.aStart + pending.size === block.aStart && pending.bStart + pending.size === block.bStart) {
        pending = { ...pending, size: pending.size + block.size };
      } else {
        if (pending.size > 0) merged.push(pending);
        pending = block;
      }
    }
    if (pending.size > 0) merged.push(pending);
    merged.push({ aStart: aLength, bStart: bLength, size: 0 });
    this.matchingBlocks = merged;
    return merged;
  }

  /** 2·M / (len(a) + len(b)) with M the number of matched elements; 1 when both are empty. */
  ratio(): number {
    const matched = this.getMatchingBlocks().reduce((sum, block) => sum + block.size, 0);
    const totalLength = this.a.length + this.b.length;
    return totalLength === 0 ? 1 : (2 * matched) / totalLength;
  }
}

/** Python's `difflib.SequenceMatcher(None, a, b).ratio()`; autojunk looks at `b` only, so the order matters. */
export function difflibRatio(a: string, b: string): number {
  return new SequenceMatcher(a, b).ratio();
}
