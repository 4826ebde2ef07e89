"""Names the question writes as a table or column that the database does not have.

A question about `loyalty_points` or `crm.leads` gets a pack of the nearest tables all the same
(the search always finds something near); the pack then says which of the names it wrote the
database lacks, so that the reader, a person or a model, does not take the nearest tables for
the ones asked about. Only names written as names — an identifier with an underscore, or a
dotted name — are read: a plain word is prose ("the pivot table", "the following tables").
A name matches however the schema writes it (`invoice_line` is `InvoiceLine`, `unit_price`
is `UnitPrice`), singular or plural. Pure: the question and the graph in, the names out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from schemawise.graph.model import SchemaGraph
from schemawise.graph.naming import singular, split_identifier
from schemawise.retrieve.by_version import ByVersion

# `loyalty_points`, `crm.leads`, `sales.orders.amount`, at the end of a sentence too; each
# part two characters at least, so that "e.g." and "i.e." are no names.
_WRITTEN = re.compile(
    r"(?<![\w.@/])[A-Za-z_][A-Za-z0-9_]+(?:\.[A-Za-z_][A-Za-z0-9_]+)*(?![\w@/])(?!\.\w)"
)


def unknown_names(question: str, graph: SchemaGraph) -> list[str]:
    """The names the question writes as a table or column that `graph` has no table or column
    of, in the order written (case as written)."""
    out: list[str] = []
    for name in _WRITTEN.findall(question):
        if "_" not in name.strip("_") and "." not in name:
            continue  # a word, not a name
        if not _known(name, graph) and name not in out:
            out.append(name)
    return out


@dataclass(frozen=True)
class _Names:
    tables: dict[str, set[int]]  # a table's key (with or without its schema) → tables
    columns: list[set[str]]  # per table, its columns' keys
    every_column: set[str]


# Per schema version (a graph is loaded afresh for each question; a warehouse has thousands of
# columns, each read in its two numbers).
_NAMES: ByVersion[_Names] = ByVersion()


def _known(written: str, graph: SchemaGraph) -> bool:
    names = _NAMES.of(graph, "unknown_names", _names)
    forms = _forms(written)
    if any(f in names.tables or f in names.every_column for f in forms):
        return True
    # `table.column` (or `schema.table.column`): the column of that table.
    head, _, last = written.rpartition(".")
    if not head:
        return False
    columns = _forms(last)
    return any(columns & names.columns[i] for f in _forms(head) for i in names.tables.get(f, ()))


def _key(name: str) -> str:
    """One spelling for a name however it is written: `invoice_line`, `InvoiceLine` and
    `invoiceline` are `invoiceline`."""
    return "".join(split_identifier(name))


def _forms(written: str) -> set[str]:
    """A name's keys: as written, and with its last word's other number (`order_ids` is
    `order_id`, `user_tag` is `user_tags`, `statuses` is `status`)."""
    parts = [_key(p) for p in written.split(".")]
    words = split_identifier(written.split(".")[-1])
    if not words:
        return {".".join(parts)}
    last = words[-1]
    numbers = {last, singular(last), last + "s"}
    if last.endswith("s"):
        numbers.add(last[:-1])
    if last.endswith("es"):
        numbers.add(last[:-2])
    return {".".join([*parts[:-1], "".join([*words[:-1], n])]) for n in numbers}


def _names(graph: SchemaGraph) -> _Names:
    tables: dict[str, set[int]] = {}
    columns: list[set[str]] = []
    for index, table in enumerate(graph.tables):
        for form in _forms(table.name):
            for key in (form, form.rsplit(".", 1)[-1]):
                tables.setdefault(key, set()).add(index)
        columns.append({f for c in table.columns for f in _forms(c.name)})
    return _Names(tables, columns, set().union(*columns) if columns else set())
