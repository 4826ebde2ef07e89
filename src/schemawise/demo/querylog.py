"""A realistic query log for the demo warehouse (JSONL: user, timestamp, sql)."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

USERS = ["ana@analytics", "bo@finance", "chen@growth", "dee@ops", "etl_service"]

# Each template is one habit of the warehouse's users; `{n}` and `{d}` are filled at random.
TEMPLATES = [
    "SELECT status, count(*) FROM shop.orders WHERE ordered_at >= DATE '2025-{m:02d}-01' GROUP BY status",
    "SELECT c.region_id, sum(o.amt) FROM shop.orders o JOIN shop.customers c ON c.customer_id = o.customer_id WHERE o.status IN ('A', 'S') GROUP BY c.region_id",
    "SELECT p.category, sum(oi.quantity) FROM shop.order_items oi JOIN shop.products p ON p.product_id = oi.product_id GROUP BY p.category",
    "SELECT r.name, sum(s.amount_recognized_cents) FROM shop.shipments s JOIN shop.regions r ON r.region_id = s.region_id GROUP BY r.name",
    "SELECT o.order_id, o.amt, sum(rf.amount_cents) FROM shop.orders o LEFT JOIN shop.refunds rf ON rf.order_id = o.order_id WHERE o.order_id = {n} GROUP BY o.order_id, o.amt",
    "SELECT n.body, c.name FROM shop.legacy_crm_notes n JOIN shop.customers c ON c.customer_id = n.cust_ref WHERE n.created >= DATE '2025-{m:02d}-01'",
    "SELECT n.author, count(*) FROM shop.legacy_crm_notes n JOIN shop.orders o ON o.order_id = n.order_id WHERE o.status = 'C' GROUP BY n.author",
    "SELECT p.name, count(*) FROM shop.legacy_crm_notes notes JOIN shop.products p ON notes.prod_sku = p.sku GROUP BY p.name ORDER BY 2 DESC LIMIT 10",
    "SELECT c.name, count(o.order_id) FROM shop.customers c LEFT JOIN shop.orders o ON o.customer_id = c.customer_id WHERE c.status = 'active' GROUP BY c.name ORDER BY 2 DESC LIMIT 20",
    "SELECT sr.name, count(*) FROM shop.customers c JOIN shop.sales_reps sr ON sr.rep_id = c.rep_id GROUP BY sr.name",
    "SELECT o.customer_id, sum(o.amt) FROM shop.orders o WHERE o.customer_id = {n} GROUP BY o.customer_id",
    "SELECT s.order_id, count(*) FROM shop.shipments s GROUP BY s.order_id HAVING count(*) > 1",
    "SELECT date_trunc('month', o.ordered_at), sum(oi.amount_cents) FROM shop.orders o JOIN shop.order_items oi ON oi.order_id = o.order_id WHERE o.status <> 'C' GROUP BY 1",
]


def generate(count: int = 300, seed: int = 7) -> list[dict[str, str]]:
    rng = random.Random(seed)
    start = datetime(2025, 9, 1, tzinfo=UTC)
    entries = []
    for i in range(count):
        template = TEMPLATES[rng.randrange(len(TEMPLATES))]
        sql = template.format(n=rng.randint(1, 5000), m=rng.randint(1, 12))
        when = start + timedelta(minutes=37 * i + rng.randint(0, 30))
        entries.append({"user": rng.choice(USERS), "timestamp": when.isoformat(), "sql": sql})
    return entries


def write(path: Path, count: int = 300) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        for entry in generate(count):
            handle.write(json.dumps(entry) + "\n")
    return path
