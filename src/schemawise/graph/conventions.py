"""A schema's own naming conventions, read off the schema, so that the naming rules of `infer`
see through them: columns prefixed with an abbreviation of their table (`l_orderkey` in
`lineitem`, `ss_item_sk` in `store_sales`), and key words the schema's own primary keys use
(`…_sk` for surrogate keys; `orderkey`, `custkey` with the key word glued on).

Nothing here is a list of words: a prefix counts only when most of a table's columns carry it
and it abbreviates the table's name; a key word counts only when several of the schema's
primary keys end with it. `logical_names` maps each column to the name the rules should read
(`l_orderkey` → `order_key`, `ss_sold_date_sk` → `sold_date_key`); `renamed` is the graph with
those names, for the rules to run on unchanged.
"""

from __future__ import annotations

from collections import Counter

from schemawise.graph.model import SchemaGraph, Table
from schemawise.graph.naming import KEY_WORDS, split_identifier, type_family

# Share of a table's columns that must carry a prefix for it to be the table's convention.
PREFIX_SHARE = 0.8
# Primary keys that must end with a word (or glue it on) for it to be the schema's key word.
MIN_KEYS = 3
# A key word learned from the schema is short, like the ones the rules know (`sk`, `pk`).
MAX_KEY_WORD = 3
# The key word logical names use: one the naming rules know.
CANONICAL_KEY = "key"
# Shortest stem left when a glued key word is cut off (`orderkey` → `order`).
MIN_STEM = 3


def _bare(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _is_subsequence(short: str, long: str) -> bool:
    letters = iter(long)
    return all(ch in letters for ch in short)


def abbreviates(prefix: str, table_name: str) -> bool:
    """`ss` abbreviates store_sales, `l` lineitem, `ps` partsupp, `inv` inventory: the prefix
    starts as the name does, its letters appear in order, and it is short: two letters, or at
    most half the first word (`size_` in `sizes`, `user_` in `users` are the table's word,
    naming the column, not a prefix)."""
    words = split_identifier(_bare(table_name))
    if not words or not prefix.isalpha():
        return False
    if len(prefix) > 2 and 2 * len(prefix) > len(words[0]):
        return False
    letters = "".join(words)
    return prefix[0] == letters[0] and _is_subsequence(prefix[1:], letters[1:])


def column_prefix(table: Table) -> str | None:
    """The prefix most of the table's columns share, when it abbreviates the table's name."""
    if len(table.columns) < 2:
        return None
    heads = Counter(
        c.name.split("_", 1)[0].lower() for c in table.columns if "_" in c.name.strip("_")
    )
    if not heads:
        return None
    head, count = heads.most_common(1)[0]
    if count < PREFIX_SHARE * len(table.columns) or not abbreviates(head, table.name):
        return None
    return head


def _strip(name: str, prefix: str | None) -> str:
    if prefix and name.lower().startswith(prefix + "_") and len(name) > len(prefix) + 1:
        return name[len(prefix) + 1 :]
    return name


def key_words(graph: SchemaGraph, prefixes: dict[str, str | None]) -> tuple[set[str], set[str]]:
    """The schema's own key words: (short last words of several keys that the rules do not know
    as key words, e.g. `sk`; key words several keys glue on, e.g. `key` in `orderkey`). A key
    is a table's single-column primary key, or, for a table that declares none, its first
    column when that holds whole numbers (keys usually come first)."""
    separate: Counter[str] = Counter()
    glued: Counter[str] = Counter()
    for table in graph.tables:
        key = _key_of(table)
        if key is None:
            continue
        words = split_identifier(_strip(key, prefixes.get(table.name)))
        if len(words) >= 2:
            separate[words[-1]] += 1
        elif len(words) == 1:
            for word in KEY_WORDS:
                if words[0].endswith(word) and len(words[0]) - len(word) >= MIN_STEM:
                    glued[word] += 1
    learned = {
        w for w, n in separate.items() if n >= MIN_KEYS and w.isalpha() and len(w) <= MAX_KEY_WORD
    }
    return learned - KEY_WORDS, {w for w, n in glued.items() if n >= MIN_KEYS}


def _key_of(table: Table) -> str | None:
    if len(table.primary_key) == 1:
        return table.primary_key[0]
    if table.primary_key or table.unique or not table.columns:
        return None
    first = table.columns[0]
    return first.name if type_family(first.type) == "integer" else None


def logical_names(graph: SchemaGraph) -> dict[tuple[str, str], str]:
    """(table, column) → the name the naming rules should read, for the columns a convention
    renames; empty when the schema has no convention."""
    prefixes = {t.name: column_prefix(t) for t in graph.tables}
    learned, glued = key_words(graph, prefixes)
    out: dict[tuple[str, str], str] = {}
    for table in graph.tables:
        prefix = prefixes[table.name]
        for column in table.columns:
            words = _with_key_word(split_identifier(_strip(column.name, prefix)), learned, glued)
            logical = "_".join(words)
            if words and logical != "_".join(split_identifier(column.name)):
                out[(table.name, column.name)] = logical
    # Two columns of a table read alike (`ss_item_sk` beside `item_sk`): neither is renamed.
    seen = Counter((t, n.lower()) for (t, _), n in out.items())
    seen.update((t.name, c.name.lower()) for t in graph.tables for c in t.columns
                if (t.name, c.name) not in out)  # fmt: skip
    return {k: n for k, n in out.items() if seen[(k[0], n.lower())] == 1}


def _with_key_word(words: tuple[str, ...], learned: set[str], glued: set[str]) -> list[str]:
    """The last word read as the canonical key word when it is the schema's own (`sk`) or
    carries one glued on (`orderkey` → order, key)."""
    out = list(words)
    if not out:
        return out
    if out[-1] in learned:
        return [*out[:-1], CANONICAL_KEY]
    for key in glued:
        if out[-1].endswith(key) and len(out[-1]) - len(key) >= MIN_STEM:
            return [*out[:-1], out[-1][: -len(key)], CANONICAL_KEY]
    return out


def restore(names: dict[tuple[str, str], str]) -> dict[tuple[str, str], str]:
    """The inverse of `logical_names`: (table, logical name) → the real column name."""
    return {(table, logical): real for (table, real), logical in names.items()}


def renamed(graph: SchemaGraph, names: dict[tuple[str, str], str]) -> SchemaGraph:
    """A copy of the graph whose columns (and keys) carry their logical names."""

    def rename(table: str, column: str) -> str:
        return names.get((table, column), column)

    copy = graph.model_copy(deep=True)
    for table in copy.tables:
        for column in table.columns:
            column.name = rename(table.name, column.name)
        table.primary_key = [rename(table.name, c) for c in table.primary_key]
        table.unique = [[rename(table.name, c) for c in key] for key in table.unique]
    for edge in copy.edges:
        edge.child_columns = [rename(edge.child_table, c) for c in edge.child_columns]
        edge.parent_columns = [rename(edge.parent_table, c) for c in edge.parent_columns]
    return copy
