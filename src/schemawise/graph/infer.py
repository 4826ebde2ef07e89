"""Joins a warehouse never declared: from names, from a query log, from values.

Candidate generation here is pure; confirmation by value inclusion is in `datachecks`.
"""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.scope import traverse_scope

from schemawise.errors import SchemawiseError
from schemawise.graph.model import Column, Edge, Evidence, SchemaGraph, Table
from schemawise.graph.naming import (
    AGGREGATE_WORDS,
    GENERIC_WORDS,
    IDENTIFIER_WORDS,
    KEY_WORDS,
    MIN_GLUED_TAIL,
    ends_with,
    entity_words,
    glued_abbreviation,
    is_generic,
    sequence_match,
    singular,
    singular_words,
    split_identifier,
    type_affinity,
    type_family,
    types_compatible,
)

# Confidence of each naming rule before any data check; see docs/graph.md for the rules.
RULE_CONFIDENCE = {
    "same_name": 0.9,
    "table_and_key": 0.85,
    "role_and_key": 0.75,
    "table_name": 0.6,
    "shared_key": 0.8,
    "same_as_declared": 0.85,
    "abbreviated_table": 0.8,
}
# Key names specific enough that one table owning them as its key is evidence of a reference.
SPECIFIC_KEY_NAMES = frozenset({"uuid", "guid", "sku"})
# A candidate below this is not reported unless value inclusion confirms it.
MIN_CONFIDENCE = 0.5


@dataclass
class Candidate:
    edge: Edge
    # Candidates that need the data to agree before they are kept (weak name signals).
    needs_confirmation: bool = False
    alternatives: int = 0
    # Parents the name suggests less strongly, best first: tried, each needing the data to
    # confirm it, when the data rejects the best (`Continent` names both `continents.Continent`
    # and `continents.ContId`; only the ids hold its values).
    fallbacks: list[Edge] = field(default_factory=list)


@dataclass
class KeyColumn:
    table: Table
    column: str
    declared: bool
    # A column that is not a key but is named after its table (`area_code_state.state`):
    # only the same-name rule may point at it, and only the data can confirm it.
    named_only: bool = False
    # The only table in the catalog whose single-column key has this name.
    sole_owner: bool = False
    # The table's primary key, declared or (for a table without keys) measured.
    primary: bool = False


def _bare(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def primary_keys(graph: SchemaGraph, measured_unique: set[tuple[str, str]]) -> dict[str, str]:
    """Each table's single-column primary key: declared, or else the first column (in table
    order) that is key-like and unique on the data, as keys usually come first."""
    found = {
        t.name: t.primary_key[0]
        for t in graph.tables
        if t.kind == "table" and len(t.primary_key) == 1 and t.column(t.primary_key[0])
    }
    for table in graph.tables:
        if table.name in found or table.primary_key or table.unique:
            continue
        for column in table.columns:
            if (table.name, column.name) in measured_unique:
                found[table.name] = column.name
                break
    return found


def _key_columns(table: Table, measured_unique: set[tuple[str, str]]) -> list[KeyColumn]:
    declared = [k[0] for k in [table.primary_key, *table.unique] if len(k) == 1]
    keys = [KeyColumn(table, name, True) for name in declared]
    keys += [
        KeyColumn(table, column, False)
        for table_name, column in measured_unique
        if table_name == table.name and column not in declared
    ]
    entity = entity_words(_bare(table.name))
    for column in table.columns:
        words = singular_words(column.name)
        named_after_table = bool(words) and ends_with(entity, words) > 0
        is_new = column.name not in declared and not any(k.column == column.name for k in keys)
        if is_new and not is_generic(column.name) and named_after_table:
            keys.append(KeyColumn(table, column.name, False, named_only=True))
    return keys


def _table_tails(table: Table) -> list[tuple[str, ...]]:
    return _name_tails(_bare(table.name))


@lru_cache(maxsize=65536)
def _name_tails(name: str) -> list[tuple[str, ...]]:
    """Suffixes of a table's entity words: `tv_channel` → (tv, channel), (channel)."""
    words = entity_words(name)
    return [words[i:] for i in range(len(words))]


def _name_score(child_col: str, key: KeyColumn) -> tuple[str, float] | None:
    """The best naming rule that says `child_col` references `key`, with its score."""
    col_words = split_identifier(child_col)
    key_words = split_identifier(key.column)
    tails = _table_tails(key.table)
    entity = tails[0] if tails else ()
    best: tuple[str, float] | None = None

    def consider(rule: str, score: float) -> None:
        nonlocal best
        value = RULE_CONFIDENCE[rule] * score
        if score > 0 and (best is None or value > best[1]):
            best = (rule, value)

    if child_col.lower() == key.column.lower() and not is_generic(child_col):
        # The same name is a reference only when the name is about the parent table.
        stem = tuple(w for w in col_words if w not in KEY_WORDS) or col_words
        consider("same_name", max(ends_with(stem, tail) for tail in tails[:1] or [()]))
        if _contains(entity, stem):
            consider("same_name", 0.9)
    key_like = not is_generic(child_col) and col_words[-1:] and col_words[-1] in KEY_WORDS
    if (
        child_col.lower() == key.column.lower()
        and key.sole_owner
        and (key_like or child_col.lower() in SPECIFIC_KEY_NAMES)
    ):
        # frpm.CDSCode → schools.CDSCode: one table owns the name as its key. Also a name
        # that says it is a key but not about the owner's table (People.playerID), which
        # same-name cannot read; not any name a table has as its key (`version`, `token`).
        consider("shared_key", 1.0)
    if key.named_only:
        return best
    key_is_generic = all(w in KEY_WORDS for w in key_words)
    key_stem = tuple(w for w in key_words if w not in KEY_WORDS)
    is_primary = key.primary
    lead = [w for w in col_words if w not in KEY_WORDS]
    if (
        lead
        and col_words[-1] in KEY_WORDS
        and key_stem
        and any(sequence_match(key_stem, t) for t in tails)
        and glued_abbreviation(singular(lead[-1]), entity)
    ):
        # ss_cdemo_sk → customer_demographics.cd_demo_sk: the column abbreviates the whole
        # table name, which tells it from household_demographics.hd_demo_sk. Only for a key
        # named after its table (`demo_sk`): a bare `id` would let `item_id` glue onto
        # `invoice_template.id`.
        consider("abbreviated_table", 1.0)
    for tail in tails:
        if key_is_generic:
            # customer_id → customers.id, CountryCode → country.Code, ship_id → ship.id
            consider("table_and_key", sequence_match(col_words, tail + key_words))
            consider("role_and_key", ends_with(col_words, tail + key_words))
        elif key_stem and any(sequence_match(key_stem, t) for t in tails):
            # permanent_address_id → addresses.address_id
            consider("role_and_key", ends_with(col_words, key_words))
        if (
            is_primary
            and col_words[-1:]
            and col_words[-1] not in KEY_WORDS
            and not all(w in GENERIC_WORDS for w in tail)
        ):
            # Continent → continents.ContId, DestAirport → airports.AirportCode
            consider("table_name", ends_with(col_words, tail))
    return best


def _contains(words: tuple[str, ...], part: tuple[str, ...]) -> bool:
    n = len(part)
    return bool(n) and any(
        sequence_match(words[i : i + n], part) == 1.0 for i in range(len(words) - n + 1)
    )


class KeyIndex:
    """Keys bucketed by their table's head noun (and its prefixes and suffixes), so that a
    column is scored against a few plausible keys instead of every key in the catalog.

    Every naming rule but same-name needs the column's last entity word to match the parent
    table's last entity word (`billing_customer_id` → customers), so that word is the bucket.
    """

    def __init__(self, keys: list[KeyColumn]) -> None:
        self._by_word: dict[str, list[KeyColumn]] = defaultdict(list)
        self._by_name: dict[str, list[KeyColumn]] = defaultdict(list)
        # Keys of tables named in two or more words, by the starts of the last word: a column
        # word glued from the table's words (`cdemo`) ends with one of them.
        self._by_glued_tail: dict[str, list[KeyColumn]] = defaultdict(list)
        for key in keys:
            self._by_name[key.column.lower()].append(key)
            # Digits (`sales_2023`, `customer_3`) do not name an entity: the head is a word.
            entity = [w for w in entity_words(_bare(key.table.name)) if not w.isdigit()]
            if not entity:
                continue
            head = entity[-1]
            variants = {head} | {head[:n] for n in range(3, len(head))}
            variants |= {head[-n:] for n in range(4, len(head))}
            for variant in variants:
                self._by_word[variant].append(key)
            if len(entity) >= 2:
                for n in range(MIN_GLUED_TAIL, len(head) + 1):
                    self._by_glued_tail[head[:n]].append(key)

    def lookup(self, column: str) -> list[KeyColumn]:
        words = [
            singular(w) for w in split_identifier(column) if w not in KEY_WORDS and not w.isdigit()
        ]
        # Generic names (`id`, `code`) are never references by name alone: skip that bucket.
        same_name = not is_generic(column) or column.lower() in SPECIFIC_KEY_NAMES
        found = list(self._by_name.get(column.lower(), [])) if same_name else []
        if words:
            last = words[-1]
            found += self._by_word.get(last, [])
            for start in range(1, len(last) - MIN_GLUED_TAIL + 1):
                found += [
                    k
                    for k in self._by_glued_tail.get(last[start:], [])
                    if glued_abbreviation(last, entity_words(_bare(k.table.name)))
                ]
        return list({id(k): k for k in found}.values())


def name_candidates(
    graph: SchemaGraph, measured_unique: set[tuple[str, str]] | None = None
) -> list[Candidate]:
    """Edges suggested by column names; one parent per child column (the best-scoring)."""
    measured_unique = measured_unique or set()
    bases = [t for t in graph.tables if t.kind != "view"]
    keys = [k for t in bases if t.kind == "table" for k in _key_columns(t, measured_unique)]
    primaries = primary_keys(graph, measured_unique)
    for key in keys:
        key.primary = primaries.get(key.table.name) == key.column
    owners = Counter(k.column.lower() for k in keys if k.declared or k.primary)
    for key in keys:
        key.sole_owner = (key.declared or key.primary) and owners[key.column.lower()] == 1
    declared_children = {(e.child_table, tuple(e.child_columns)) for e in graph.edges}
    siblings = _declared_by_column(graph)
    index = KeyIndex(keys)
    out: list[Candidate] = []
    for child in bases:
        own_pk = child.primary_key[0] if len(child.primary_key) == 1 else primaries.get(child.name)
        for column in child.columns:
            if (child.name, (column.name,)) in declared_children:
                continue
            scored: list[tuple[float, str, KeyColumn]] = []
            for key in index.lookup(column.name):
                if key.table.name == child.name:
                    continue
                parent_col = key.table.column(key.column)
                affinity = type_affinity(column.type, parent_col.type) if parent_col else 0.0
                if affinity == 0.0:
                    continue
                result = _name_score(column.name, key)
                if result is None:
                    continue
                rule, score = result
                if column.name == own_pk and rule != "same_name":
                    continue  # a table's own id does not point elsewhere by a loose rule
                score *= affinity * (1.0 if key.declared else 0.9)
                scored.append((score, rule, key))
            sibling = siblings.get(column.name.lower())
            if (
                sibling is not None
                and sibling.table.name != child.name
                and column.name != own_pk
                and not is_generic(column.name)
            ):
                # set_translations.setCode → sets.code is declared: cards.setCode, the same
                # name elsewhere, references the same key.
                parent_col = sibling.table.column(sibling.column)
                affinity = type_affinity(column.type, parent_col.type) if parent_col else 0.0
                if affinity > 0.0:
                    confidence = RULE_CONFIDENCE["same_as_declared"] * affinity
                    scored.append((confidence, "same_as_declared", sibling))
            if not scored:
                continue
            # Ties go to a parent in the child's own schema (`bitcoin_cash.inputs` → its own
            # `blocks`, not `bitcoin.blocks`), then by name for a stable answer.
            home = child.name.rpartition(".")[0]
            scored.sort(
                key=lambda s: (-s[0], s[2].table.name.rpartition(".")[0] != home, s[2].table.name)
            )
            score, rule, key = scored[0]
            parent_col = key.table.column(key.column)
            loose_types = (
                parent_col is not None and type_affinity(column.type, parent_col.type) < 1.0
            )
            edge = Edge(
                child_table=child.name,
                child_columns=[column.name],
                parent_table=key.table.name,
                parent_columns=[key.column],
                source="inferred_name",
                confidence=round(score, 3),
                evidence=Evidence(rule=rule),
            )
            weak = rule == "table_name" or key.named_only or loose_types
            ties = sum(1 for s in scored if s[0] == score)
            fallbacks = _fallbacks(child.name, column.name, key, scored[1:])
            out.append(Candidate(edge, weak, alternatives=ties - 1, fallbacks=fallbacks))
    return out


# At most this many other tables may have a composite key's names as their own key for the
# tables holding them to be references.
MAX_COMPOSITE_HOLDERS = 3
# At most this many tables holding one composite key are checked on the data: a `(date,
# store_id)` that hundreds of keyless fact tables hold would spend the checks' time budget.
MAX_COMPOSITE_CHECKS = 40


def composite_candidates(
    graph: SchemaGraph,
    measured: dict[str, list[str]] | None = None,
    only: set[str] | None = None,
) -> list[Candidate]:
    """A table holding columns named as another table's composite key is (`lineitem`'s
    part and supplier keys → `partsupp`'s key; a return's order number and item → the sale's
    key): one candidate for the pair, which only the data may confirm. Both directions are
    offered when the two tables share the key's names as their own keys (a return and its
    sale); inclusion on the data tells which one is the child. `measured`: the composite keys
    of tables that declare none, unique on the data (extract._measured_composite_keys). `only`:
    the parent tables to read (None: all)."""
    out: list[Candidate] = []
    # Each table's columns by lower-case name, once: a catalog of thousands of tables is
    # walked once per composite key.
    by_name = {
        t.name: {c.name.lower(): c for c in t.columns} for t in graph.tables if t.kind == "table"
    }
    roles_of = RoleIndex(by_name)
    for parent in graph.tables:
        if only is not None and parent.name not in only:
            continue
        key = parent.primary_key or (measured or {}).get(parent.name, [])
        # A part that is only an identifier (`(tenant_id, id)`) is every table's own row id,
        # and a key of generic words alone (`(year, type)`) names nothing; a generic part
        # beside a specific one is a key of its own (`(yearID, teamID)`: a team's season).
        if parent.kind != "table" or len(key) < 2 or not names_a_composite(key):
            continue
        holders = [
            name for name, columns in by_name.items()
            if name != parent.name and all(c.lower() in columns for c in key)
        ]  # fmt: skip
        # A key many tables have as their own key is a convention of the schema (each keyed
        # by region and item), not a reference; tables that hold it beside other key columns
        # or as plain columns (every season of a player names its team season, `(yearID,
        # teamID)`) are the references, however many there are.
        peers = [h for h in holders if _same_names(graph.table(h), key)]
        # Tables holding the key with one part named for a role (a series' winner and loser
        # team season: `(yearID, teamIDwinner)`), a candidate for each role.
        if len(peers) > MAX_COMPOSITE_HOLDERS or len(holders) > MAX_COMPOSITE_CHECKS:
            continue
        # Tables holding the key with one part named for a role (a series' winner and loser
        # team season: `(yearID, teamIDwinner)`), a candidate for each role, within what is
        # left of the checks the key may have.
        roles = [
            (name, {part.lower(): column})
            for part in key
            if not is_generic(part)
            for name, column in roles_of.lookup(part)
            if name != parent.name
            and part.lower() not in by_name[name]
            and all(c.lower() in by_name[name] for c in key if c != part)
        ][: MAX_COMPOSITE_CHECKS - len(holders)]
        for child_name, named in [*((h, {}) for h in holders), *roles]:
            columns = [named.get(c.lower()) or by_name[child_name].get(c.lower()) for c in key]
            child = graph.table(child_name)
            if child is None:
                continue
            pairs = [(c, parent.column(k)) for c, k in zip(columns, key, strict=True)]
            if not all(
                c is not None and p is not None and types_compatible(c.type, p.type)
                for c, p in pairs
            ):
                continue
            edge = Edge(
                child_table=child.name,
                child_columns=[c.name for c in columns if c is not None],
                parent_table=parent.name,
                parent_columns=list(key),
                source="inferred_name",
                confidence=RULE_CONFIDENCE["same_name"],
                evidence=Evidence(rule="same_composite_key"),
            )
            out.append(Candidate(edge, needs_confirmation=True))
    return out


class RoleIndex:
    """Columns named as another name with role words before or after it (`teamIDwinner`,
    `home_team_id` for `teamID`, `team_id`), found by the name's words: each column is split
    once, whatever the number of composite keys looked up. Role words are words (not digits),
    and neither key words nor words of aggregating: `team_id_count` is a measure."""

    def __init__(self, by_name: dict[str, dict[str, Column]]) -> None:
        self._by_words: dict[tuple[str, ...], list[tuple[str, Column]]] = defaultdict(list)
        for table, columns in by_name.items():
            for column in columns.values():
                words = split_identifier(column.name)
                for n in range(1, len(words)):
                    for name_words, role in ((words[:n], words[n:]), (words[n:], words[:n])):
                        if all(_role_word(w) for w in role):
                            self._by_words[name_words].append((table, column))

    def lookup(self, name: str) -> list[tuple[str, Column]]:
        return self._by_words.get(split_identifier(name), [])


def _role_word(word: str) -> bool:
    return word.isalpha() and word not in KEY_WORDS and word not in AGGREGATE_WORDS


def implied_composites(edges: list[Edge], graph: SchemaGraph) -> list[Edge]:
    """Of the composite references the data confirmed, those another confirmed one of the same
    child already implies: a batting line holding the team season `(yearID, teamID)` and a
    player also holds the key of the table of player seasons on a team, `(yearID, teamID,
    playerID)`, which says nothing the smaller key does not. Read after the data has spoken
    (a smaller key the data rejects implies nothing), and never between tables keyed alike
    (a return and its sale), whose shared key is the reference."""
    composite = [e for e in edges if len(e.child_columns) > 1]
    implied = []
    for edge in composite:
        names = {c.lower() for c in edge.child_columns}
        if _same_names(graph.table(edge.child_table), edge.parent_columns):
            continue
        if any(
            other.child_table == edge.child_table
            and {c.lower() for c in other.child_columns} < names
            for other in composite
        ):
            implied.append(edge)
    return implied


def names_a_composite(key: list[str]) -> bool:
    """A composite key others may reference: no part only a row id, not every part generic."""
    return not any(_only_identifier(c) for c in key) and not all(is_generic(c) for c in key)


def _only_identifier(name: str) -> bool:
    """`id`, `key`, `no`: a table's own row id, not a code that is a value too (`sku`)."""
    words = split_identifier(name)
    return not words or all(w in IDENTIFIER_WORDS for w in words)


def _same_names(table: Table | None, key: list[str]) -> bool:
    """The table's own primary key is made of the same names (in any order)."""
    return table is not None and {c.lower() for c in table.primary_key} == {c.lower() for c in key}


# How many less likely parents a column's name may fall back on when the data rejects the best.
MAX_FALLBACKS = 3


def _fallbacks(
    child_table: str, child_column: str, best: KeyColumn, rest: list[tuple[float, str, KeyColumn]]
) -> list[Edge]:
    seen = {(best.table.name, best.column)}
    out: list[Edge] = []
    for score, rule, key in rest:
        if (key.table.name, key.column) in seen or len(out) == MAX_FALLBACKS:
            continue
        seen.add((key.table.name, key.column))
        out.append(
            Edge(
                child_table=child_table,
                child_columns=[child_column],
                parent_table=key.table.name,
                parent_columns=[key.column],
                source="inferred_name",
                confidence=round(score, 3),
                evidence=Evidence(rule=rule),
            )
        )
    return out


def _declared_by_column(graph: SchemaGraph) -> dict[str, KeyColumn]:
    """Child column name (lower case) → the key its declared single-column foreign keys
    reference, for names that always reference the same key."""
    parents: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for edge in graph.edges:
        if edge.source == "foreign_key" and edge.via is None and len(edge.child_columns) == 1:
            parents[edge.child_columns[0].lower()].add((edge.parent_table, edge.parent_columns[0]))
    out: dict[str, KeyColumn] = {}
    for name, found in parents.items():
        if len(found) == 1:
            ((table_name, column),) = found
            table = graph.table(table_name)
            if table is not None:
                out[name] = KeyColumn(table, column, True)
    return out


# Beyond this many possible parents a column's values cannot single one out: not checked.
MAX_OVERLAP_PARENTS = 25


def overlap_candidates(
    graph: SchemaGraph, taken: set[tuple[str, str]], primaries: dict[str, str]
) -> list[Candidate]:
    """Key-like columns no name rule placed: every single-column primary key they could hold.

    Only the data can decide these; `extract._confirm_overlaps` keeps a column's candidate when
    exactly one parent contains all of its values.
    """
    pks = [(t, primaries[t.name]) for t in graph.tables if t.name in primaries]
    out: list[Candidate] = []
    for child in graph.tables:
        if child.kind != "table":
            continue
        for column in child.columns:
            words = split_identifier(column.name)
            if not words or words[-1] not in KEY_WORDS or (child.name, column.name) in taken:
                continue
            if primaries.get(child.name) == column.name:
                continue
            parents = []
            for parent, key in pks:
                pk = parent.column(key)
                if parent.name != child.name and pk and types_compatible(column.type, pk.type):
                    parents.append((parent, key))
            if len(parents) > MAX_OVERLAP_PARENTS:
                continue
            for parent, key in parents:
                edge = Edge(
                    child_table=child.name,
                    child_columns=[column.name],
                    parent_table=parent.name,
                    parent_columns=[key],
                    source="value_overlap",
                    confidence=0.7,
                    evidence=Evidence(rule="value_inclusion"),
                )
                out.append(Candidate(edge, needs_confirmation=True, alternatives=len(parents) - 1))
    return out


# ---- query log -------------------------------------------------------------------------------


@dataclass
class QueryLogEntry:
    sql: str
    user: str | None = None
    timestamp: str | None = None
    # How many times the query ran (pg_stat_statements aggregates; a JSONL line is one run
    # unless it says `calls`).
    calls: int = 1


@dataclass
class JoinPairs:
    """Equality predicates between columns of two tables, counted over a query log."""

    counts: Counter[tuple[tuple[str, str], tuple[str, str]]] = field(default_factory=Counter)
    parsed: int = 0
    failed: int = 0


class QueryLog(list[QueryLogEntry]):
    """A query log's entries, and the lines that were not read (`path:line` and why)."""

    def __init__(self, entries: Iterable[QueryLogEntry] = (), skipped: list[str] | None = None):
        super().__init__(entries)
        self.skipped = skipped or []


def read_query_log(path: Path) -> QueryLog:
    """A JSONL query log: one object per line with `sql` (or `query`), `user`, `timestamp`.
    A line that is not one (a log cut short while written, a stray line) is skipped and
    listed in `skipped`; a file with no such line at all is refused (it is not a query log)."""
    if not path.is_file():
        raise SchemawiseError(f"No query log at {path}.", "Give a JSONL file: one {sql, user, …}.")
    entries = QueryLog()
    first_error: SchemawiseError | None = None
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            entries.skipped.append(f"{path}:{number}: not JSON ({exc.msg})")
            first_error = first_error or SchemawiseError(
                f"{path}:{number} is not JSON ({exc.msg}).",
                "Each line of a query log is one JSON object with a `sql` field.",
            )
            continue
        sql = row.get("sql") or row.get("query") if isinstance(row, dict) else None
        if not isinstance(sql, str):
            entries.skipped.append(f"{path}:{number}: no `sql` field")
            first_error = first_error or SchemawiseError(
                f"{path}:{number} has no `sql` field.", "Each line needs `sql` (text)."
            )
            continue
        calls = row.get("calls")
        entries.append(
            QueryLogEntry(
                sql,
                row.get("user"),
                row.get("timestamp") or row.get("ts"),
                calls if isinstance(calls, int) and calls > 0 else 1,
            )
        )
    if not entries and first_error is not None:
        raise first_error
    return entries


def _resolve_column(column: exp.Column, sources: dict[str, exp.Table]) -> tuple[str, str] | None:
    table = sources.get(column.table) if column.table else None
    if table is None and not column.table and len(sources) == 1:
        table = next(iter(sources.values()))
    if table is None:
        return None
    name = ".".join(p for p in (table.db, table.name) if p)
    return name, column.name


def join_pairs(entries: Iterable[QueryLogEntry], dialect: str) -> JoinPairs:
    """Count `a.x = b.y` pairs in JOIN … ON and WHERE clauses, resolved through aliases."""
    pairs = JoinPairs()
    for entry in entries:
        try:
            tree = sqlglot.parse_one(entry.sql, read=dialect)
            scopes = traverse_scope(tree)
        except (SqlglotError, RecursionError, ValueError):
            pairs.failed += 1
            continue
        pairs.parsed += 1
        for scope in scopes:
            sources = {
                alias: source
                for alias, source in scope.sources.items()
                if isinstance(source, exp.Table)
            }
            for eq in scope.expression.find_all(exp.EQ):
                left, right = eq.left, eq.right
                if not isinstance(left, exp.Column) or not isinstance(right, exp.Column):
                    continue
                a, b = _resolve_column(left, sources), _resolve_column(right, sources)
                if a and b and a[0] != b[0]:
                    pairs.counts[(min(a, b), max(a, b))] += entry.calls
    return pairs


def query_log_candidates(graph: SchemaGraph, pairs: JoinPairs) -> list[Candidate]:
    """One candidate per joined pair; the parent is the side whose column is a key."""
    out = []
    for ((t1, c1), (t2, c2)), count in pairs.counts.items():
        table1, table2 = graph.table(t1), graph.table(t2)
        if table1 is None or table2 is None:
            continue
        col1, col2 = table1.column(c1), table2.column(c2)
        if col1 is None or col2 is None:
            continue
        key1, key2 = table1.is_declared_unique([col1.name]), table2.is_declared_unique([col2.name])
        if key1 and not key2:
            child, child_col, parent, parent_col = table2, col2.name, table1, col1.name
        else:
            child, child_col, parent, parent_col = table1, col1.name, table2, col2.name
        confidence = min(0.95, 0.6 + 0.1 * math.log2(1 + count))
        edge = Edge(
            child_table=child.name,
            child_columns=[child_col],
            parent_table=parent.name,
            parent_columns=[parent_col],
            source="query_log",
            confidence=round(confidence, 3),
            evidence=Evidence(rule="join_in_query_log", query_log_joins=count),
        )
        # Without a declared key on either side the direction is a guess the data must settle.
        out.append(Candidate(edge, needs_confirmation=not (key1 or key2)))
    return out


# ---- containment against the odds -------------------------------------------------------------

# Type families whose values can be keys: whole numbers, codes and words (not amounts or dates).
_KEY_FAMILIES = frozenset({"integer", "text", "any", "number"})


def key_family(type_name: str) -> bool:
    """A type keys are written in: integers, text (or no declared type, in SQLite); not a
    decimal amount."""
    return type_family(type_name) in {"integer", "text", "any"}


def containment_candidates(
    graph: SchemaGraph, placed: set[tuple[str, str]], primaries: dict[str, str]
) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """Every column no name, log or overlap placed → the single-column primary keys it could
    reference (its own table's too: a manager's id; a table's own key too: a subtype's id in
    its supertype's), by type. Whatever the column's name: only improbable containment on the
    data (`containment.improbable_parent`) may turn one of these into a join.
    """
    # Keys grouped by type, so that a catalog of thousands of keys is not walked per column.
    by_type: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for table in graph.tables:
        pk = table.column(primaries[table.name]) if table.name in primaries else None
        if pk is not None and type_family(pk.type) in _KEY_FAMILIES:
            by_type[pk.type.lower()].append((table.name, pk.name))
    out: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for child in graph.tables:
        if child.kind != "table":
            continue
        for column in child.columns:
            if (child.name, column.name) in placed or type_family(column.type) not in _KEY_FAMILIES:
                continue
            groups = [keys for t, keys in by_type.items() if type_affinity(column.type, t)]
            if sum(len(keys) for keys in groups) > MAX_OVERLAP_PARENTS + 1:
                continue
            parents = [k for keys in groups for k in keys if k != (child.name, column.name)]
            if 0 < len(parents) <= MAX_OVERLAP_PARENTS:
                out[(child.name, column.name)] = parents
    return out
