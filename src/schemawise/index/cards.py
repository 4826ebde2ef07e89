"""Documents the retriever searches: a schema card per table, a document per column, a
join-path document per related pair. Raw DDL is not the retrieval unit."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from schemawise.graph.families import collapsed
from schemawise.graph.model import Edge, SchemaGraph, Table
from schemawise.graph.naming import split_identifier
from schemawise.index.compounds import parts
from schemawise.retrieve.words import STOP

Kind = Literal["table", "column", "values", "path", "example", "glossary", "source", "ddl"]

# Path, example and glossary documents name several tables: joined by this in `table`.
TABLE_SEPARATOR = "|"


@dataclass
class Document:
    id: str
    source: str
    kind: Kind
    table: str
    column: str | None
    text: str  # what is embedded
    lexical: str  # what full-text search sees: identifiers split into words
    fingerprint: str = ""
    meta: dict[str, str] = field(default_factory=dict)


# Sample values shown per column document: enough to recognise a value (or an enum's whole
# list), few enough to keep the document about the column.
SAMPLES_SHOWN = 8


def words(identifier: str) -> str:
    """`order_items` → "order items", `custId` → "cust id": identifiers as words; a word run
    together is followed by its parts (`l_shipdate` → "l shipdate ship date": compounds.py)."""
    out: list[str] = []
    for word in split_identifier(identifier):
        out.append(word)
        # A part that is a word of asking (`list` in `playlist`, `name` in `firstname`) would
        # match the question's grammar ("list the bills …"), not what it is about.
        out.extend(part for part in parts(word) or () if part not in STOP)
    return " ".join(out)


def _fingerprint(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def table_card(
    source: str,
    table: Table,
    graph: SchemaGraph,
    descriptions: dict[str, str],
    about: dict[str, str] | None = None,
) -> Document:
    bare = table.name.rsplit(".", 1)[-1]
    relations = []
    for edge in graph.edges:
        if edge.via is None and table.name in (edge.child_table, edge.parent_table):
            other = edge.parent_table if edge.child_table == table.name else edge.child_table
            relations.append(words(other.rsplit(".", 1)[-1]))
    columns = []
    for column in table.columns:
        described = _of_column(descriptions, table, column.name) or column.comment
        label = words(column.name)
        if described and described.lower() != label:
            label += f" ({described})"
        columns.append(label)
    head = f"{words(bare)} table"
    # The schema (or dataset) often says what a table is about where its own name does not:
    # `noaa_gsod.gsod*`, `crypto_bitcoin.transactions`, `hr.staff`.
    schema = table.name.rsplit(".", 1)[0].rsplit(".", 1)[-1] if "." in table.name else ""
    if schema and schema.lower() not in ("main", "public", "dbo"):
        head += f" in {words(schema)}"
    if table.shards:
        first, last = (t.rsplit(".", 1)[-1] for t in (table.shards[0], table.shards[-1]))
        head += f" ({len(table.shards)} sharded tables, {first} to {last})"
    extra = (about or {}).get(table.name.lower())
    if table.comment or extra:
        head += ": " + " ".join(p for p in (table.comment, extra) if p)
    text = f"{head}. Columns: {', '.join(columns)}."
    if relations:
        text += f" Related to: {', '.join(sorted(set(relations)))}."
    lexical = " ".join([words(bare), bare, words(schema) if schema else "", " ".join(columns)])
    return Document(
        id=f"{source}:table:{table.name}", source=source, kind="table", table=table.name,
        column=None, text=text, lexical=lexical, fingerprint=_fingerprint(text),
    )  # fmt: skip


def column_document(
    source: str,
    table: Table,
    column_name: str,
    type_name: str,
    description: str | None,
    samples: list[str] | None = None,
) -> Document:
    bare = table.name.rsplit(".", 1)[-1]
    text = f"{words(column_name)} of {words(bare)}"
    if description and description.lower() != words(column_name):
        text += f": {description}"
    text += f" ({type_name or 'value'})"
    # A few sample values let a question that names a value ("Organic Search") find the
    # column that holds it.
    shown = ", ".join(samples[:SAMPLES_SHOWN]) if samples else ""
    if shown:
        text += f" e.g. {shown}"
    lexical = f"{words(column_name)} {column_name} {description or ''} {words(bare)} {shown}"
    return _column_level(source, "column", table, column_name, text, lexical)


def values_document(source: str, table: Table, column_name: str, values: list[str]) -> Document:
    """The distinct values seen in a column: the value index. Lexical matching on the values
    themselves finds a column from a name the question quotes."""
    bare = table.name.rsplit(".", 1)[-1]
    listed = ", ".join(values)
    text = f"values of {words(column_name)} of {words(bare)}: {listed}"
    return _column_level(source, "values", table, column_name, text, listed)


def _column_level(
    source: str, kind: Kind, table: Table, column: str, text: str, lexical: str
) -> Document:
    return Document(
        id=f"{source}:{kind}:{table.name}.{column}", source=source, kind=kind,
        table=table.name, column=column, text=text, lexical=lexical,
        fingerprint=_fingerprint(text),
    )  # fmt: skip


def source_card(source: str, graph: SchemaGraph) -> Document:
    """What a whole database is about: its name and its tables, for choosing among many."""
    name = words(source.rsplit("/", 1)[-1])
    tables = ", ".join(words(t.name.rsplit(".", 1)[-1]) for t in graph.tables)
    text = f"{name} database with tables: {tables}."
    return Document(
        id=f"{source}:source", source=source, kind="source", table="", column=None,
        text=text, lexical=f"{name} {tables}", fingerprint=_fingerprint(text),
    )  # fmt: skip


_CARDINALITY_WORDS = {
    "many_to_one": "many to one",
    "one_to_one": "one to one",
    "many_to_many": "many to many",
}


def path_documents(source: str, graph: SchemaGraph) -> list[Document]:
    """A document per pair of tables one join apart, and per pair related through a bridge
    table (two joins): which tables, on which keys, with what cardinality and grain. Questions
    that name two things ("customers who returned products") match the path between them."""
    docs = []
    for edge in graph.edges:
        if edge.child_table == edge.parent_table:
            continue
        child, parent = (t.rsplit(".", 1)[-1] for t in (edge.child_table, edge.parent_table))
        how = _CARDINALITY_WORDS.get(edge.cardinality, edge.cardinality)
        if edge.via is not None:
            bridge = edge.via.rsplit(".", 1)[-1]
            text = (
                f"{words(child)} and {words(parent)} are related {how} through "
                f"{words(bridge)}: join each to {words(bridge)} and count distinct rows."
            )
            tables = [edge.child_table, edge.via, edge.parent_table]
        else:
            on = ", ".join(
                f"{child}.{c} = {parent}.{p}"
                for c, p in zip(edge.child_columns, edge.parent_columns, strict=True)
            )
            text = (
                f"{words(child)} joined to {words(parent)} on {on} ({how}): each "
                f"{words(child)} row has one {words(parent)}; aggregating {words(parent)} "
                f"values after this join repeats them per {words(child)} row."
                if edge.cardinality == "many_to_one"
                else f"{words(child)} joined to {words(parent)} on {on} ({how})."
            )
            tables = [edge.child_table, edge.parent_table]
        name = TABLE_SEPARATOR.join(tables)
        doc = Document(
            id=f"{source}:path:{name}",
            source=source,
            kind="path",
            table=name,
            column=None,
            text=text,
            lexical=f"{words(child)} {words(parent)}",
            fingerprint=_fingerprint(text),
        )  # fmt: skip
        docs.append(doc)
    docs.extend(_chain_documents(source, graph))
    return list({d.id: d for d in docs}.values())


# A table joined to more tables than this is a hub (dates, users): chains through it would
# pair nearly everything with everything, so none are written.
HUB_DEGREE = 6


def _chain_documents(source: str, graph: SchemaGraph) -> list[Document]:
    """A document per pair of tables two joins apart through a third (orders → customers →
    regions), when no edge or bridge already relates them: the keys of both joins."""
    direct = {
        frozenset((e.child_table, e.parent_table))
        for e in graph.edges
        if e.child_table != e.parent_table
    }
    around: dict[str, list[Edge]] = {}
    for edge in graph.edges:
        if edge.via is None and edge.child_table != edge.parent_table:
            around.setdefault(edge.child_table, []).append(edge)
            around.setdefault(edge.parent_table, []).append(edge)
    docs = []
    for middle, edges in sorted(around.items()):
        if len(edges) > HUB_DEGREE:
            continue
        for first, second in itertools.combinations(edges, 2):
            left = first.parent_table if first.child_table == middle else first.child_table
            right = second.parent_table if second.child_table == middle else second.child_table
            if left == right or frozenset((left, right)) in direct:
                continue
            left, right, first, second = (
                (left, right, first, second) if left < right else (right, left, second, first)
            )
            joins = "; ".join(_on(e) for e in (first, second))
            bare = [t.rsplit(".", 1)[-1] for t in (left, middle, right)]
            text = (
                f"{words(bare[0])} and {words(bare[2])} are joined through {words(bare[1])}: "
                f"{joins}."
            )
            name = TABLE_SEPARATOR.join([left, middle, right])
            lexical = f"{words(bare[0])} {words(bare[2])}"
            doc = Document(
                id=f"{source}:path:{name}", source=source, kind="path", table=name,
                column=None, text=text, lexical=lexical, fingerprint=_fingerprint(text),
            )  # fmt: skip
            docs.append(doc)
    return docs


def _on(edge: Edge) -> str:
    child, parent = (t.rsplit(".", 1)[-1] for t in (edge.child_table, edge.parent_table))
    return " AND ".join(
        f"{child}.{c} = {parent}.{p}"
        for c, p in zip(edge.child_columns, edge.parent_columns, strict=True)
    )


def _multi_table_document(
    source: str, kind: Kind, number: int, tables: list[str], text: str
) -> Document:
    """A document about several tables, found by its own words (example, glossary)."""
    return Document(
        id=f"{source}:{kind}:{number}", source=source, kind=kind,
        table=TABLE_SEPARATOR.join(tables), column=None, text=text, lexical=text,
        fingerprint=_fingerprint(text),
    )  # fmt: skip


def example_documents(source: str, examples: list[tuple[str, str, list[str]]]) -> list[Document]:
    """Example question → SQL pairs (the overlay's, or logged queries), searchable by their
    question; `tables` are the graph tables the SQL reads."""
    return [
        _multi_table_document(
            source, "example", number, tables, f"{question}\n{sql}" if question else sql
        )
        for number, (question, sql, tables) in enumerate(examples)
        if tables
    ]


def glossary_documents(
    source: str, graph: SchemaGraph, terms: list[tuple[str, str]]
) -> list[Document]:
    """Business definitions and jargon, each tied to the tables its text names."""
    docs = []
    for number, (term, meaning) in enumerate(terms):
        lowered = f"{term} {meaning}".lower()
        tables = [
            t.name
            for t in graph.tables
            if t.name.lower() in lowered or f" {t.name.rsplit('.', 1)[-1].lower()}." in lowered
        ]
        if tables:
            docs.append(
                _multi_table_document(source, "glossary", number, tables, f"{term}: {meaning}")
            )
    return docs


def documents(
    source: str,
    graph: SchemaGraph,
    descriptions: dict[str, str] | None = None,
    about: dict[str, str] | None = None,
    samples: dict[str, list[str]] | None = None,
    values: dict[str, list[str]] | None = None,
) -> list[Document]:
    """Every document of one source; `descriptions` maps `table.column` (lower case) to text,
    `about` maps a table (lower case) to its description, synonyms and status, `samples` maps
    `table.column` to a few of its values, `values` to the distinct values seen in it (the
    value index). A sharded family is one card."""
    descriptions = descriptions or {}
    samples = samples or {}
    values = values or {}
    graph = collapsed(graph)
    docs: list[Document] = [source_card(source, graph)]
    for table in graph.tables:
        docs.append(table_card(source, table, graph, descriptions, about))
        for column in table.columns:
            docs.append(
                column_document(
                    source,
                    table,
                    column.name,
                    column.type,
                    _of_column(descriptions, table, column.name) or column.comment,
                    _of_column(samples, table, column.name),
                )
            )
            seen = _of_column(values, table, column.name)
            if seen and len(seen) > SAMPLES_SHOWN:
                docs.append(values_document(source, table, column.name, seen))
    docs.extend(path_documents(source, graph))
    return docs


def _of_column[T](known: Mapping[str, T], table: Table, column: str) -> T | None:
    """What `known` says of a column (keyed `table.column`, lower case); for a sharded
    family, what it says of the column in the latest shard that has it — the family entry's
    own name (`gsod*`) is in no dictionary, sample or description file."""
    for name in [table.name, *reversed(table.shards)]:
        found = known.get(f"{name}.{column}".lower())
        if found:
            return found
    return None
