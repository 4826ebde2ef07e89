"""Metadata into the graph (relationships become edges) and into the schema cards."""

from __future__ import annotations

import difflib
import fnmatch
from dataclasses import dataclass, field

from schemawise.db.base import Source
from schemawise.enrich.metadata import Join, Metadata
from schemawise.graph import cardinality
from schemawise.graph.datachecks import DataChecker
from schemawise.graph.extract import add_bridges, budget_problem, measure_inclusion
from schemawise.graph.model import Edge, Evidence, Problem, SchemaGraph, Table
from schemawise.graph.naming import type_family


def add_relationships(graph: SchemaGraph, meta: Metadata) -> int:
    """dbt `relationships` tests as edges, unless the graph already has that join."""
    taken = {e.unordered_key() for e in graph.edges}
    added = 0
    for rel in meta.relationships:
        child, parent = graph.table(rel.child_table), graph.table(rel.parent_table)
        if child is None or parent is None:
            continue
        child_col, parent_col = child.column(rel.child_column), parent.column(rel.parent_column)
        if child_col is None or parent_col is None:
            continue
        edge = Edge(
            child_table=child.name, child_columns=[child_col.name],
            parent_table=parent.name, parent_columns=[parent_col.name],
            source="dbt_relationship", confidence=0.95,
            evidence=Evidence(rule="dbt relationships test"),
        )  # fmt: skip
        if edge.unordered_key() in taken:
            continue
        unique = {(t.lower(), c.lower()) for t, c in meta.unique}
        cardinality.assign(edge, graph, None)
        if (rel.parent_table.lower(), rel.parent_column.lower()) in unique:
            edge.evidence.notes.append("parent key has a dbt unique test")
        graph.edges.append(edge)
        taken.add(edge.unordered_key())
        added += 1
    if added:
        graph.version = graph.compute_version()
    return added


# The time the overlay's stated joins may spend on the data (cardinality, orphans), apart from
# extraction's own budget: a few joins, each a query or three.
OVERLAY_CHECKS_SECONDS = 10.0


def overlay_checker(source: Source, budget: float = OVERLAY_CHECKS_SECONDS) -> DataChecker:
    """The data checks for the overlay's stated joins: a budget of their own, apart from
    extraction's, at most `OVERLAY_CHECKS_SECONDS`."""
    return DataChecker(source, budget_seconds=min(budget, OVERLAY_CHECKS_SECONDS))


@dataclass
class OverlayJoins:
    """What the overlay's `joins:` and `not_joins:` did to the graph."""

    added: int = 0
    removed: int = 0
    problems: list[Problem] = field(default_factory=list)


def apply_overlay_joins(
    graph: SchemaGraph, meta: Metadata, checker: DataChecker | None = None
) -> OverlayJoins:
    """The overlay's word on joins: `not_joins` takes those joins out of the graph (whatever
    found them), `joins` puts them in as `overlay` edges, in place of a join the graph already
    has between the same columns, their cardinality and orphans measured when `checker` is
    given. Many-to-many bridges are then derived again from the joins left. An entry naming a
    table or column the graph lacks, or denying a join it does not have, is left out and said
    in the graph's problems (which mark it partial)."""
    done = OverlayJoins()
    if not meta.joins and not meta.not_joins:
        return done
    # What the catalogue says, before a declared key is denied or restated: `check` and `run`
    # compare it with the database's catalogue to reuse the indexed graph (graph/reuse.py).
    catalog = graph.structure_version()
    for denied in meta.not_joins:
        edge = _edge_of(graph, denied, done)
        if edge is None:
            continue
        kept = [e for e in graph.edges if not _same_join(e, edge)]
        if len(kept) == len(graph.edges):
            through = [e.via for e in graph.edges if e.via and _same_columns(e, edge)]
            why = (
                f"it is a many-to-many through {through[0]}: deny one of the joins to it"
                if through
                else "the graph has no join between those columns"
            )
            _problem(graph, denied, why, done, verb="denied")
            continue
        done.removed += len(graph.edges) - len(kept)
        graph.edges = kept
    stated: set[tuple[str, tuple[str, ...], str, tuple[str, ...]]] = set()
    for join in meta.joins:
        edge = _edge_of(graph, join, done)
        if edge is None or edge.key() in stated:
            continue
        stated.add(edge.key())
        graph.edges = [e for e in graph.edges if not _same_join(e, edge)]
        cardinality.assign(edge, graph, checker)
        if checker is not None:
            measure_inclusion(edge, graph, checker)
        if (doubt := _doubtful(graph, edge)) is not None:
            # Kept (the team said so), but said: a typo of a column joins nothing.
            problem = Problem(
                table=edge.child_table, stage="overlay",
                message=f"the overlay's join {join.describe()} {doubt}",
                hint="Check the columns it names (`schemawise graph URL` shows the joins the "
                "data upholds); a stated join is kept as the team wrote it.",
            )  # fmt: skip
            graph.problems.append(problem)
            done.problems.append(problem)
        graph.edges.append(edge)
        done.added += 1
    if done.added or done.removed:
        graph.edges = [e for e in graph.edges if e.via is None]
        # As extraction derived them (dbt's relationships come later and make none): the
        # bridges a source has do not depend on whether its overlay states a join.
        add_bridges(graph, skip=("view_lineage", "dbt_relationship"))
        graph.catalog_fingerprint = catalog
        graph.version = graph.compute_version()
    if checker is not None:
        measured = list(checker.problems)
        if checker.skipped_for_budget:
            measured.append(budget_problem(checker.skipped_for_budget, checker.budget_seconds))
        graph.problems.extend(measured)
        done.problems.extend(measured)
    if done.problems:
        graph.partial = True
    return done


def _doubtful(graph: SchemaGraph, edge: Edge) -> str | None:
    """Why a stated join looks wrong on its face: on Postgres, a number joined to a text (an
    id to a name: Postgres refuses to compare them without a cast; SQLite compares them, and
    legacy schemas keep ids as text, so only the data can tell there), or, measured, no value
    of the child found in the parent."""
    child, parent = graph.table(edge.child_table), graph.table(edge.parent_table)
    for c, p in zip(edge.child_columns, edge.parent_columns, strict=True):
        left = child.column(c) if child else None
        right = parent.column(p) if parent else None
        if left is None or right is None or graph.dialect != "postgres":
            continue
        kinds = {type_family(left.type), type_family(right.type)}
        if "text" in kinds and kinds & {"integer", "number"}:
            kind = "Postgres compares no number with a text"
            return f"joins {left.type} {c} to {right.type} {p}: {kind}"
    if edge.evidence.inclusion == 0.0:
        return "matches no value: none of the child's values is in the parent"
    return None


def _edge_of(graph: SchemaGraph, join: Join, done: OverlayJoins) -> Edge | None:
    child, parent = _table(graph, join.child_table), _table(graph, join.parent_table)
    if isinstance(child, str) or isinstance(parent, str):
        why = "; ".join(found for found in (child, parent) if isinstance(found, str))
        _problem(graph, join, why, done)
        return None
    child_columns = [child.column(c) for c in join.child_columns]
    parent_columns = [parent.column(c) for c in join.parent_columns]
    absent = [
        f"{t.name}.{c}"
        for t, names, found in ((child, join.child_columns, child_columns),
                                (parent, join.parent_columns, parent_columns))
        for c, col in zip(names, found, strict=True)
        if col is None
    ]  # fmt: skip
    if absent:
        _problem(graph, join, f"no column {', '.join(absent)}", done)
        return None
    return Edge(
        child_table=child.name,
        child_columns=[c.name for c in child_columns if c is not None],
        parent_table=parent.name,
        parent_columns=[c.name for c in parent_columns if c is not None],
        source="overlay",
        confidence=1.0,
        evidence=Evidence(rule="stated in the overlay"),
    )


def _table(graph: SchemaGraph, name: str) -> Table | str:
    """The table by its full name, or by its bare name when only one table has it; else why
    not (`planes` for `main.planes`; `orders` when `a.orders` and `b.orders` both exist)."""
    found = graph.table(name)
    if found is not None:
        return found
    lowered = name.lower()
    same = [t.name for t in graph.tables if _bare(t.name) == lowered]
    if len(same) > 1:
        return f"{name} names {len(same)} tables ({', '.join(sorted(same)[:3])}): write the schema"
    return f"no table {name} in the graph"


def _same_columns(edge: Edge, other: Edge) -> bool:
    return edge.unordered_key() == other.unordered_key()


def _same_join(edge: Edge, other: Edge) -> bool:
    """The same columns joined, either way round; a bridge through a table is another join."""
    return edge.via is None and _same_columns(edge, other)


def _problem(
    graph: SchemaGraph, join: Join, why: str, done: OverlayJoins, verb: str = "stated"
) -> None:
    problem = Problem(
        stage="overlay",
        message=f"the overlay's {verb} join {join.describe()} was left out: {why}",
        hint="Write each side as table.column, with the names `schemawise graph URL` shows, "
        "and deny only joins the graph has (`schemawise path URL A B`).",
    )
    graph.problems.append(problem)
    done.problems.append(problem)


def unknown_names(graph: SchemaGraph, meta: Metadata, file: str) -> list[Problem]:
    """The tables and columns `meta` (a team's file) describes that the graph lacks: nothing
    of theirs is used, so each is said, with the nearest name the graph has."""
    names = sorted({n for t in graph.tables for n in (t.name.lower(), _bare(t.name))})
    problems = []
    for name, described in meta.tables.items():
        found = _described(graph, name)
        if not found:
            problems.append(_unknown(file, f"table {name}", name.lower(), names))
            continue
        # Any table the entry describes may hold the column (a bare name two schemas share).
        columns = {c.name.lower() for t in found for c in t.columns}
        for column in described.columns:
            if column.lower() not in columns:
                problems.append(_unknown(file, f"column {name}.{column}", column.lower(),
                                         sorted(columns), table=found[0].name))  # fmt: skip
    return problems


def _bare(name: str) -> str:
    return name.rsplit(".", 1)[-1].lower()


def _described(graph: SchemaGraph, key: str) -> list[Table]:
    """The tables a metadata entry is about, as Metadata.table_meta matches them (the full
    name, else the bare name), or the shards its pattern names (`events_*`, the name a pack
    gives a sharded family)."""
    key = key.lower()
    return [
        t
        for t in graph.tables
        if key in (t.name.lower(), _bare(t.name))
        or ("*" in key and fnmatch.fnmatchcase(_bare(t.name), _bare(key)))
    ]


def _unknown(
    file: str, what: str, name: str, known: list[str], table: str | None = None
) -> Problem:
    near = difflib.get_close_matches(name, known, n=1)
    return Problem(
        table=table,
        stage="overlay",
        message=f"{file} describes {what}, which the database does not have: left unused",
        hint=(f"Did you mean {near[0]}? " if near else "")
        + "Write the names `schemawise graph URL` shows.",
    )


def about_tables(graph: SchemaGraph, meta: Metadata) -> dict[str, str]:
    """Table (lower case) → description, synonyms, certification or deprecation, for cards."""
    out: dict[str, str] = {}
    for table in graph.tables:
        table_meta = meta.table_meta(table.name)
        if table_meta is None:
            continue
        parts = [table_meta.description or ""]
        if table_meta.synonyms:
            parts.append("also called " + ", ".join(table_meta.synonyms))
        if table_meta.deprecated:
            parts.append(f"DEPRECATED ({table_meta.deprecated})")
        if table_meta.certified:
            parts.append("certified")
        text = "; ".join(p for p in parts if p)
        if text:
            out[table.name.lower()] = text
    return out


def descriptions(graph: SchemaGraph, meta: Metadata) -> dict[str, str]:
    """`table.column` → text for the cards: description, synonyms, value meanings."""
    out: dict[str, str] = {}
    for table in graph.tables:
        table_meta = meta.table_meta(table.name)
        if table_meta is None:
            continue
        for name, column in table_meta.columns.items():
            parts = []
            if column.description:
                parts.append(column.description)
            if column.synonyms:
                parts.append("also called " + ", ".join(column.synonyms))
            if column.values:
                parts.append("values: " + ", ".join(f"{k} = {v}" for k, v in column.values.items()))
            elif column.accepted_values:
                parts.append("one of " + ", ".join(column.accepted_values))
            if parts:
                out[f"{table.name}.{name}".lower()] = "; ".join(parts)
    return out
