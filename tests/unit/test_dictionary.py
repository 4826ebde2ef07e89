"""Column descriptions from Spider-style tables.json files and BIRD-style description CSVs."""

from __future__ import annotations

import json
from pathlib import Path

from schemawise.enrich.dictionary import from_description_csvs, from_tables_json


def test_tables_json_readable_names(tmp_path: Path) -> None:
    path = tmp_path / "tables.json"
    path.write_text(json.dumps([{
        "db_id": "shop",
        "table_names_original": ["Orders"],
        "column_names_original": [[-1, "*"], [0, "amt"], [0, "order_id"]],
        "column_names": [[-1, "*"], [0, "gross amount in cents"], [0, "order id"]],
    }]))  # fmt: skip
    assert from_tables_json(path, "shop") == {"orders.amt": "gross amount in cents"}
    assert from_tables_json(path, "other") == {}


def test_description_csvs(tmp_path: Path) -> None:
    folder = tmp_path / "database_description"
    folder.mkdir()
    (folder / "orders.csv").write_text(
        "original_column_name,column_name,column_description,data_format,value_description\n"
        "status,order status,state of the order,text,P = pending; S = shipped\n"
        "amt,,,integer,\n"
    )
    found = from_description_csvs(folder)
    assert found == {"orders.status": "order status; state of the order; P = pending; S = shipped"}
    assert from_description_csvs(tmp_path / "missing") == {}
