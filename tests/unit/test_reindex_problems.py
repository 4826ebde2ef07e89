"""Indexing a source again says what changes (index/sources.py `reindex_problems`)."""

from __future__ import annotations

import json

from schemawise.index.sources import reindex_problems

PG = "postgresql://reader:***@db:5432/wh"
OPTIONS = {"dbt": "/srv/dbt", "overlay": "/srv/schemawise.yml", "dictionary": None,
           "query_log": None, "profile": True, "describe": False}  # fmt: skip


def messages(*args: object) -> list[str]:
    return [p.message for p in reindex_problems(*args)]  # type: ignore[arg-type]


def test_a_first_index_of_a_database_with_tables_says_nothing() -> None:
    assert messages("wh", PG, OPTIONS, 12, None) == []


def test_the_same_database_with_the_same_files_says_nothing() -> None:
    assert messages("wh", PG, OPTIONS, 12, ("v1", PG, json.dumps(OPTIONS))) == []


def test_files_not_given_again_are_named() -> None:
    without = {**OPTIONS, "dbt": None, "overlay": None}
    said = messages("wh", PG, without, 12, ("v1", PG, OPTIONS))
    assert len(said) == 2
    assert "--dbt /srv/dbt" in said[0] and "--overlay /srv/schemawise.yml" in said[1]
    hints = [p.hint for p in reindex_problems("wh", PG, without, 12, ("v1", PG, OPTIONS))]
    assert all("schemawise sync wh" in h for h in hints)


def test_another_database_under_the_name_is_named() -> None:
    other = "sqlite:////data/chinook.sqlite"
    [said] = messages("wh", other, OPTIONS, 11, ("v1", PG, OPTIONS))
    assert said == f"wh held {PG}; it now holds {other} instead."


def test_a_database_without_tables_is_said() -> None:
    [problem] = reindex_problems("empty", PG, OPTIONS, 0, None)
    assert problem.message == f"No table was found in {PG}." and "--schema" in problem.hint
