"""Value containment as evidence of a join: how unlikely it is that a column's values (all, or
nearly all) lie inside a key's values by chance.

Containment alone proves little when keys are small dense ranges (ids 1…20 contain any column
of small numbers), and much when the key's values are sparse (ids 1025, 1247, 1934, …) or are
words: there, a column whose values all land on the key's values is very unlikely to be
anything but a reference, whatever its name. Pure functions over the values a data check read.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

# log10 of the chance of containment at or below which containment is evidence enough to
# propose a join no name suggests (one in a thousand).
IMPROBABLE = -3.0
# Each distinct word-like value found among a key's values counts as one chance in ten:
# a column of three distinct words all found among a key's words is one chance in a thousand.
WORD_VALUE_CHANCE = -1.0
# Fewer distinct values than this fit almost any key: never evidence.
MIN_DISTINCT = 3
# Real references have orphans (a flight's destination missing from the airports table): a
# column is still evidence when this share of its distinct values lies in the key, the same bar
# as the name rules set for a join only the data may confirm (`extract.CONFIRM_INCLUSION`).
# Under 20 distinct values it means all of them.
MIN_FOUND_SHARE = 0.95

_INTEGER = re.compile(r"-?\d+")


def normalise(value: object) -> str:
    """The text a value compares as: integral numbers as integers (`3.0` and `3` and `'3'` are
    one value), everything else as written (a leading space is a different value)."""
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _integers(values: Iterable[str]) -> list[int] | None:
    out = []
    for value in values:
        if not _INTEGER.fullmatch(value):
            return None
        out.append(int(value))
    return out


def chance_log10(child: set[str], parent: set[str]) -> float:
    """log10 of the chance that as many of `child`'s distinct values as are would be found in
    `parent` if they were unrelated. 0.0 (no evidence) when fewer than `MIN_FOUND_SHARE` are.

    Integers: each child value, anywhere in the child's range, hits one of the parent's values
    in that range with the key's density there — 0 (certain) for a dense id range, very
    negative for sparse keys. Other values (words, codes): each hits with `WORD_VALUE_CHANCE`.
    The chance is that of at least that many hits among the child's values (binomial).
    """
    held = child & parent
    found = len(held)
    if not child or found < MIN_FOUND_SHARE * len(child):
        return 0.0
    # Integers when the values found are: a stray `''` or `NA` among a column of numbers is a
    # miss, not a reason to read small numbers as words at one chance in ten each.
    held_ints = _integers(held)
    if held_ints is not None:
        parent_ints = _integers(parent)
        if parent_ints is None:
            parent_ints = [int(v) for v in parent if _INTEGER.fullmatch(v)]
        # The range the found values span: orphans far outside it (an independence year of
        # -1523 beside city ids 1…4079) must not make a dense key look sparse.
        low, high = min(held_ints), max(held_ints)
        hits = sum(1 for v in parent_ints if low <= v <= high)
        density = hits / (high - low + 1)
        if not 0 < density < 1:
            return 0.0
        return at_least_log10(found, len(child), math.log10(density))
    return at_least_log10(found, len(child), WORD_VALUE_CHANCE)


def at_least_log10(hits: int, trials: int, hit_log10: float) -> float:
    """log10 of the chance of at least `hits` successes in `trials`, each with chance
    10^`hit_log10`: the binomial tail, summed in logs (exactly `trials * hit_log10` when every
    trial must succeed)."""
    if hits >= trials:
        return trials * hit_log10
    p = 10.0**hit_log10
    log_p, log_q = math.log(p), math.log1p(-p)
    terms = [
        math.lgamma(trials + 1)
        - math.lgamma(j + 1)
        - math.lgamma(trials - j + 1)
        + j * log_p
        + (trials - j) * log_q
        for j in range(hits, trials + 1)
    ]
    top = max(terms)
    total = top + math.log(sum(math.exp(t - top) for t in terms))
    return min(0.0, total / math.log(10))


def integer_chance_log10(distinct: int, held: int, span: int) -> float:
    """log10 of the chance that `distinct` integers spread over a range of `span` values all
    land on a key holding `held` values in that range: 0 (certain) when the key fills it."""
    density = held / span
    return distinct * math.log10(density) if 0 < density < 1 else 0.0


@dataclass(frozen=True)
class Containment:
    parent: tuple[str, str]
    chance_log10: float
    distinct: int
    found: int  # of the distinct values, how many the parent holds


def improbable_parent(
    child: set[str], parents: Mapping[tuple[str, str], set[str]], *, child_unique: bool
) -> Containment | None:
    """The one parent key that holds (nearly) all of the child's values against the odds, or
    None.

    Parents whose containment is improbable by chance compete: those holding the most of the
    child's values, and of them the one whose values all the others also hold wins (a subtype's
    ids inside its supertype's: the nearest), else none does. A unique child holding (nearly)
    every value of its parent could be either side of a one-to-one link: the direction is
    unknown, so that parent is not proposed.
    """
    if len(child) < MIN_DISTINCT:
        return None
    strong: list[Containment] = []
    for key, values in parents.items():
        if child_unique and len(values & child) >= MIN_FOUND_SHARE * len(values):
            continue
        chance = chance_log10(child, values)
        if chance <= IMPROBABLE:
            found = len(child & values)
            strong.append(Containment(key, round(chance, 1), len(child), found))
    # A supertype holding every value beats a subtype holding all but one: the payer who is a
    # company is a party, not a person.
    most = max((c.found for c in strong), default=0)
    strong = [c for c in strong if c.found == most]
    if not strong:
        return None
    strong.sort(key=lambda c: len(parents[c.parent]))
    nearest = strong[0]
    nested = all(parents[nearest.parent] <= parents[other.parent] for other in strong[1:])
    strictly_nearest = len(strong) == 1 or len(parents[nearest.parent]) < len(
        parents[strong[1].parent]
    )
    return nearest if nested and strictly_nearest else None
