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

from schemawise.graph.model import SchemaGraph
from schemawise.graph.naming import singular, split_identifier

# `loyalty_points`, `crm.leads`, `sales.orders.amount`, at the end of a sentence too; each
# part two characters at least, so that "e.g." and "i.e." are no names.
_WRITTEN = re.compile(
    r"(?<![\w.])[A-Za-z_][A-Za-z0-9_]+(?:\.[A-Za-z_][A-Za-z0-9_]+)*(?!\w)(?!\.\w)"
)


def unknown_names(question: str, graph: SchemaGraph) -> list[str]:
    """The names the question writes as a table or column that `graph` has no table or column
    of, in the order written (case as written)."""
    known = _known(graph)
    out: list[str] = []
    for name in _WRITTEN.findall(question):
        if "_" not in name.strip("_") and "." not in name:
            continue  # a word, not a name
        if not _forms(name) & known and name not in out:
            out.append(name)
    return out


def _key(name: str) -> str:
    """One spelling for a name however it is written: `invoice_line`, `InvoiceLine` and
    `invoiceline` are `invoiceline`."""
    return "".join(split_identifier(name))


def _forms(written: str) -> set[str]:
    """A written name's keys: as written, and with its last word singular."""
    parts = [_key(p) for p in written.split(".")]
    words = split_identifier(written.split(".")[-1])
    last_singular = "".join([*words[:-1], singular(words[-1])]) if words else ""
    return {".".join(parts), ".".join([*parts[:-1], last_singular])}


def _known(graph: SchemaGraph) -> set[str]:
    names: set[str] = set()
    for table in graph.tables:
        # Each table by its name and with its last word singular (`customers`, `customer`).
        for form in _forms(table.name):
            names |= {form, form.rsplit(".", 1)[-1]}
        parts = [_key(p) for p in table.name.split(".")]
        full, bare = ".".join(parts), parts[-1]
        names |= {full, bare}
        for column in table.columns:
            col = _key(column.name)
            names |= {col, f"{bare}.{col}", f"{full}.{col}"}
    return names
