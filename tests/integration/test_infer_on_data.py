"""Joins no name gives away, found on the data of real SQLite databases."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from schemawise.db import connect
from schemawise.graph.extract import ExtractOptions, extract_graph
from schemawise.graph.model import SchemaGraph

STUDENTS = [1025, 1101, 1247, 1304, 1381, 1468, 1510, 1641, 1689, 1709, 1782, 1911, 1934]


def _graph(tmp_path: Path, script: str, data_checks: bool = True) -> SchemaGraph:
    path = tmp_path / "db.sqlite"
    if not path.exists():
        with sqlite3.connect(path) as conn:
            conn.executescript(script)
    with connect(f"sqlite:///{path}") as source:
        return extract_graph(source, ExtractOptions(data_checks=data_checks))


def _joins(graph: SchemaGraph) -> dict[tuple[str, str], tuple[str, str, str]]:
    return {
        (e.child_table, e.child_columns[0]): (e.parent_table, e.parent_columns[0], e.evidence.rule)
        for e in graph.edges
        if e.via is None and e.source != "foreign_key"
    }


def test_sparse_ids_are_found_whatever_the_column_is_called(tmp_path: Path) -> None:
    rows = ", ".join(f"({s}, 'n{s}', {i % 12 + 1})" for i, s in enumerate(STUDENTS))
    pairs = [(1025, 1101), (1101, 1689), (1247, 1911), (1304, 1025), (1510, 1934), (1689, 1247)]
    script = f"""
    CREATE TABLE grade (id INTEGER PRIMARY KEY, label TEXT);
    CREATE TABLE highschooler (id INTEGER PRIMARY KEY, name TEXT, grade INTEGER);
    CREATE TABLE crush (admirer INTEGER, admired INTEGER, rating INTEGER);
    INSERT INTO grade VALUES {", ".join(f"({g}, 'g{g}')" for g in range(1, 13))};
    INSERT INTO highschooler VALUES {rows};
    INSERT INTO crush VALUES {", ".join(f"({a}, {b}, {a % 5 + 1})" for a, b in pairs)};
    """
    joins = _joins(_graph(tmp_path, script))
    assert joins[("crush", "admirer")] == ("highschooler", "id", "improbable_inclusion")
    assert joins[("crush", "admired")] == ("highschooler", "id", "improbable_inclusion")
    # Small numbers fit the dense ids of `grade` as well as any: not evidence.
    assert ("crush", "rating") not in joins
    # Without data nothing is proposed for names that say nothing.
    assert ("crush", "admirer") not in _joins(_graph(tmp_path, script, data_checks=False))


def test_a_rejected_parent_gives_way_to_the_next_name(tmp_path: Path) -> None:
    script = """
    CREATE TABLE continents (ContId INTEGER, Continent TEXT);
    CREATE TABLE countries (CountryId INTEGER PRIMARY KEY, Name TEXT, Continent INTEGER);
    INSERT INTO continents VALUES (1, 'america'), (2, 'europe'), (3, 'asia'), (4, 'africa');
    INSERT INTO countries VALUES (1, 'usa', 1), (2, 'france', 2), (3, 'japan', 3), (4, 'peru', 1);
    """
    joins = _joins(_graph(tmp_path, script))
    # `continents.Continent` is named more alike but holds names; the ids hold the values.
    assert joins[("countries", "Continent")][:2] == ("continents", "ContId")
