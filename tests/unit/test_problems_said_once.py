"""The graph's problems say each thing once: a table the catalog found unreadable is not warned
of again by every data check that failed on it (graph/extract.py `_new_problems`)."""

from __future__ import annotations

from schemawise.graph.extract import _new_problems
from schemawise.graph.model import Problem

UNREADABLE = Problem(
    table="hr.payroll", stage="catalog", message="permission denied: cannot SELECT from hr.payroll"
)


def check(table: str, message: str) -> Problem:
    return Problem(table=table, stage="data_check", message=message, hint="Grant SELECT on it…")


def test_a_check_refused_on_a_table_already_warned_of_is_not_said_again() -> None:
    found = [
        check("hr.payroll", "permission: permission denied for table payroll"),
        # A check for a readable table that read the unreadable one: Postgres names the
        # table it refused, which is not the one the check was for.
        check("ops.employees", "permission: permission denied for table payroll"),
    ]
    assert _new_problems(found, [UNREADABLE]) == []


def test_a_new_problem_is_kept_once() -> None:
    timeout = check("sales.orders", "timeout: canceling statement due to statement timeout")
    other = check("crm.leads", 'permission: permission denied for relation "leads"')
    assert _new_problems([timeout, timeout, other], [UNREADABLE]) == [timeout, other]


def test_a_table_the_indexing_role_could_not_read_is_marked_in_the_pack() -> None:
    from schemawise.graph.model import Column, SchemaGraph, Table
    from schemawise.retrieve.evidence import TableEvidence
    from schemawise.retrieve.settings import ContextSettings
    from schemawise.retrieve.tables import choose_tables

    graph = SchemaGraph(
        tables=[
            Table(name="hr.payroll", columns=[Column(name="gross_salary", type="numeric")]),
            Table(name="ops.employees", columns=[Column(name="salary", type="numeric")]),
        ],
        problems=[UNREADABLE],
    )
    evidence = TableEvidence(
        scores={("wh", "hr.payroll"): 0.3, ("wh", "ops.employees"): 0.29},
        reasons={("wh", "hr.payroll"): ["table card matched"],
                 ("wh", "ops.employees"): ["table card matched"]},
        columns={}, pinned=set(),
    )  # fmt: skip
    chosen = choose_tables("salary", evidence, "wh", graph, None, {"salary"}, ContextSettings())
    reasons = {t.name: t.reasons for t in chosen.tables}
    assert any("could not read it" in r for r in reasons["hr.payroll"])
    assert not any("could not read it" in r for r in reasons.get("ops.employees", []))


def test_an_edge_found_by_its_name_and_the_log_keeps_the_logs_count() -> None:
    from schemawise.graph.extract import _keep_log_count
    from schemawise.graph.model import Edge, Evidence

    def edge(source: str, joins: int | None) -> Edge:
        return Edge(child_table="payments", child_columns=["ord_id"], parent_table="orders",
                    parent_columns=["ord_id"], source=source,  # type: ignore[arg-type]
                    evidence=Evidence(query_log_joins=joins))  # fmt: skip

    named, logged = edge("inferred_name", None), edge("query_log", 7)
    _keep_log_count(named, logged)
    assert named.evidence.query_log_joins == 7
    # A count the kept edge has is not replaced.
    counted = edge("inferred_name", 3)
    _keep_log_count(counted, logged)
    assert counted.evidence.query_log_joins == 3
