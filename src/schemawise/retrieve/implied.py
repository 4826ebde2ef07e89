"""Words a question implies without writing them: `the tallest player` asks about a height
column, `European countries` about the value `Europe`, `drivers from the USA` about
`nationality = 'American'`, `how is the course described` about a description column.

Schemas name measures by their noun (`height`, `weight`, `age`, `price`); questions ask with an
adjective or a verb (`taller than`, `weighing more than`, `the oldest`, `cheapest`). Data names
places by their noun or by their adjective (`Europe`, `Japanese`), questions by either. The
implied words are added to the words the lexical search, the table evidence and the column
pruning see; the question itself is not changed.

This is general English, not a list of any dataset's answers: each entry is a measure noun and
the comparative forms that ask about it, or a place and its adjective.
"""

from __future__ import annotations

import re

# Measure noun → the adjectives and verbs that ask about it.
_MEASURES: dict[str, tuple[str, ...]] = {
    "height": ("tall", "taller", "tallest"),
    "weight": (
        "heavy", "heavier", "heaviest", "lighter", "lightest",
        "weigh", "weighs", "weighed", "weighing",
    ),
    "age": ("old", "older", "oldest", "young", "younger", "youngest", "elder", "eldest", "aged"),
    "price": (
        "expensive", "cheap", "cheaper", "cheapest", "pricey", "pricier", "priciest", "costly",
    ),
    "cost": ("expensive", "cheap", "cheaper", "cheapest", "costly"),
    "length": ("long", "longer", "longest", "lengthy"),
    "speed": ("fast", "faster", "fastest", "slow", "slower", "slowest"),
    "distance": ("far", "farther", "farthest", "nearest", "closest"),
    "width": ("wide", "wider", "widest"),
    "depth": ("deep", "deeper", "deepest"),
    "birth": ("born",),
    "death": ("died",),
    "population": ("populous", "populated"),
    "popularity": ("popular",),
}  # fmt: skip

# A place and its adjective; either implies the other (`Japanese constructors` may be stored
# as `Japan`, `drivers from the USA` as `American`).
_PLACES: tuple[tuple[str, str], ...] = (
    ("europe", "european"), ("asia", "asian"), ("africa", "african"),
    ("america", "american"), ("usa", "american"), ("australia", "australian"),
    ("france", "french"), ("germany", "german"), ("italy", "italian"), ("spain", "spanish"),
    ("portugal", "portuguese"), ("england", "english"), ("britain", "british"),
    ("uk", "british"), ("ireland", "irish"), ("scotland", "scottish"), ("wales", "welsh"),
    ("netherlands", "dutch"), ("belgium", "belgian"), ("switzerland", "swiss"),
    ("austria", "austrian"), ("sweden", "swedish"), ("norway", "norwegian"),
    ("denmark", "danish"), ("finland", "finnish"), ("poland", "polish"),
    ("greece", "greek"), ("turkey", "turkish"), ("russia", "russian"),
    ("hungary", "hungarian"), ("czech", "czech"), ("japan", "japanese"),
    ("china", "chinese"), ("korea", "korean"), ("india", "indian"),
    ("thailand", "thai"), ("vietnam", "vietnamese"), ("indonesia", "indonesian"),
    ("canada", "canadian"), ("mexico", "mexican"), ("brazil", "brazilian"),
    ("argentina", "argentine"), ("argentina", "argentinian"), ("chile", "chilean"),
    ("colombia", "colombian"), ("peru", "peruvian"), ("egypt", "egyptian"),
    ("israel", "israeli"), ("iran", "iranian"), ("zealand", "zealander"),
)  # fmt: skip


# Every place and adjective above: a question naming one filters on where something is.
PLACE_WORDS = frozenset(word for pair in _PLACES for word in pair)


def _implications() -> dict[str, tuple[str, ...]]:
    implied: dict[str, list[str]] = {}
    for noun, forms in _MEASURES.items():
        for form in forms:
            implied.setdefault(form, []).append(noun)
    for place, adjective in _PLACES:
        if place != adjective:
            implied.setdefault(place, []).append(adjective)
            implied.setdefault(adjective, []).append(place)
    return {word: tuple(dict.fromkeys(nouns)) for word, nouns in implied.items()}


IMPLIED = _implications()

# A verb of the `describe` family implies its noun, which is how columns are named
# (`described` → description, `subscribes` → subscription, `prescribed` → prescription).
_NOUN_OF_VERB = re.compile(r"^([a-z]+scr)ib(?:e|ed|es|ing)$")


def implied_words(text: str) -> list[str]:
    """The words `text` implies and does not contain, in the order they are implied."""
    words = re.findall(r"[a-z]+", text.lower())
    present = set(words)
    out: dict[str, None] = {}
    for word in words:
        noun = _NOUN_OF_VERB.match(word)
        nouns = (*IMPLIED.get(word, ()), *([noun.group(1) + "iption"] if noun else []))
        for implied in nouns:
            if implied not in present:
                out[implied] = None
    return list(out)


def with_implied_words(text: str) -> str:
    """`text` followed by the words it implies (unchanged when it implies none)."""
    extra = implied_words(text)
    return f"{text} {' '.join(extra)}" if extra else text
