"""Golden sets: YAML and JSONL files read into one item type; malformed files give an error
with a hint; seeded samples are stable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schemawise.errors import GoldenSetError
from schemawise.eval.golden import GoldenItem, load_golden, sample, sample_per_database

YAML_SET = """
database: shop.sqlite
items:
  - id: q1
    question: How many singers are there?
    gold: SELECT count(*) FROM singer
  - question: Names of French singers, either spelling of the query.
    gold:
      - SELECT name FROM singer WHERE country = 'France'
      - SELECT name FROM singer WHERE country IN ('France')
    source: other.sqlite
    evidence: French means country = 'France'
    tables: [singer]
    columns: [singer.name, singer.country]
    join_keys: []
    rules: [no_select_star]
"""


def test_yaml_set(tmp_path: Path) -> None:
    path = tmp_path / "set.yaml"
    path.write_text(YAML_SET)
    first, second = load_golden(path)
    assert first.id == "q1"
    assert first.gold == ("SELECT count(*) FROM singer",)
    assert first.database == str(tmp_path / "shop.sqlite")  # the file-level default
    assert second.id == "set-2"  # numbered by position when the file gives none
    assert len(second.gold) == 2
    assert second.database == str(tmp_path / "other.sqlite")  # `source` is `database`
    assert second.tables == ("singer",)
    assert second.columns == ("singer.name", "singer.country")
    assert second.rules == ("no_select_star",)


def test_jsonl_set(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    lines = [
        {"id": 7, "question": "Count?", "gold": "SELECT 1", "database": "sqlite:///x.sqlite"},
        {"question": "Both?", "gold": ["SELECT 1", "SELECT 1.0"]},
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n\n")
    first, second = load_golden(path)
    assert first.id == "7" and first.database == "sqlite:///x.sqlite"  # URLs stay as written
    assert second.database is None and second.gold == ("SELECT 1", "SELECT 1.0")


@pytest.mark.parametrize(
    ("written", "read"),
    [
        ("embedded", "embedded"),  # the embedded server's own database, not a file here
        ("embedded/sales", "embedded/sales"),
        ("postgresql://reader@host/dw", "postgresql://reader@host/dw"),
        ("data/shop.duckdb", "{folder}/data/shop.duckdb"),  # a file beside the set
    ],
)
def test_where_an_items_database_is(tmp_path: Path, written: str, read: str) -> None:
    path = tmp_path / "set.yaml"
    path.write_text(f"database: {written}\nitems:\n- question: q\n  gold: SELECT 1\n")
    (item,) = load_golden(path)
    assert item.database == read.format(folder=tmp_path)


@pytest.mark.parametrize(
    ("name", "text", "message", "hint"),
    [
        ("bad.yaml", "- question: [unclosed\n", "not valid YAML at line", "indentation"),
        ("bad.yaml", "- gold: SELECT 1\n", "item 1: question: Field required", "`question`"),
        ("bad.yaml", "- question: q\n  gold: []\n", "item 1: gold", "`gold`"),
        ("bad.yaml", "- question: q\n  gold: '  '\n", "a gold query is empty", "`gold`"),
        ("bad.yaml", "- question: q\n  gold: x\n  sql: y\n", "sql: Extra inputs", "`question`"),
        ("bad.yaml", "just text\n", "expected a list of items", "`question`"),
        ("bad.yaml", "questions: []\n", "needs an `items` list", "items"),
        ("bad.yaml", "[]\n", "holds no items", "`question`"),
        ("bad.yaml", "- 3\n", "item 1: expected a mapping", "`question`"),
        (
            "bad.yaml",
            "- {id: a, question: q, gold: x}\n- {id: a, question: r, gold: y}\n",
            "id 'a' was already used at item 1",
            "own id",
        ),
        (
            "bad.yaml",
            "- {question: q, gold: x, database: a.sqlite, source: b.sqlite}\n",
            "not two different ones",
            "`database`",
        ),
        (
            "bad.jsonl",
            '{"question": "q", "gold": "x"}\n{"question": \n',
            "line 2 is not JSON",
            "one",
        ),
        ("bad.jsonl", '{"question": "q"}\n', "line 1: gold: Field required", "`gold`"),
        ("bad.txt", "x", "unknown golden set format", ".yaml"),
    ],
)
def test_malformed_sets(tmp_path: Path, name: str, text: str, message: str, hint: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(GoldenSetError) as caught:
        load_golden(path)
    assert message in caught.value.message
    assert hint in caught.value.hint


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(GoldenSetError, match="not found"):
        load_golden(tmp_path / "absent.yaml")


def _items(n: int, databases: int = 1) -> list[GoldenItem]:
    return [
        GoldenItem(id=str(i), question=f"q{i}", gold=("SELECT 1",), database=f"db{i % databases}")
        for i in range(n)
    ]


def test_sample_is_seeded_and_ordered() -> None:
    items = _items(100)
    first = sample(items, 10, seed=3)
    assert first == sample(items, 10, seed=3)
    assert first != sample(items, 10, seed=4)
    assert [int(i.id) for i in first] == sorted(int(i.id) for i in first)
    assert sample(items, None) == items and sample(items, 500) == items
    # Fixed across Python versions and machines: random.Random(seed).sample is stable.
    assert [i.id for i in sample(items, 5, seed=0)] == ["5", "33", "49", "53", "97"]


def test_sample_per_database() -> None:
    items = _items(50, databases=3)
    chosen = sample_per_database(items, 4, seed=1)
    by_db = {d: [i for i in chosen if i.database == d] for d in ("db0", "db1", "db2")}
    assert all(len(v) == 4 for v in by_db.values())
    assert chosen == sample_per_database(items, 4, seed=1)


def test_the_chinook_golden_set_is_the_warehouse_sets_chinook_questions() -> None:
    from schemawise.bench.warehouses import QUESTIONS

    golden = load_golden(QUESTIONS.with_name("chinook_golden.yaml"))
    rows = [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line.strip()]
    chinook = [(r["question"], r["query"]) for r in rows if r["db_id"] == "chinook"]
    assert [(item.question, item.gold[0]) for item in golden] == chinook and len(chinook) == 16
