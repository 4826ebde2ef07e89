"""dbt and overlay metadata: parsed, merged, and used by the index and the context pack."""

from __future__ import annotations

import sqlite3
from importlib import resources
from pathlib import Path

import psycopg
import pytest

from schemawise.demo import warehouse
from schemawise.enrich.metadata import from_dbt, from_overlay
from schemawise.errors import SchemawiseError
from schemawise.graph.model import SchemaGraph
from schemawise.index.embed import get_embedder
from schemawise.index.sources import index_source, load_graphs, load_metadata
from schemawise.retrieve.context import build_context

DEMO = Path(str(resources.files("schemawise.demo")))


def test_dbt_project_and_overlay_parse_and_merge() -> None:
    dbt = from_dbt(DEMO / "dbt")
    orders = dbt.tables["orders"]
    assert orders.certified and "purchase" in orders.synonyms
    assert orders.columns["status"].values == {"P": "pending", "A": "paid", "S": "shipped",
                                               "C": "cancelled"}  # fmt: skip
    assert orders.columns["status"].accepted_values == ["P", "A", "S", "C"]
    assert any(r.child_table == "legacy_crm_notes" and r.parent_column == "sku"
               for r in dbt.relationships)  # fmt: skip
    assert ("orders", "order_id") in dbt.unique
    assert dbt.tables["mv_daily_revenue_old"].deprecated
    overlay = from_overlay(DEMO / "schemawise.yml")
    assert overlay.rules[0].require_table == "shop.refunds"
    merged = dbt.merge(overlay)
    assert merged.jargon["GMV"].startswith("gross merchandise value")
    assert merged.definitions[0].name == "net revenue"


def test_bad_overlay_is_refused_with_a_hint(tmp_path: Path) -> None:
    bad = tmp_path / "schemawise.yml"
    bad.write_text("tables:\n  shop.orders: [not, a, mapping]\n")
    with pytest.raises(SchemawiseError) as info:
        from_overlay(bad)
    assert info.value.hint


def test_metadata_reaches_the_context_pack(
    embedded_url: str, demo_rows: warehouse.DemoRows
) -> None:
    index_source(
        embedded_url, "embedded", "shopmeta", dbt=DEMO / "dbt", overlay=DEMO / "schemawise.yml"
    )
    with psycopg.connect(embedded_url) as conn:
        graphs = load_graphs(conn, ["shopmeta"])
        meta = load_metadata(conn, ["shopmeta"])
        pack = build_context(
            conn, "net revenue of shipped orders by status", graphs, get_embedder(),
            sources=["shopmeta"], metadata=meta,
        )  # fmt: skip
        cards = [r[0] for r in conn.execute(
            "SELECT text FROM schemawise.index_documents WHERE source = 'shopmeta' "
            "AND kind = 'table'").fetchall()]  # fmt: skip
    names = [t.name for t in pack.tables]
    assert "shop.orders" in names
    assert any(d.startswith("net revenue:") for d in pack.definitions)
    # The definition subtracts refunds: it brings the table, whatever the question's words.
    refunds = next(t for t in pack.tables if t.name == "shop.refunds")
    assert "named by the definition of net revenue" in refunds.reasons
    assert refunds.score > 0  # as needed as the weakest table chosen: not the first a budget drops
    assert "CREATE TABLE shop.refunds" in pack.text
    assert pack.value_mappings.get("shop.orders.status", {}).get("S") == "shipped"
    assert "-- values of shop.orders.status" in pack.text
    assert any("DEPRECATED" in c for c in cards)
    assert any("also called purchase" in c for c in cards)
    # What the dbt project says a table and a column are reaches the prompt text, not only
    # the index's cards: "Gross bookings live here" decides which amount to sum.
    orders = next(t for t in pack.tables if t.name == "shop.orders")
    assert orders.description.startswith("One row per order. Gross bookings live here")
    assert f"-- shop.orders: {orders.description}" in pack.text
    status = next(c for c in pack.columns if (c.table, c.name) == ("shop.orders", "status"))
    assert status.description == "Order status code."
    # After the database's comment, before the values.
    assert "-- P=pending, A=paid, S=shipped, C=cancelled; Order status code; e.g. 'S'" in pack.text


def test_the_overlay_states_and_denies_joins_in_the_indexed_graph(
    embedded_url: str, tmp_path: Path
) -> None:
    # A fifth of the flights' tail numbers are not in planes: no inference takes that join,
    # the data team states it. `carrier` reads as a join by name and the data holds it; the
    # team denies it all the same (say, the codes were reissued).
    database = tmp_path / "air.sqlite"
    planes = ", ".join(f"('N{n:03d}', 'model {n % 3}')" for n in range(40))
    codes = ["AA", "UA", "DL", "WN", "B6", "AS", "NK", "F9"]
    carriers = ", ".join(f"('{code}', 'carrier {code}')" for code in codes)
    flights = ", ".join(f"({n}, 'N{n % 50:03d}', '{codes[n % 8]}')" for n in range(200))
    with sqlite3.connect(database) as conn:
        conn.executescript(f"""
            CREATE TABLE planes (tailnum TEXT PRIMARY KEY, model TEXT);
            CREATE TABLE flights (flight_id INTEGER PRIMARY KEY, tailnum TEXT, carrier TEXT);
            CREATE TABLE carriers (carrier TEXT PRIMARY KEY, name TEXT);
            INSERT INTO planes VALUES {planes};
            INSERT INTO flights VALUES {flights};
            INSERT INTO carriers VALUES {carriers};
        """)  # fmt: skip
    overlay = tmp_path / "schemawise.yml"
    overlay.write_text(
        "joins:\n  - from: flights.tailnum\n    to: planes.tailnum\n"
        "not_joins:\n  - from: flights.carrier\n    to: carriers.carrier\n"
    )
    url = f"sqlite:///{database}"
    before = joins_of(load_graph_of(embedded_url, url, "air_plain", None))
    stated = load_graph_of(embedded_url, url, "air_overlay", overlay)
    assert ("flights", "carrier") in before and ("flights", "tailnum") not in before
    assert joins_of(stated) == {("flights", "tailnum"): ("planes", "overlay")}
    # Measured on the data as other joins are: the orphans an inner join would drop, said.
    (edge,) = stated.edges
    assert edge.cardinality == "many_to_one" and edge.evidence.cardinality_basis != "assumed"
    assert edge.evidence.inclusion == 0.8


def test_a_stated_join_that_matches_no_value_is_said_and_not_preferred(
    embedded_url: str, tmp_path: Path
) -> None:
    # The team's typo: the warehouse's name for its id. Kept (the team said so), said at
    # indexing, and a path between the two tables takes the join that returns rows.
    from schemawise.graph.paths import shortest_join_path

    database = tmp_path / "ops.sqlite"
    with sqlite3.connect(database) as conn:
        conn.executescript("""
            CREATE TABLE warehouses (wh_id INTEGER PRIMARY KEY, wh_nm TEXT);
            CREATE TABLE employees (emp_id INTEGER PRIMARY KEY, wh_id INTEGER
                REFERENCES warehouses (wh_id), full_name TEXT);
            INSERT INTO warehouses VALUES (1, 'Berlin DC'), (2, 'Austin DC'), (3, 'Lyon DC');
            INSERT INTO employees VALUES (1, 1, 'Ann'), (2, 2, 'Bo'), (3, 3, 'Cy'), (4, 1, 'Di');
        """)  # fmt: skip
    overlay = tmp_path / "schemawise.yml"
    overlay.write_text("joins:\n  - from: employees.wh_id\n    to: warehouses.wh_nm\n")
    url = f"sqlite:///{database}"
    report = index_source(embedded_url, url, "ops_typo", overlay=overlay, profile=False)
    said = [p for p in report.problems if p["stage"] == "overlay"]
    assert len(said) == 1 and "matches no value" in said[0]["message"], report.problems
    graph = load_graph_of(embedded_url, url, "ops_typo", overlay)
    path = shortest_join_path(graph, "employees", "warehouses")
    assert [(e.on[0][0], e.on[0][1]) for e in path.edges] == [("wh_id", "wh_id")]


def test_a_denied_declared_key_and_a_typo_in_the_overlay(embedded_url: str, tmp_path: Path) -> None:
    from schemawise.graph.reuse import EXTRACTED, INDEXED, graph_for

    database = tmp_path / "shop.sqlite"
    with sqlite3.connect(database) as conn:
        conn.executescript("""
            CREATE TABLE orders (order_id INTEGER PRIMARY KEY, placed TEXT);
            CREATE TABLE lines (line_id INTEGER PRIMARY KEY,
                                order_id INTEGER REFERENCES orders (order_id), qty INTEGER);
            INSERT INTO orders VALUES (1, '2026-01-01'), (2, '2026-01-02');
            INSERT INTO lines VALUES (1, 1, 3), (2, 2, 1);
        """)  # fmt: skip
    overlay = tmp_path / "schemawise.yml"
    overlay.write_text(
        "joins:\n  - from: lines.order_idd\n    to: orders.order_id\n"
        "not_joins:\n  - from: lines.order_id\n    to: orders.order_id\n"
    )
    url = f"sqlite:///{database}"
    report = index_source(embedded_url, url, "shop_denied", overlay=overlay, profile=False)
    # The typo reaches the one who indexed, with its hint (and `index` prints it).
    (problem,) = report.problems
    assert problem["stage"] == "overlay" and "no column lines.order_idd" in problem["message"]
    assert problem["hint"]
    # `check` and `run` still reuse the indexed graph, without the denied key.
    choice = graph_for(url)
    assert choice.origin == INDEXED and choice.source == "shop_denied"
    assert choice.graph.edges == [] and choice.graph.partial
    # The catalogue changes: the stored graph is stale and extracted again, still with the
    # overlay's word on joins (the denied key stays out until `sync`).
    with sqlite3.connect(database) as conn:
        conn.execute("ALTER TABLE lines ADD COLUMN note TEXT")
    stale = graph_for(url)
    assert stale.origin == EXTRACTED
    assert [e for e in stale.graph.edges if e.parent_table == "orders"] == []
    assert any("order_idd" in p.message for p in stale.graph.problems)


def load_graph_of(index_url: str, url: str, name: str, overlay: Path | None) -> SchemaGraph:
    index_source(index_url, url, name, overlay=overlay, profile=False)
    # Its own connection, closed before the next index run alters the index's tables.
    with psycopg.connect(index_url) as conn:
        (graph,) = load_graphs(conn, [name]).values()
    return graph


def joins_of(graph: SchemaGraph) -> dict[tuple[str, str], tuple[str, str]]:
    return {
        (e.child_table, e.child_columns[0]): (e.parent_table, e.source)
        for e in graph.edges
        if e.via is None
    }


def test_the_overlays_own_checks_say_what_they_skipped(tmp_path: Path) -> None:
    from schemawise.db.sqlite import SQLiteSource
    from schemawise.enrich.apply import apply_overlay_joins
    from schemawise.enrich.metadata import Join, Metadata
    from schemawise.graph.datachecks import DataChecker
    from schemawise.graph.extract import ExtractOptions, extract_graph

    database = tmp_path / "air.sqlite"
    with sqlite3.connect(database) as conn:
        conn.executescript("""
            CREATE TABLE planes (tailnum TEXT PRIMARY KEY);
            CREATE TABLE flights (flight_id INTEGER PRIMARY KEY, tail TEXT);
            INSERT INTO planes VALUES ('N1'); INSERT INTO flights VALUES (1, 'N1');
        """)  # fmt: skip
    meta = Metadata(joins=[Join.parse({"from": "flights.tail", "to": "planes.tailnum"})])
    with SQLiteSource(str(database)) as source:
        graph = extract_graph(source, ExtractOptions(data_checks=False))
        done = apply_overlay_joins(graph, meta, DataChecker(source, budget_seconds=0))
    # No time to measure: said, not silently assumed.
    assert done.added == 1 and graph.partial
    assert any("data checks skipped" in p.message for p in graph.problems)
