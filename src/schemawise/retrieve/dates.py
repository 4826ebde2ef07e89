"""The date dimension a time phrase needs: in a star schema the facts hold no dates, only a key
into a table of dates (`store_sales.ss_sold_date_sk` → `date_dim`), so "sales in 2001" needs
that table though no word of the question names it. Pure: reads the graph only."""

from __future__ import annotations

from schemawise.graph.model import SchemaGraph, Table
from schemawise.graph.naming import is_time, type_family
from schemawise.prune.columns import has_time_phrase

# A table of dates has a date-typed column and at least this many columns about time (year,
# month, day, quarter, …): one date column alone is an attribute (a hire date), not a calendar.
MIN_TIME_COLUMNS = 3


def _references(graph: SchemaGraph) -> set[tuple[str, str]]:
    return {(e.child_table, c) for e in graph.edges if e.via is None for c in e.child_columns}


def _own_time_columns(table: Table, keys: set[tuple[str, str]]) -> bool:
    """A time column of the table's own: a key into another table (`sold_date_sk`) is not."""
    return any(is_time(c.type, c.name) and (table.name, c.name) not in keys for c in table.columns)


def is_date_dimension(table: Table) -> bool:
    dated = any(type_family(c.type) == "temporal" for c in table.columns)
    timed = sum(1 for c in table.columns if is_time(c.type, c.name))
    return dated and timed >= MIN_TIME_COLUMNS


def mostly_time(table: Table) -> bool:
    """Half or more of the table's columns are about time, or its name is."""
    timed = sum(1 for c in table.columns if is_time(c.type, c.name))
    return is_time("", table.name.rsplit(".", 1)[-1]) or 2 * timed >= len(table.columns)


def date_dimensions(question: str, graph: SchemaGraph, picked: list[str]) -> dict[str, str]:
    """Tables of dates that picked tables without time columns of their own reference, when
    the question has a time phrase; each with the reason the pack gives."""
    if not has_time_phrase(question):
        return {}
    keys = _references(graph)
    out: dict[str, str] = {}
    for name in picked:
        table = graph.table(name)
        if table is None or _own_time_columns(table, keys):
            continue
        for edge in graph.edges:
            parent = graph.table(edge.parent_table)
            if (
                edge.via is None
                and edge.child_table == name
                and parent is not None
                and parent.name not in picked
                and parent.name not in out
                # A table with dates of its own is not the calendar of every key into it
                # (`cs_call_center_sk` points at a call centre, whose opening and closing dates
                # make it look like one): the key says it holds a date (`ss_sold_date_sk`), or
                # the table is mostly about time (`dim_calendar` through `calendar_key`).
                and (is_time("", edge.child_columns[0]) or mostly_time(parent))
                and is_date_dimension(parent)
            ):
                column = edge.child_columns[0]
                out[parent.name] = f"the dates {name}.{column} refers to, for a time phrase"
    return out
