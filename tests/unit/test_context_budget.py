"""The token budget (retrieve/budget.py) on hand-made packs: golden cases from
tests/fixtures/budget/*.yaml, and the promises checked at every budget from nothing to
generous — never over the budget unless the smallest honest pack is, parts dropped in the
documented order, keys and join columns kept, no table without columns, and a pack that says
what it dropped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import networkx as nx
import pytest
import yaml

from schemawise.graph.model import Column, Edge, SchemaGraph, Table
from schemawise.graph.paths import connecting_tree
from schemawise.prune.columns import join_keys_of, kept_keys
from schemawise.retrieve.budget import fit_budget, without
from schemawise.retrieve.pack import ColumnChoice, ContextPack, TableChoice
from schemawise.retrieve.render import count_tokens, render, with_text

FIXTURES = sorted((Path(__file__).resolve().parents[1] / "fixtures" / "budget").glob("*.yaml"))
# The documented order; columns come twice: tier 2 first, the first table's own last.
PHASES = [
    "example",
    "values",
    "value_mapping",
    "description",
    "column",
    "definition",
    "table",
    "own column",
]


def _graph(spec: dict[str, Any]) -> SchemaGraph:
    tables = [
        Table(
            name=t["name"],
            primary_key=t["primary_key"],
            columns=[Column(name=c.split()[0], type=c.split()[1]) for c in t["columns"]],
        )
        for t in spec["tables"]
    ]
    edges = [
        Edge(child_table=child, child_columns=[fk], parent_table=parent, parent_columns=[key],
             cardinality="many_to_one", source="foreign_key", confidence=1.0)
        for child, fk, parent, key in spec["edges"]
    ]  # fmt: skip
    return SchemaGraph(tables=tables, edges=edges)


def _pack(fixture: dict[str, Any], graph: SchemaGraph) -> ContextPack:
    spec = fixture["pack"]
    pack = ContextPack(
        question=fixture["question"],
        # A table is [name, score] or [name, score, description]; a column [table, name, tier,
        # values] or with its description after them.
        tables=[
            TableChoice(name=t[0], score=t[1], description=t[2] if len(t) > 2 else "")
            for t in spec["tables"]
        ],
        columns=[
            ColumnChoice(
                table=c[0],
                name=c[1],
                tier=c[2],
                values=c[3],
                description=c[4] if len(c) > 4 else "",
            )
            for c in spec["columns"]
        ],
        join_paths=[connecting_tree(graph, spec["joined"]).model_dump()],
        definitions=spec.get("definitions", []),
        value_mappings=spec.get("value_mappings", {}),
        examples=spec.get("examples", []),
    )
    return with_text(pack, graph)


def _load(path: Path) -> tuple[dict[str, Any], SchemaGraph, ContextPack]:
    fixture = yaml.safe_load(path.read_text())
    graph = _graph(fixture["graph"])
    return fixture, graph, _pack(fixture, graph)


def _cases() -> list[Any]:
    return [
        pytest.param(path, case, id=f"{path.stem}-{case['budget']}")
        for path in FIXTURES
        for case in yaml.safe_load(path.read_text())["cases"]
    ]


@pytest.mark.parametrize(("path", "case"), _cases())
def test_golden_budget_cases(path: Path, case: dict[str, Any]) -> None:
    _, graph, pack = _load(path)
    fitted = fit_budget(pack, graph, case["budget"])
    assert [t.name for t in fitted.tables] == case["tables"]
    assert [f"{d.kind}:{d.name}" for d in fitted.dropped] == case["dropped"]
    assert fitted.over_budget is case.get("over_budget", False)
    assert fitted.truncated is bool(case["dropped"]) and fitted.budget == case["budget"]
    assert (fitted.tokens > case["budget"]) is fitted.over_budget


def _phases(fitted: ContextPack, before: ContextPack) -> list[int]:
    """Each dropped part's place in the documented order."""
    tier = {(c.table, c.name): c.tier for c in before.columns}
    first = before.tables[0].name
    phases, later = [], False
    for part in fitted.dropped:
        kind: str = part.kind
        if kind == "column":
            table, name = part.name.split(".", 1)
            if later:  # after definitions or tables: only the first table's columns are left
                assert table == first
                kind = "own column"
            else:
                assert tier[(table, name)] == 2, f"{part.name} is tier 1"
        later = later or kind in ("definition", "table")
        phases.append(PHASES.index(kind))
    return phases


def _joined(pack: ContextPack) -> nx.Graph[str]:
    joins: nx.Graph[str] = nx.Graph()
    for path in pack.join_paths:
        for edge in path["edges"]:
            joins.add_edge(edge["left"], edge["right"])
    return joins


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
@pytest.mark.parametrize("budget", [0, 1, 10, 14, 20, 40, 80, 120, 160, 200, 250, 300, 350, 10**6])
def test_every_budget_keeps_the_promises(path: Path, budget: int) -> None:
    _, graph, pack = _load(path)
    untouched = pack.model_copy(deep=True)
    fitted = fit_budget(pack, graph, budget)
    assert pack == untouched  # the pack handed in is not changed
    assert fitted.text == render(fitted, graph) and fitted.tokens == count_tokens(fitted.text)
    # Within the budget, or the smallest honest pack marked as over it.
    assert fitted.tokens <= budget or fitted.over_budget
    tables = [t.name for t in fitted.tables]
    if fitted.over_budget:
        assert tables == [pack.tables[0].name]
        keys = kept_keys(graph, tables, set())
        left = {(c.table, c.name) for c in fitted.columns}
        assert left == keys or (not keys and len(left) == 1)
    # What was dropped, in the documented order, and said.
    phases = _phases(fitted, pack)
    assert phases == sorted(phases)
    assert fitted.truncated is bool(fitted.dropped)
    dropped = {(d.kind, d.name) for d in fitted.dropped}
    assert not {("table", t) for t in tables} & dropped
    assert not {("column", f"{c.table}.{c.name}") for c in fitted.columns} & dropped
    # Keys and join columns of every table kept stay; no table is left without columns.
    keys = kept_keys(graph, tables, join_keys_of(fitted.join_paths))
    offered = {(c.table, c.name) for c in pack.columns}
    assert keys & offered <= {(c.table, c.name) for c in fitted.columns}
    assert all(any(c.table == t for c in fitted.columns) for t in tables)
    assert tables[0] == pack.tables[0].name
    # The joins left are among the tables left, and still join those the tree joined.
    joins = _joined(fitted)
    assert set(joins) <= set(tables)
    tree = [t for t in tables if t in _joined(pack)]
    if len(tree) > 1:
        assert set(tree) <= set(joins) and nx.is_connected(joins.subgraph(tree))


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_what_is_dropped_is_in_cut_order_and_nothing_else_fits_back(path: Path) -> None:
    _, graph, pack = _load(path)
    everything = [(d.kind, d.name) for d in fit_budget(pack, graph, 0).dropped]
    for budget in range(0, pack.tokens + 2, 3):
        fitted = fit_budget(pack, graph, budget)
        dropped = [(d.kind, d.name) for d in fitted.dropped]
        # The parts taken out, in the order the cuts take them (a subsequence of all cuts).
        assert dropped == [part for part in everything if part in dropped]
        # The pack is exactly the pack handed in without them.
        assert fitted.text == without(pack, graph, fitted.dropped).text
        if fitted.over_budget:
            continue
        # None of them could have stayed: each alone put back is over the budget, or shows
        # nothing (values beside a column that went, a table joined to none left).
        for part in fitted.dropped:
            back = without(pack, graph, [d for d in fitted.dropped if d != part])
            stranded = (
                part.kind == "table"
                and part.name in _joined(pack)
                and (part.name not in _joined(back))
            )
            assert back.tokens > budget or back.text == fitted.text or stranded, (
                f"{part.kind}:{part.name} fits back at {budget}"
            )


@pytest.mark.parametrize("budget", [150, 250, 300])
def test_a_table_going_leaves_no_budget_unused_that_smaller_parts_could_use(budget: int) -> None:
    _, graph, pack = _load(FIXTURES[0])
    fitted = fit_budget(pack, graph, budget)
    assert fitted.tokens <= budget
    # Whatever smaller part is still out would not fit: the budget is used, not wasted.
    small = [d for d in fitted.dropped if d.kind in ("example", "values", "definition")]
    for part in small:
        back = without(pack, graph, [d for d in fitted.dropped if d != part])
        assert back.tokens > budget or back.text == fitted.text


def test_warnings_are_worked_out_again_for_the_tables_left() -> None:
    # Two children of one parent fan out; once one child goes, the warning goes with it.
    graph = _graph(
        {
            "tables": [
                {"name": "teams", "primary_key": ["team_id"], "columns": ["team_id integer"]},
                {"name": "players", "primary_key": ["player_id"],
                 "columns": ["player_id integer", "team_id integer", "goals integer"]},
                {"name": "coaches", "primary_key": ["coach_id"],
                 "columns": ["coach_id integer", "team_id integer", "salary real"]},
            ],
            "edges": [["players", "team_id", "teams", "team_id"],
                      ["coaches", "team_id", "teams", "team_id"]],
        }
    )  # fmt: skip
    tree = connecting_tree(graph, ["players", "teams", "coaches"])
    assert tree.warnings  # players and coaches are both many per team
    pack = with_text(
        ContextPack(
            question="goals and salaries per team",
            tables=[TableChoice(name="players", score=0.9), TableChoice(name="teams", score=0.5),
                    TableChoice(name="coaches", score=0.4)],
            columns=[ColumnChoice(table=t, name=c.name, tier=1)
                     for t in ("players", "teams", "coaches")
                     for c in graph.table(t).columns],  # type: ignore[union-attr]
            join_paths=[tree.model_dump()],
        ),
        graph,
    )  # fmt: skip
    fitted = fit_budget(pack, graph, pack.tokens - 1)
    assert [t.name for t in fitted.tables] == ["players", "teams"]
    [path] = fitted.join_paths
    assert path["tables"] == ["players", "teams"] and len(path["edges"]) == 1
    # The same grain and warnings as the tree of the tables left, and no word of the fan-out.
    alone = connecting_tree(graph, ["players", "teams"])
    assert (path["grain"], path["warnings"]) == (alone.grain, alone.warnings)
    assert "coaches" not in fitted.text and "both many per" not in fitted.text


def test_a_first_table_without_keys_keeps_its_best_column() -> None:
    graph = _graph(
        {"tables": [{"name": "events", "primary_key": [],
                     "columns": ["kind text", "happened_at date", "payload text"]}],
         "edges": []}
    )  # fmt: skip
    pack = with_text(
        ContextPack(
            question="events by kind",
            tables=[TableChoice(name="events", score=1.0)],
            columns=[ColumnChoice(table="events", name=c, tier=1)
                     for c in ("kind", "happened_at", "payload")],
        ),
        graph,
    )  # fmt: skip
    fitted = fit_budget(pack, graph, 1)
    assert [c.name for c in fitted.columns] == ["kind"] and fitted.over_budget
    assert [d.name for d in fitted.dropped] == ["events.payload", "events.happened_at"]
    assert fitted.text == "CREATE TABLE events (\n  kind text\n);"


def test_an_empty_pack_fits_any_budget() -> None:
    pack = fit_budget(ContextPack(question="anything"), SchemaGraph(tables=[]), 0)
    assert pack.tokens == 0 and not pack.truncated and not pack.over_budget
