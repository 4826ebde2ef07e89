"""The words of English an installed tokenizer knows, as a set: the word-start tokens of the
default embedder's tokenizer (wordllama's, 32,000 tokens), not a list made here.

Used to tell a word (`item`, `shipdate` is not one) from letters run together: identifier
compounds (index/compounds.py) and glued abbreviations of table names (graph/naming.py).

`is_word` asks a larger question, whether a string is a word of English at all, of wordfreq's
frequency counts: the schema's lexicon and the relevance floor read only such words by meaning
(retrieve/lexicon.py).
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources

# Word-start tokens shorter than this many letters are left out: more fragments than words.
MIN_LETTERS = 3


@lru_cache(maxsize=1)
def vocabulary() -> frozenset[str]:
    """Lower-case alphabetic word-start tokens of wordllama's tokenizer; empty if it is
    missing (an install without it then knows no word)."""
    try:
        path = resources.files("wordllama") / "tokenizers" / "l2_supercat_tokenizer_config.json"
        vocab = json.loads(path.read_text())["model"]["vocab"]
    except (ModuleNotFoundError, FileNotFoundError, KeyError, ValueError):
        return frozenset()
    return frozenset(
        token[1:].lower()
        for token in vocab
        if token.startswith("▁") and token[1:].isascii() and token[1:].isalpha()
        and len(token) > MIN_LETTERS
    )  # fmt: skip


# How common a word must be in English to count as one, on wordfreq's Zipf scale (log10 of its
# uses per billion words): 1.0 is about once in 100 million words. Below it is a string made up
# or typed at random (`zzqx`, `qwer`) or letters glued from a schema's names (`hdemo`,
# `availqty`, `acctbal`): nothing an embedder has learned a meaning for. Not swept: the first
# round number under every schema and question word of the benchmark sets it was checked on
# (`highschooler` 1.15, `maestros` 2.04) and over the made-up ones (0.0).
MIN_ZIPF = 1.0


@lru_cache(maxsize=65536)
def is_word(word: str) -> bool:
    """Whether `word` is a word of English at all (by wordfreq's counts), so that its meaning
    can be compared: not a code, an abbreviation glued together, or random letters."""
    try:
        from wordfreq import zipf_frequency  # its word lists load on first use (about 0.1 s)
    except ModuleNotFoundError:  # an install without it reads every word, as before it
        return True
    return zipf_frequency(word, "en") >= MIN_ZIPF
