"""The EXPLAIN gate (L7): refuse plans whose estimates exceed limits, or that multiply large
inputs without a join condition. Estimates stay inside: callers learn the offending node kind,
never the numbers (they would leak row counts across tenants)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from schemawise.graph.model import SchemaGraph
from schemawise.validate.problems import SqlProblem


@dataclass(frozen=True)
class GateLimits:
    max_rows: float = 10_000_000
    max_cost: float = 100_000_000
    # A product of two inputs each above this size, with no join condition, is refused.
    cross_product_rows: float = 10_000


def _refused(node: str, why: str) -> SqlProblem:
    return SqlProblem.of(
        "explain_rejected",
        f"The query plan was refused: {why} (at a {node} node).",
        "Add join conditions or filters, or aggregate before joining; raise the gate's limits "
        "only for queries known to be safe.",
        node=node,
    )


def plan_nodes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    """Every node of a Postgres JSON plan, the root first."""
    nodes = [plan]
    for child in plan.get("Plans", []) or []:
        nodes.extend(plan_nodes(child))
    return nodes


def gate_postgres(plan: dict[str, Any], limits: GateLimits) -> SqlProblem | None:
    if not plan:
        return None
    if float(plan.get("Plan Rows", 0)) > limits.max_rows:
        return _refused(str(plan.get("Node Type")), "the estimated result is too large")
    if float(plan.get("Total Cost", 0)) > limits.max_cost:
        return _refused(str(plan.get("Node Type")), "the estimated cost is too high")
    for node in plan_nodes(plan):
        if node.get("Node Type") != "Nested Loop" or node.get("Join Filter"):
            continue
        children = node.get("Plans", []) or []
        if len(children) != 2:
            continue
        inner = plan_nodes(children[1])
        inner_indexed = any("Index Cond" in n or "Recheck Cond" in n for n in inner)
        sizes = [float(c.get("Plan Rows", 0)) for c in children]
        if not inner_indexed and min(sizes) > limits.cross_product_rows:
            return _refused("Nested Loop", "it multiplies two large inputs without a condition")
    return None


_SQLITE_SCAN = re.compile(r"^SCAN (?:TABLE )?(\S+)(?: AS \S+)?$")


def gate_sqlite(details: list[str], graph: SchemaGraph, limits: GateLimits) -> SqlProblem | None:
    """SQLite gives no estimates: full scans are sized with the graph's row counts."""
    scanned = []
    for detail in details:
        match = _SQLITE_SCAN.match(detail.strip())
        if match:
            table = graph.table(match.group(1).strip('"'))
            scanned.append(table.row_count or 0 if table else 0)
    large = [n for n in scanned if n > limits.cross_product_rows]
    if len(large) >= 2:
        product = 1.0
        for n in large:
            product *= n
        if product > limits.max_rows:
            return _refused("SCAN", "it scans several large tables in full, nested")
    return None


_DUCKDB_ESTIMATE = re.compile(r"~\s*([\d,.]+)\s*(?:rows?)?", re.IGNORECASE)


def gate_duckdb(plan: str, limits: GateLimits) -> SqlProblem | None:
    estimates = [float(m.replace(",", "")) for m in _DUCKDB_ESTIMATE.findall(plan) if m.strip(".")]
    if (
        "CROSS_PRODUCT" in plan
        and len([e for e in estimates if e > limits.cross_product_rows]) >= 2
    ):
        return _refused("CROSS_PRODUCT", "it multiplies two large inputs without a condition")
    if estimates and max(estimates) > limits.max_rows:
        return _refused("plan", "the estimated result is too large")
    return None
