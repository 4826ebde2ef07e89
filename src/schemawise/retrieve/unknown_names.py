"""Names the question writes as a table or column that the database does not have.

A question about `loyalty_points`, `crm.leads` or "the invoices table" gets a pack of the
nearest tables all the same (the search always finds something near); the pack then says
which of the names it wrote the database lacks, so that the reader, a person or a model, does
not take the nearest tables for the ones asked about. Only names written as names: an
identifier with an underscore, a dotted name, or the word before "table" — grammar, not a list
of words. Pure: the question and the graph in, the names out.
"""

from __future__ import annotations

import re

from schemawise.graph.model import SchemaGraph
from schemawise.graph.naming import singular

# `loyalty_points`, `crm.leads`, `sales.orders.amount`: each part two characters at least, so
# that "e.g." and "i.e." are no names.
_WRITTEN = re.compile(r"(?<![\w.])[A-Za-z_][A-Za-z0-9_]+(?:\.[A-Za-z_][A-Za-z0-9_]+)*(?![\w.])")
_THE_TABLE = re.compile(
    r"\b(?:the|a|an|from|in)\s+([A-Za-z_][A-Za-z0-9_.]*)\s+(?:table|tables|view)\b", re.IGNORECASE
)


def unknown_names(question: str, graph: SchemaGraph) -> list[str]:
    """The names the question writes as a table or column that `graph` has no table or column
    of, in the order written (case as written)."""
    known = _known(graph)
    written = [w for w in _WRITTEN.findall(question) if "_" in w.strip("_") or "." in w]
    written += _THE_TABLE.findall(question)
    out: list[str] = []
    for name in written:
        if name.lower() not in known and _singular(name) not in known and name not in out:
            out.append(name)
    return out


def _known(graph: SchemaGraph) -> set[str]:
    names: set[str] = set()
    for table in graph.tables:
        full = table.name.lower()
        bare = full.rsplit(".", 1)[-1]
        names |= {full, bare, singular(bare)}
        for column in table.columns:
            col = column.name.lower()
            names |= {col, f"{bare}.{col}", f"{full}.{col}"}
    return names


def _singular(name: str) -> str:
    head, _, last = name.lower().rpartition(".")
    return f"{head}.{singular(last)}" if head else singular(last)
