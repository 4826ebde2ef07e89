"""Words run together in identifiers (`lineitem`, `l_shipdate`, `o_totalprice`, `mediatype`):
the words they are made of, so that a question's "items shipped" finds them.

The vocabulary is the word-start tokens of the tokenizer the default embedder already ships
(wordllama's, 32,000 tokens; `known_words`), not a list made here: an identifier word that is
not itself a word there splits in two when its longest word prefix leaves a word of four
letters or more (`shipdate` → ship, date; `transcript` does not split: its longest prefix,
`trans`, leaves `cript`; `citizenship` does not: `citizens` leaves `hip`).
"""

from __future__ import annotations

from functools import lru_cache

from schemawise.known_words import vocabulary

# The shortest word a compound may be split into: shorter pieces are more often fragments.
MIN_PREFIX = 3
MIN_REST = 4
# Identifier words shorter than this are not compounds worth splitting.
MIN_COMPOUND = 7


@lru_cache(maxsize=65536)
def parts(word: str) -> tuple[str, str] | None:
    """`shipdate` → (ship, date); None for a word that is one word or splits no clean way."""
    word = word.lower()
    words = vocabulary()
    if len(word) < MIN_COMPOUND or not word.isalpha() or word in words:
        return None
    for cut in range(len(word) - MIN_REST, MIN_PREFIX - 1, -1):  # longest prefix first
        head, rest = word[:cut], word[cut:]
        if head in words:
            return (head, rest) if rest in words else None
    return None
