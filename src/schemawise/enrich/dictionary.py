"""Column descriptions from the files benchmark and team dictionaries come in:

- Spider's `tables.json` layout (BIRD's `dev_tables.json` too): `column_names` holds a
  readable name beside each `column_names_original`;
- BIRD's `database_description/<table>.csv`: `original_column_name, column_name,
  column_description, data_format, value_description`.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from schemawise.errors import SchemawiseError


def from_tables_json(path: Path, db_id: str) -> dict[str, str]:
    """`table.column` (lower case) → readable name, for one database of a tables.json file."""
    if not path.is_file():
        raise SchemawiseError(f"No tables file at {path}.", "Give a Spider-style tables.json.")
    entries = json.loads(path.read_text())
    for entry in entries:
        if entry.get("db_id") != db_id:
            continue
        tables = entry.get("table_names_original") or []
        out = {}
        for (t_index, original), (_, readable) in zip(
            entry.get("column_names_original", []), entry.get("column_names", []), strict=False
        ):
            if t_index < 0 or t_index >= len(tables):
                continue
            key = f"{tables[t_index]}.{original}".lower()
            if readable and readable.lower().replace(" ", "_") != original.lower():
                out[key] = readable
        return out
    return {}


def from_description_csvs(folder: Path) -> dict[str, str]:
    """`table.column` → description (with value meanings) from a BIRD-style folder."""
    out: dict[str, str] = {}
    if not folder.is_dir():
        return out
    for csv_path in sorted(folder.glob("*.csv")):
        table = csv_path.stem
        with csv_path.open(newline="", encoding="utf-8", errors="replace") as handle:
            for row in csv.DictReader(handle):
                name = (row.get("original_column_name") or "").strip()
                if not name:
                    continue
                parts = [
                    (row.get("column_name") or "").strip(),
                    (row.get("column_description") or "").strip(),
                    (row.get("value_description") or "").strip(),
                ]
                text = "; ".join(p for p in parts if p and p.lower() != name.lower())
                if text:
                    out[f"{table}.{name}".lower()] = text
    return out
