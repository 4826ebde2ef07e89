"""Build the demo warehouse in a Postgres database: deterministic rows from a fixed seed."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from importlib import resources
from typing import Any

import psycopg

SEED = 20261203
START = datetime(2024, 1, 1, tzinfo=UTC)
REGIONS = [
    (1, "North", "US"), (2, "South", "US"), (3, "East", "US"), (4, "West", "US"),
    (5, "Benelux", "NL"), (6, "Nordics", "SE"), (7, "Iberia", "ES"), (8, "Alps", "CH"),
]  # fmt: skip
CATEGORIES = ["books", "garden", "kitchen", "toys", "audio", "sports", "office"]
ORDER_STATUS = (["P", "A", "S", "C"], [1, 3, 5, 1])
# How many partial shipments a shipped order has: the fan-out of the opening example.
SHIPMENTS_PER_ORDER = ([1, 2, 3, 4], [1, 3, 3, 2])


@dataclass
class DemoSizes:
    customers: int = 5000
    products: int = 300
    orders: int = 40000
    reps: int = 40
    notes: int = 3000


@dataclass
class DemoRows:
    tables: dict[str, list[tuple[Any, ...]]] = field(default_factory=dict)


def _sql(name: str) -> str:
    return resources.files("schemawise.demo").joinpath(name).read_text()


def generate(sizes: DemoSizes | None = None, seed: int = SEED) -> DemoRows:
    """All rows of the demo warehouse; the same seed gives the same rows."""
    sizes = sizes or DemoSizes()
    rng = random.Random(seed)
    rows = DemoRows()
    t = rows.tables
    t["shop.regions"] = list(REGIONS)
    reps = []
    for rep_id in range(1, sizes.reps + 1):
        reps.append((rep_id, f"Rep {rep_id}", rng.randint(1, 8), date(2025, 1, 1)))
    t["shop.sales_reps"] = reps
    # Superseded versions of some reps: same rep_id, an older valid_from.
    t["shop.sales_reps_history"] = [
        (rep_id, f"Rep {rep_id} (old)", rng.randint(1, 8), date(2023, 6, 1))
        for rep_id in rng.sample(range(1, sizes.reps + 1), sizes.reps // 2)
    ]
    customers = []
    for cid in range(1, sizes.customers + 1):
        created = START + timedelta(days=rng.randint(0, 500), seconds=rng.randint(0, 86399))
        status = "churned" if rng.random() < 0.15 else "active"
        customers.append(
            (cid, f"Customer {cid}", f"customer{cid}@example.com", rng.randint(1, 8),
             rng.randint(1, sizes.reps), status, created)
        )  # fmt: skip
    t["shop.customers"] = customers
    products = []
    for pid in range(1, sizes.products + 1):
        status = "discontinued" if rng.random() < 0.1 else "live"
        products.append(
            (pid, f"SKU-{pid:05d}", f"Product {pid}", rng.choice(CATEGORIES),
             rng.randint(300, 20000), status)
        )  # fmt: skip
    t["shop.products"] = products
    orders: list[tuple[Any, ...]] = []
    items: list[tuple[Any, ...]] = []
    shipments: list[tuple[Any, ...]] = []
    refunds: list[tuple[Any, ...]] = []
    for oid in range(1, sizes.orders + 1):
        customer = rng.randint(1, sizes.customers)
        status = rng.choices(*ORDER_STATUS)[0]
        ordered = START + timedelta(days=rng.randint(0, 700), seconds=rng.randint(0, 86399))
        total = 0
        for _ in range(rng.randint(1, 5)):
            product = products[rng.randint(0, sizes.products - 1)]
            quantity = rng.randint(1, 4)
            amount = quantity * product[4]
            total += amount
            items.append((len(items) + 1, oid, product[0], quantity, product[4], amount))
        orders.append((oid, customer, status, total, ordered))
        if status == "S":
            parts = rng.choices(*SHIPMENTS_PER_ORDER)[0]
            share = total // parts
            for part in range(parts):
                recognized = share if part < parts - 1 else total - share * (parts - 1)
                shipments.append(
                    (len(shipments) + 1, oid, rng.randint(1, 8),
                     rng.choice(["delivered", "delivered", "in_transit", "returned"]),
                     ordered + timedelta(days=part + 1), recognized)
                )  # fmt: skip
        if status in ("A", "S") and rng.random() < 0.06:
            for _ in range(1 if rng.random() < 0.8 else 2):
                refunds.append(
                    (len(refunds) + 1, oid, rng.randint(100, max(101, total // 2)),
                     rng.choice(["approved", "approved", "requested", "rejected"]),
                     ordered + timedelta(days=rng.randint(2, 30)))
                )  # fmt: skip
    t["shop.orders"] = orders
    t["shop.order_items"] = items
    t["shop.shipments"] = shipments
    t["shop.refunds"] = refunds
    notes = []
    for nid in range(1, sizes.notes + 1):
        order = orders[rng.randint(0, len(orders) - 1)]
        notes.append(
            (nid, order[1], order[0] if rng.random() < 0.7 else None,
             products[rng.randint(0, sizes.products - 1)][1] if rng.random() < 0.5 else None,
             rng.choice(["ana", "bo", "chen", "dee"]), f"Call note {nid}",
             (order[4] + timedelta(days=rng.randint(0, 20))).date())
        )  # fmt: skip
    t["shop.legacy_crm_notes"] = notes
    return rows


def _copy(conn: psycopg.Connection[Any], table: str, rows: Iterable[Sequence[Any]]) -> None:
    schema, name = table.split(".")
    with conn.cursor() as cur, cur.copy(f'COPY "{schema}"."{name}" FROM STDIN') as copy:
        for row in rows:
            copy.write_row(row)


def build(
    url: str, sizes: DemoSizes | None = None, say: Callable[[str], None] | None = None
) -> DemoRows:
    """Create schema `shop` in the database at `url` (dropping an earlier one) and load it."""
    say = say or (lambda _: None)
    rows = generate(sizes)
    with psycopg.connect(url, autocommit=False) as conn:
        say("creating schema shop")
        conn.execute(_sql("schema.sql"))
        for table, table_rows in rows.tables.items():
            say(f"loading {table} ({len(table_rows):,} rows)")
            _copy(conn, table, table_rows)
        conn.commit()
        conn.autocommit = True
        conn.execute(_sql("schema_post.sql"))
    return rows


# The opening example: orders joined to order_items and to shipments, summed per order status.
FANOUT_SQL = """
SELECT o.status, SUM(oi.quantity) AS units
FROM shop.orders o
JOIN shop.order_items oi ON oi.order_id = o.order_id
JOIN shop.shipments s ON s.order_id = o.order_id
GROUP BY o.status
ORDER BY o.status
""".strip()

# The same question, pre-aggregated: items per order first, then joined to shipped orders.
FIXED_SQL = """
WITH units_per_order AS (
    SELECT order_id, SUM(quantity) AS units FROM shop.order_items GROUP BY order_id
)
SELECT o.status, SUM(u.units) AS units
FROM shop.orders o
JOIN units_per_order u ON u.order_id = o.order_id
WHERE EXISTS (SELECT 1 FROM shop.shipments s WHERE s.order_id = o.order_id)
GROUP BY o.status
ORDER BY o.status
""".strip()


def true_units_of_shipped_orders(rows: DemoRows) -> dict[str, int]:
    """The right answer, computed from the generated rows without SQL."""
    shipped = {s[1] for s in rows.tables["shop.shipments"]}
    status = {o[0]: o[2] for o in rows.tables["shop.orders"]}
    totals: dict[str, int] = {}
    for item in rows.tables["shop.order_items"]:
        if item[1] in shipped:
            totals[status[item[1]]] = totals.get(status[item[1]], 0) + item[3]
    return totals
