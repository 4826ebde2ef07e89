"""Names a question writes that the database lacks (retrieve/unknown_names.py)."""

from __future__ import annotations

import pytest

from schemawise.graph.model import Column, SchemaGraph, Table
from schemawise.retrieve.unknown_names import unknown_names

GRAPH = SchemaGraph(
    tables=[
        Table(name="crm.customers", columns=[Column(name="cust_id", type="int"),
                                             Column(name="segment", type="text"),
                                             Column(name="FirstName", type="text")]),
        Table(name="InvoiceLine", columns=[Column(name="UnitPrice", type="numeric")]),
        Table(name="order_status", columns=[Column(name="order_id", type="int"),
                                            Column(name="user_tags", type="text")]),
        Table(name="sales.orders", columns=[Column(name="ord_id", type="int"),
                                            Column(name="total_amt", type="numeric")]),
    ]
)  # fmt: skip


@pytest.mark.parametrize(
    ("question", "unknown"),
    [
        ("average score per tenant in the loyalty_points table", ["loyalty_points"]),
        ("how many rows are in crm.leads", ["crm.leads"]),
        ("order_statuses by user_tag", []),
        ("sales.orders.nope_col and order_status.user_tags", ["sales.orders.nope_col"]),
        # A name at the end of a sentence.
        ("how many rows are in loyalty_points.", ["loyalty_points"]),
        # Names the database has, written as the schema writes them or in the plural.
        ("sum of total_amt per segment", []),
        ("orders per sales.orders.total_amt", []),
        ("rows of the orders table and of the customer table", []),
        ("cust_id of crm.customers", []),
        # Prose is no name: a plain word, "e.g.", a number, the word before "table".
        ("top customers, e.g. by revenue over 2.5 million", []),
        ("show me the invoices table as a pivot table", []),
        # However the schema writes it: snake_case for CamelCase, plural for singular.
        ("the unit_price and the invoice_line total of each track", []),
        ("first_name of each crm.customer", []),
        ("all order_ids and cust_ids", []),
        ("customer.first_name and customers.segment", []),
        # Prose with dots is no name of a table: an address, a host.
        ("mail alice.smith@example.com about it", []),
    ],
)
def test_names_written_that_the_database_lacks(question: str, unknown: list[str]) -> None:
    assert unknown_names(question, GRAPH) == unknown
