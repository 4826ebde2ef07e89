"""Cardinality of an edge, read child → parent, from declared keys and from the data."""

from __future__ import annotations

from schemawise.graph.datachecks import DataChecker
from schemawise.graph.model import Cardinality, CardinalityBasis, Edge, SchemaGraph


def label(parent_unique: bool | None, child_unique: bool | None) -> Cardinality:
    """A non-unique parent key makes any join many-to-many, whatever was declared."""
    if parent_unique is False:
        return "many_to_many"
    if parent_unique and child_unique:
        return "one_to_one"
    return "many_to_one"


def combine(declared: bool, measured: bool | None) -> bool | None:
    """The data wins over a declaration: a declared key with duplicates is not unique."""
    if measured is not None:
        return measured
    return True if declared else None


def basis(declared_any: bool, measured_any: bool) -> CardinalityBasis:
    if declared_any and measured_any:
        return "declared+measured"
    if measured_any:
        return "measured"
    return "declared" if declared_any else "assumed"


def assign(edge: Edge, graph: SchemaGraph, checker: DataChecker | None) -> None:
    """Set the edge's cardinality and the evidence behind it, measuring when a checker is given."""
    child = graph.table(edge.child_table)
    parent = graph.table(edge.parent_table)
    parent_declared = bool(parent and parent.is_declared_unique(edge.parent_columns))
    child_declared = bool(child and child.is_declared_unique(edge.child_columns))
    parent_measured = child_measured = None
    sampled = False
    if checker is not None:
        p = checker.uniqueness(edge.parent_table, edge.parent_columns)
        c = checker.uniqueness(edge.child_table, edge.child_columns)
        parent_measured, child_measured = p.unique, c.unique
        sampled = p.sampled or c.sampled
    parent_unique = combine(parent_declared, parent_measured)
    child_unique = combine(child_declared, child_measured)
    edge.cardinality = label(parent_unique, child_unique)
    edge.evidence.parent_unique = parent_unique
    edge.evidence.child_unique = child_unique
    edge.evidence.sampled = sampled
    edge.evidence.cardinality_basis = basis(
        parent_declared or child_declared, parent_measured is not None or child_measured is not None
    )
    if parent_declared and parent_measured is False:
        edge.evidence.notes.append(
            "declared key on the parent is not unique in the data: joins multiply rows"
        )
    if checker is not None and parent_measured is None and child_measured is None:
        edge.evidence.notes.append("not measured (no rows, no access, or time budget spent)")
