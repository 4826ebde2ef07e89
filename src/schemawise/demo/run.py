"""`schemawise demo`: build the warehouse, extract its graph, and show the fan-out trap."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import psycopg
from rich.console import Console
from rich.text import Text

from schemawise.config import demo_dir
from schemawise.db.embedded import ensure_started
from schemawise.db.postgres import PostgresSource
from schemawise.demo import querylog, warehouse
from schemawise.graph.extract import ExtractOptions, extract_graph
from schemawise.graph.infer import read_query_log
from schemawise.graph.model import SchemaGraph
from schemawise.graph.paths import JoinPath, connecting_tree
from schemawise.graph.render import graph_tables, join_path_text


@dataclass
class DemoReport:
    url: str
    out_dir: Path
    rows: dict[str, int]
    build_seconds: float
    recruiting_seconds: float
    graph: SchemaGraph
    fanout_path: JoinPath
    naive_units: dict[str, int]
    fixed_units: dict[str, int]
    true_units: dict[str, int]
    files: dict[str, str] = field(default_factory=dict)
    caught: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "rows": self.rows,
            "build_seconds": round(self.build_seconds, 2),
            "recruiting_seconds": round(self.recruiting_seconds, 2),
            "files": self.files,
            "graph": self.graph.model_dump(),
            "fanout_example": {
                "path": self.fanout_path.model_dump(),
                "naive_sql": warehouse.FANOUT_SQL,
                "naive_units": self.naive_units,
                "fixed_sql": warehouse.FIXED_SQL,
                "fixed_units": self.fixed_units,
                "true_units": self.true_units,
                "check": self.caught,
            },
        }

    def render(self, console: Console) -> None:
        shop_seconds = self.build_seconds - self.recruiting_seconds
        console.print(
            f"Built schema [bold]shop[/] in {shop_seconds:.1f}s at {self.url}", highlight=False
        )
        if self.recruiting_seconds:
            console.print(
                f"Built schema [bold]recruiting[/] (200,000 assignments, for row search) in "
                f"{self.recruiting_seconds:.1f}s; `demo --no-recruiting` skips it",
                highlight=False,
            )
        console.print(graph_tables(self.graph))
        console.print(Text("\nThe opening example: orders + order_items + shipments", style="bold"))
        console.print(join_path_text(self.fanout_path))
        naive, fixed = self.naive_units.get("S", 0), self.fixed_units.get("S", 0)
        ratio = naive / fixed if fixed else float("nan")
        console.print(Text(warehouse.FANOUT_SQL, style="dim"))
        for problem in self.caught:
            console.print(
                f"[bold red]check: {problem['type']}[/] {problem['message']}", highlight=False
            )
            console.print(f"  hint: {problem['hint']}", highlight=False)
        console.print(
            f"naive SUM(quantity) for shipped orders: [bold red]{naive:,}[/]  "
            f"pre-aggregated: [bold green]{fixed:,}[/]  truth: {self.true_units.get('S', 0):,}  "
            f"→ the naive join is {ratio:.2f}× too high"
        )
        for name, location in self.files.items():
            console.print(f"{name}: {location}", highlight=False)
        if "recruiting labels" in self.files:
            console.print(
                "Row search: schemawise rows enable embedded recruiting.assignments "
                '--text "title,description" --tenant owner_id; schemawise rows backfill embedded',
                highlight=False,
            )


def _units(url: str, sql: str) -> dict[str, int]:
    with psycopg.connect(url) as conn:
        return {status: int(units) for status, units in conn.execute(sql).fetchall()}


def write_artefacts(target: Path) -> dict[str, str]:
    """The dbt project and the query log that ship with the demo."""
    dbt_target = target / "dbt"
    if dbt_target.exists():
        shutil.rmtree(dbt_target)
    source = resources.files("schemawise.demo").joinpath("dbt")
    (dbt_target / "models").mkdir(parents=True)
    (dbt_target / "dbt_project.yml").write_text(source.joinpath("dbt_project.yml").read_text())
    (dbt_target / "models" / "schema.yml").write_text(
        source.joinpath("models", "schema.yml").read_text()
    )
    log = querylog.write(target / "query_log.jsonl")
    overlay = target / "schemawise.yml"
    overlay.write_text(resources.files("schemawise.demo").joinpath("schemawise.yml").read_text())
    return {"dbt project": str(dbt_target), "query log": str(log), "overlay": str(overlay)}


def run_demo(
    out_dir: Path | None = None,
    say: Callable[[str], None] | None = None,
    *,
    recruiting: bool = True,
) -> DemoReport:
    say = say or (lambda _: None)
    say("starting the embedded PostgreSQL")
    url = ensure_started()
    started = time.perf_counter()
    rows = warehouse.build(url, say=say)
    target = out_dir or demo_dir()
    files = write_artefacts(target)
    recruiting_seconds = 0.0
    if recruiting:
        from schemawise.demo import recruiting as recruiting_demo

        say("building the recruiting schema: 200,000 rows (--no-recruiting skips it)")
        began = time.perf_counter()
        data = recruiting_demo.build(url, say=say)
        recruiting_seconds = time.perf_counter() - began
        labels = recruiting_demo.write_labels(data, target / "recruiting_labels.jsonl")
        files["recruiting labels"] = str(labels)
        rows.tables.update({k: v for k, v in data.tables.items()})
    build_seconds = time.perf_counter() - started
    with PostgresSource(url, schemas=["shop"]) as source:
        graph = extract_graph(
            source,
            ExtractOptions(query_log=read_query_log(Path(files["query log"]))),
            progress=say,
        )
    fanout = connecting_tree(graph, ["shop.orders", "shop.order_items", "shop.shipments"])
    from schemawise.validate.check import check_sql

    caught = check_sql(warehouse.FANOUT_SQL, graph, fanout="error")
    return DemoReport(
        url=url,
        out_dir=target,
        rows={name: len(r) for name, r in rows.tables.items()},
        build_seconds=build_seconds,
        recruiting_seconds=recruiting_seconds,
        graph=graph,
        fanout_path=fanout,
        naive_units=_units(url, warehouse.FANOUT_SQL),
        fixed_units=_units(url, warehouse.FIXED_SQL),
        true_units=warehouse.true_units_of_shipped_orders(rows),
        files=files,
        caught=[p.model_dump() for p in caught.errors],
    )
