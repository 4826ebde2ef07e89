"""The words of a question and of identifiers: grammar only — no schema, no index, no scores.

Everything later stages count (the question's distinctive words, the names written out as
identifiers, adjacent words run together) is computed here once, in `read_question`.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from functools import lru_cache

from schemawise.graph.naming import (
    AGGREGATE_WORDS,
    singular,
    singular_words,
    split_identifier,
    word_runs,
)
from schemawise.retrieve.implied import with_implied_words

STOP = frozenset(
    {
        "the", "a", "an", "of", "in", "on", "for", "to", "and", "or", "by", "with", "what",
        "which", "who", "how", "many", "much", "is", "are", "was", "were", "show", "list",
        "find", "give", "all", "each", "per", "from", "that", "this", "those", "these",
        "their", "its", "be", "has", "have", "do", "does", "name", "names", "number",
        "count",
    }
)  # fmt: skip

# Words that ask for an aggregate: a column is rarely named so ("the average weight" is about
# weight, not about a stadium's `Average` column), so they tell databases apart by accident.
# (`count` is a word of asking, above.)
AGGREGATING = AGGREGATE_WORDS - {"count"}

# A relative time phrase ("over the last hour", "last week", "in the past 10 years", "the
# last two weeks"): its pointing word places the question in time and names nothing, so it
# must not match a column (`last` is not `LastName`). Grammar: the words of pointing in time,
# of counting and the units of time, all closed classes; the unit stays a word of the
# question. After "the" only behind a preposition ("the last year each player played", "whose
# last season", "first and last hour" mean the final one and keep it).
_UNIT = (
    r"(?=(?:(?:\d+|a|few|several|couple|of|one|two|three|four|five|six|seven|eight|nine|ten|"
    r"eleven|twelve)\s+)*(?:second|minute|hour|morning|evening|night|day|week|weekend|"
    r"fortnight|month|quarter|year|decade|season)s?\b)"
)
_POINTING = r"(?:last|next|past|previous|coming)\s+"
# "over the last hour": the preposition and "the" stay, the pointing word goes.
_AFTER_PREPOSITION = re.compile(
    r"(\b(?:in|over|during|for|within|from|since|of|at|throughout)\s+the\s+)" + _POINTING + _UNIT,
    re.IGNORECASE,
)
# "last week", "next month": with no determiner or possessive before it.
_ON_ITS_OWN = re.compile(
    r"(?<![\w'’])(?<!\bthe\s)(?<!\ba\s)(?<!\bwhose\s)(?<!\btheir\s)(?<!\bhis\s)"
    r"(?<!\bher\s)(?<!\bits\s)(?<!\bour\s)(?<!\bmy\s)(?<!\byour\s)(?<!\band\s)"
    r"(?<!\bor\s)(?<!\beach\s)(?<!\bevery\s)" + _POINTING + _UNIT,
    re.IGNORECASE,
)

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_CAMEL_CASE = re.compile(r"[a-z][A-Z]")
_LETTER_DIGIT = re.compile(r"[A-Za-z][0-9]")


def without_relative_time(text: str) -> str:
    """The text without the pointing word of its relative time phrases ("the last hour" →
    "the hour")."""
    return _ON_ITS_OWN.sub("", _AFTER_PREPOSITION.sub(r"\1", text))


def question_words(text: str) -> set[str]:
    """The text's distinctive words, singular: not words of asking, not single letters."""
    return {singular(w) for w in word_runs(text.lower()) if w not in STOP and len(w) > 1}


def text_words(text: str) -> set[str]:
    """Every word of the text, singular, words of asking included (a description's words)."""
    return {singular(w) for w in word_runs(text.lower())}


def identifier_words(identifier: str) -> set[str]:
    """The words of an identifier, singular (`FirstNames` → first, name)."""
    return set(singular_words(identifier))


@lru_cache(maxsize=65536)
def name_words(name: str) -> frozenset[str]:
    """The words of a table's own name, without its schema (`crm.OrderLines` → order, line)."""
    return frozenset(identifier_words(name.rsplit(".", 1)[-1]))


def names_table(name: str, asked: set[str]) -> bool:
    """Every word of the table's name is in the question."""
    words = name_words(name)
    return bool(words) and words <= asked


def identifiers(text: str) -> set[str]:
    """Words of the text that could be identifiers, lower case (`convertedManaCost`)."""
    return {w.lower() for w in re.findall(IDENTIFIER, text)}


def looks_like_identifier(word: str) -> bool:
    """`first_name`, `convertedManaCost`, `A11`: not a word of prose."""
    return "_" in word.strip("_") or bool(_CAMEL_CASE.search(word) or _LETTER_DIGIT.search(word))


def written_names(text: str, evidence: str) -> set[str]:
    """The names written out, lower case: words of the text that read as identifiers
    (`first_name`, `convertedManaCost`), and any word of the evidence, which is there to say
    what the question's words mean in the schema ("website refers to url"). A plain word of
    the question (`missing`, `date`) is prose, whatever column shares its name."""
    words = re.findall(IDENTIFIER, text)
    return {w.lower() for w in words if looks_like_identifier(w)} | identifiers(evidence)


def proper_names(text: str) -> list[str]:
    """Words written with a capital that no sentence starts with (`Paris`, `Jane Peacock's`
    → Paris, Jane, Peacock): what a question names in the data rather than in the schema, by
    grammar alone."""
    names: list[str] = []
    for sentence in re.split(r"[.?!;:]\s+|\n+", text):
        words = re.findall(r"[A-Za-z][A-Za-z'’]*", sentence)
        for word in words[1:]:
            bare = re.sub(r"['’]s?$", "", word)
            if bare[:1].isupper() and bare not in names:
                names.append(bare)
    return names


def with_split_identifiers(text: str) -> str:
    """The text followed by the words of its camelCase identifiers (`statusID` → status id),
    which would otherwise stay one word."""
    camel = [w for w in re.findall(IDENTIFIER, text) if _CAMEL_CASE.search(w)]
    split = [" ".join(split_identifier(w)) for w in dict.fromkeys(camel)]
    return " ".join([text, *split]) if split else text


def content_words(text: str) -> list[str]:
    """The text's words, not the words of asking (count, number, name, show) nor of
    aggregating (average, total, maximum)."""
    # Numbers are left out too: in a question they are mostly bounds ("between 5000 and
    # 10000", "at least 4"), and some numeric value somewhere in every database matches them.
    return [
        t
        for t in word_runs(text.lower())
        if t not in STOP and singular(t) not in STOP and not t.isdigit() and t not in AGGREGATING
    ]


def compounds(text: str) -> list[str]:
    """Each pair of adjacent content words written as one (`high school` → highschool), since
    identifiers often run words together (`Highschooler`)."""
    tokens = content_words(text)
    return [a + b for a, b in itertools.pairwise(tokens) if len(a + b) >= 6]


def with_compounds(text: str) -> str:
    """The text's content words plus their compounds (see `compounds`)."""
    return " ".join([*content_words(text), *compounds(text)])


@dataclass(frozen=True)
class QuestionWords:
    """A question read once, for every later stage."""

    text: str  # question and evidence as written: what the embedding reads
    # … with the words it implies (`tallest` → height) and of its camelCase identifiers.
    searched: str
    lexical: str  # `searched` and adjacent words run together: the lexical search's text
    vocabulary: str  # content words and compounds of `searched`: the vocabulary lookup's text
    asked: set[str]  # the distinctive words of `searched`, singular
    spelled: set[str]  # the names written out (written_names)
    # `asked` with adjacent words run together (`high schoolers` → highschooler): what may name
    # a table or column (the relevance floor)
    named: set[str]


def read_question(
    question: str, evidence: str = "", readings: tuple[str, ...] = ()
) -> QuestionWords:
    text = f"{question} {evidence}".strip()
    # Lexical matching also sees the words the question implies (`tallest` → height); the
    # embedding reads the question as written (adding them there measured slightly worse).
    searched = with_split_identifiers(with_implied_words(without_relative_time(text)))
    return QuestionWords(
        text=text,
        searched=searched,
        # … and its adjacent words run together (`high schoolers` finds `Highschooler`), and
        # the schema words its unknown words read as (retrieve/lexicon.py): the search only,
        # so that a reading finds documents but is not counted as a word the question says
        # (in the database vote, the rerank's coverage, the relevance measures) — counted
        # there too it lost shared-set questions (docs/benchmarks.md).
        lexical=" ".join([searched, *compounds(text), *readings]),
        vocabulary=with_compounds(searched),
        asked=question_words(searched),
        spelled=written_names(text, evidence),
        named=question_words(searched) | question_words(" ".join(compounds(text))),
    )
