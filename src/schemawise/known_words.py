"""The words of English an installed tokenizer knows, as a set: the word-start tokens of the
default embedder's tokenizer (wordllama's, 32,000 tokens), not a list made here.

Used to tell a word (`item`, `shipdate` is not one) from letters run together: identifier
compounds (index/compounds.py) and glued abbreviations of table names (graph/naming.py).
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
