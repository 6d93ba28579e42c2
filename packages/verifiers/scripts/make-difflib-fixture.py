#!/usr/bin/env python3
"""Writes test/fixtures/difflib-ratio.json: string pairs with the ratio and matching blocks that CPython's
difflib.SequenceMatcher(None, a, b) gives them, so the TypeScript port can be checked without Python.

Usage: python3 packages/verifiers/scripts/make-difflib-fixture.py [OUTPUT_JSON]
Plain Python 3 only; deterministic (seeded random), so rerunning gives the same file on the same CPython.
"""

import difflib
import json
import os
import platform
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUTPUT = os.path.join(HERE, "..", "test", "fixtures", "difflib-ratio.json")

WORDS = (
    "the quick brown fox jumps over lazy dog community in bruck was merged into it river town old new "
    "small large city north south east west history people water year first last time world school"
).split()
EMOJI = ["😀", "🚀", "👍🏽", "🇩🇪", "👩‍💻", "❤️", "🐍", "𝔘𝔫𝔦"]
UNICODE_WORDS = ["café", "naïve", "Zürich", "東京", "Москва", "γειά", "e\u0301", "ß", "ﬁ", "\u00a0", "İ"]
FOX = "The quick brown fox jumps over the lazy dog. "


def sentence(rng, min_words, max_words, vocabulary):
    return " ".join(rng.choice(vocabulary) for _ in range(rng.randint(min_words, max_words)))


def random_string(rng, alphabet, length):
    return "".join(rng.choice(alphabet) for _ in range(length))


def mutate(rng, text, edits):
    """A few random deletions, insertions and substitutions, like a model's imperfect answer."""
    characters = list(text)
    for _ in range(edits):
        kind = rng.randrange(3)
        position = rng.randrange(len(characters) + 1)
        if kind == 0 and position < len(characters):
            del characters[position]
        elif kind == 1:
            characters.insert(position, rng.choice("abcdefghijklmnopqrstuvwxyz .,"))
        elif position < len(characters):
            characters[position] = rng.choice("abcdefghijklmnopqrstuvwxyz .,")
    return "".join(characters)


def make_pairs():
    rng = random.Random(20240601)
    pairs = [
        # The test vectors of the spec (B.0.1).
        ("abcd", "abdc"),
        ("kitten", "sitting"),
        ("abcxyz", "xyzabc"),
        ("", "abc"),
        ("abc", ""),
        ("", ""),
        (".ti otni degrem saw kcuBr ni ytinummoc ehT", "The community in Bruck was merged into it"[::-1]),
        (FOX * 5, FOX * 5),
        ((FOX * 5).replace("fox", "cat"), FOX * 5),
        (FOX * 5, (FOX * 5).replace("fox", "cat")),
        ("a", "a"),
        ("a", "b"),
        ("aaaa", "aa"),
        ("abab", "baba"),
        ("private Thread currentThread;", "private volatile Thread currentThread;"),
        (" abcd", "abcd abcd"),
        ("qabxcd", "abycdf"),
    ]

    # Identical and reversed sentences, short and long.
    for _ in range(25):
        text = sentence(rng, 3, 40, WORDS)
        pairs.append((text, text))
        pairs.append((text[::-1], text))
        pairs.append((text, text[::-1]))

    # Imperfect reversals, as a reverse-text model produces them.
    for _ in range(50):
        text = sentence(rng, 3, 45, WORDS)
        truth = text[::-1]
        pairs.append((mutate(rng, truth, rng.randint(1, 8)), truth))

    # Small alphabets: many equal-length candidate matches, so tie-breaking decides.
    for _ in range(50):
        alphabet = rng.choice(["ab", "abc", "xy ", "aab"])
        pairs.append((random_string(rng, alphabet, rng.randint(0, 40)), random_string(rng, alphabet, rng.randint(0, 40))))

    # Unicode: accents, combining marks, CJK, emoji outside the BMP and ZWJ sequences.
    for _ in range(30):
        vocabulary = WORDS + UNICODE_WORDS + EMOJI
        text = sentence(rng, 2, 12, vocabulary)
        other = mutate(rng, text, rng.randint(0, 4)) if rng.random() < 0.5 else text[::-1]
        pairs.append((other, text))
    pairs.append(("😀🚀", "🚀😀"))
    pairs.append(("👩‍💻", "💻‍👩"))
    pairs.append(("e\u0301", "\u0301e"))

    # Long b (>= 200 code points): autojunk removes popular elements from b's index.
    for length in (199, 200, 201, 250, 299, 300, 301, 450):
        truth = (sentence(rng, 60, 90, WORDS) + " ")[:length]
        pairs.append((truth[::-1], truth))
        pairs.append((mutate(rng, truth, 5), truth))
        pairs.append((truth, truth))
    for _ in range(20):
        truth = sentence(rng, 40, 80, WORDS)
        pairs.append((mutate(rng, truth[::-1], rng.randint(0, 20)), truth[::-1]))
    for _ in range(10):
        alphabet = rng.choice(["ab", "abc", "abcdefgh"])
        pairs.append((random_string(rng, alphabet, rng.randint(150, 300)), random_string(rng, alphabet, rng.randint(200, 300))))
    # Long a with short b: autojunk must not apply (it looks at b only).
    for _ in range(5):
        truth = sentence(rng, 40, 80, WORDS)
        pairs.append((truth, truth[:120]))
    # Long emoji strings: counting by code points decides whether autojunk applies.
    emoji_text = "".join(rng.choice(EMOJI[:3]) + "x" for _ in range(70))
    pairs.append((emoji_text[::-1], emoji_text))
    pairs.append((emoji_text, emoji_text))
    return pairs


def main():
    output = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_OUTPUT
    cases = []
    for a, b in make_pairs():
        matcher = difflib.SequenceMatcher(None, a, b)
        blocks = [list(block) for block in matcher.get_matching_blocks()]
        cases.append({"a": a, "b": b, "ratio": matcher.ratio(), "blocks": blocks})
    header = json.dumps(
        {"generator": "packages/verifiers/scripts/make-difflib-fixture.py", "python": platform.python_version()}
    )
    # One case per line keeps diffs of the fixture readable.
    lines = [json.dumps(case, ensure_ascii=False) for case in cases]
    with open(output + ".tmp", "w", encoding="utf-8") as file:
        file.write(header[:-1] + ', "cases": [\n' + ",\n".join(lines) + "\n]}\n")
    os.replace(output + ".tmp", output)
    print(f"wrote {len(cases)} cases to {os.path.relpath(output)}")


if __name__ == "__main__":
    main()
