"""Identifier words: splitting, singular forms and abbreviations, for matching names to tables."""

from __future__ import annotations

import re
import unicodedata
from functools import cache, lru_cache

from schemawise.known_words import is_word, vocabulary

# Words that name a key rather than an entity: `customer_id`, `CountryCode`, `cust_ref`.
KEY_WORDS = frozenset(
    {"id", "ids", "code", "cd", "key", "no", "num", "number", "nbr", "ref", "sku", "uuid", "guid"}
)
# Words that all mean "the identifier of", unlike codes such as `sku` that are values too.
IDENTIFIER_WORDS = frozenset({"id", "ref", "key", "no", "num", "number", "nbr"})
# Words of aggregating (grammar, not vocabulary): a question asks with them ("the average
# weight" is about weight), and a column named with them holds a measure (`team_id_count`).
AGGREGATE_WORDS = frozenset(
    {"average", "avg", "total", "sum", "maximum", "minimum", "max", "min", "mean", "count"}
)
# Columns named only by these say nothing about which table they point to.
GENERIC_WORDS = KEY_WORDS | frozenset(
    {"name", "type", "status", "date", "value", "description", "title", "year", "amount"}
)

# Over a name's characters as classes (U upper-case letter, L lower-case letter, O a letter of
# a script without case, D digit, space for the rest; a combining mark takes its letter's
# class): `StuID` → UULUU, whose runs are Stu and ID; `CPU使用率` → UUUOOO: CPU and 使用率.
_CAMEL = re.compile(r"U+(?=UL)|U?L+|U+|O+|D+")
_ASCII_WORD = re.compile(r"[A-Za-z0-9]+")


def _classes(text: str) -> str:
    out: list[str] = []
    for ch in text:
        kind = unicodedata.category(ch)
        if kind == "Lu":
            out.append("U")
        elif kind in ("Ll", "Lt"):
            out.append("L")
        elif kind[0] == "L":
            out.append("O")
        elif kind[0] == "M":
            out.append(out[-1] if out and out[-1] != " " else "O")
        else:
            out.append("D" if kind[0] == "N" else " ")
    return "".join(out)


def word_runs(text: str) -> list[str]:
    """The runs of letters, digits and combining marks of `text`, in any script (NFC):
    "São Paulo" → São, Paulo; "ग्राहक" stays whole; the underscore and punctuation split."""
    if text.isascii():  # the common case, and a regex is several times faster
        return _ASCII_WORD.findall(text)
    text = unicodedata.normalize("NFC", text)
    return [text[m.start() : m.end()] for m in re.finditer(r"[ULOD]+", _classes(text))]


@lru_cache(maxsize=65536)
def split_identifier(name: str) -> tuple[str, ...]:
    """`order_items` → (order, items); `custId` → (cust, id); `StuID` → (stu, id);
    `Größe` → (größe,), in any script."""
    name = unicodedata.normalize("NFC", name)
    parts = [name[m.start() : m.end()] for m in _CAMEL.finditer(_classes(name))]
    return tuple(p.lower() for p in _two_capitals(parts))


def _two_capitals(parts: list[str]) -> list[str]:
    """Capitals before a lower-case word split as camel case reads `HTTPServer` (HTTP, Server),
    the last capital to the word: right for `LName` (L, Name), wrong for `teamIDwinner` (I,
    Dwinner), `GSoffered` (G, Soffered), `CEOname` (CE, Oname). The run stays whole when what
    follows it is a word of English and the last capital with it is not."""
    out: list[str] = []
    i = 0
    while i < len(parts):
        part, following = parts[i], parts[i + 1] if i + 1 < len(parts) else ""
        if (
            part.isalpha()
            and part.isupper()
            and len(following) > 2
            and following[0].isupper()
            and following[1:].islower()
            and is_word(following[1:].lower())
            and not is_word(following.lower())
        ):
            out += [part + following[0], following[1:]]
            i += 2
            continue
        out.append(part)
        i += 1
    return out


@lru_cache(maxsize=65536)
def singular(word: str) -> str:
    if len(word) <= 3 or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "sses", "zes")):
        return word[:-2]
    if word.endswith("s"):
        return word[:-1]
    return word


# Words that decorate a table name without naming its entity: `model_list`, `dim_customer`.
TABLE_DECORATIONS = frozenset(
    {
        "list",
        "table",
        "tbl",
        "data",
        "info",
        "details",
        "master",
        "dim",
        "fact",
        "lookup",
        "lkp",
        "ref",
        "stg",
        "raw",
        "tmp",
        "all",
    }
)


def stem(word: str) -> str:
    """A crude stem of a singular word, so that `liked` or `rating` meets `like` or `rate`."""
    for suffix in ("ing", "ed", "e"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def singular_words(name: str) -> tuple[str, ...]:
    return tuple(singular(w) for w in split_identifier(name))


@lru_cache(maxsize=65536)
def entity_words(name: str) -> tuple[str, ...]:
    """A table name's words without decorations: `dim_customers` → (customer,)."""
    words = singular_words(name)
    core = tuple(w for w in words if w not in TABLE_DECORATIONS)
    return core or words


def words_match(a: str, b: str) -> float:
    """1.0 for the same word (singular or plural), 0.8 for an abbreviation, else 0."""
    a, b = singular(a), singular(b)
    if a == b:
        return 1.0
    if a in IDENTIFIER_WORDS and b in IDENTIFIER_WORDS:
        return 0.8  # cust_ref ~ customer_id: both words say "the identifier of"
    short, long = (a, b) if len(a) < len(b) else (b, a)
    # `cust` → customer, `prod` → product, `stu` → student: a prefix of at least 3 letters.
    if len(short) >= 3 and long.startswith(short):
        return 0.8 if len(short) * 2 >= len(long) else 0.7
    # `hero` → superhero, `power` → superpower: the head of a compound word.
    if len(short) >= 4 and long.endswith(short):
        return 0.7
    return 0.0


def sequence_match(words: tuple[str, ...], target: tuple[str, ...]) -> float:
    """How well `words` spell `target`, word for word (product of word scores)."""
    if len(words) != len(target) or not words:
        return 0.0
    score = 1.0
    for a, b in zip(words, target, strict=True):
        score *= words_match(a, b)
        if score == 0.0:
            return 0.0
    return score


# Shortest last piece of a glued abbreviation (`demo` in `cdemo`): shorter ones say too little.
MIN_GLUED_TAIL = 3


@lru_cache(maxsize=65536)
def glued_abbreviation(word: str, words: tuple[str, ...]) -> bool:
    """`cdemo` for (customer, demographic), `custaddr` for (customer, address): one word made
    of a prefix of each of two or more words, in order, the last piece at least 3 letters.
    A word of English (`item`, `user`: i + tem, u + ser) is never one: it means itself."""
    words = tuple(w for w in words if not w.isdigit())
    if len(words) < 2 or len(word) < len(words) - 1 + MIN_GLUED_TAIL or word in vocabulary():
        return False

    @cache
    def fits(at: int, index: int) -> bool:
        # word[at:] is glued from words[index:]; memoised on the two positions, so repetitive
        # names cost the product of their lengths, not every way of cutting them.
        rest, head = word[at:], words[index]
        if index == len(words) - 1:
            return len(rest) >= MIN_GLUED_TAIL and head.startswith(rest)
        return any(
            head[:n] == rest[:n] and fits(at + n, index + 1)
            for n in range(1, min(len(head), len(rest)) + 1)
        )

    return fits(0, 0)


def ends_with(words: tuple[str, ...], tail: tuple[str, ...]) -> float:
    """Score of `words` ending with `tail` (a role prefix such as `billing_` may come first)."""
    if not tail or len(tail) > len(words):
        return 0.0
    return sequence_match(words[len(words) - len(tail) :], tail)


def is_generic(name: str) -> bool:
    words = split_identifier(name)
    return not words or all(w in GENERIC_WORDS for w in words)


# Words a column about time is named with (`order_date`, `created_at`, `fiscal_year`).
TIME_WORDS = frozenset({"date", "time", "year", "month", "day", "timestamp", "at", "dt"})


def is_time(type_name: str, name: str) -> bool:
    """A column about time: a temporal type, or a name with a word of time."""
    return type_family(type_name) == "temporal" or bool(set(singular_words(name)) & TIME_WORDS)


@lru_cache(maxsize=4096)
def type_family(type_name: str) -> str:
    """Coarse type classes for deciding whether two columns could hold the same values."""
    t = type_name.lower()
    if not t:
        return "any"  # SQLite columns may have no declared type
    if any(k in t for k in ("int", "serial")):
        return "integer"
    if any(k in t for k in ("char", "text", "string", "clob", "uuid", "varchar")):
        return "text"
    if any(k in t for k in ("numeric", "decimal", "real", "double", "float", "number")):
        return "number"
    if any(k in t for k in ("date", "time")):
        return "temporal"
    if "bool" in t:
        return "boolean"
    return "other"


def type_affinity(a: str, b: str) -> float:
    """1.0 when two columns could hold the same values as typed, 0.7 for ids stored as text
    in one table and as numbers in the other (common in legacy schemas and SQLite), else 0."""
    fa, fb = type_family(a), type_family(b)
    if "any" in (fa, fb) or fa == fb or {fa, fb} == {"integer", "number"}:
        return 1.0
    if {fa, fb} == {"integer", "text"}:
        return 0.7
    return 0.0


def types_compatible(a: str, b: str) -> bool:
    return type_affinity(a, b) == 1.0
