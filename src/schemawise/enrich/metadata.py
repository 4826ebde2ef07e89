"""Metadata from dbt projects and the overlay file, in one shape the index and the context
pack read: descriptions, synonyms, value meanings, deprecations, certifications, edges,
business definitions and rules, examples, jargon."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field, ValidationError

from schemawise.enrich.profile import ColumnProfile
from schemawise.enrich.usage import Usage
from schemawise.errors import SchemawiseError
from schemawise.validate.rules import Rule


class ColumnMeta(BaseModel):
    description: str | None = None
    synonyms: list[str] = Field(default_factory=list)
    values: dict[str, str] = Field(default_factory=dict)  # code → meaning
    accepted_values: list[str] = Field(default_factory=list)


class TableMeta(BaseModel):
    description: str | None = None
    synonyms: list[str] = Field(default_factory=list)
    certified: bool = False
    deprecated: str | None = None  # why, and what to use instead
    columns: dict[str, ColumnMeta] = Field(default_factory=dict)
    depends_on: list[str] = Field(default_factory=list)


class Relationship(BaseModel):
    child_table: str
    child_column: str
    parent_table: str
    parent_column: str


class Join(BaseModel):
    """A join the data team states (`joins:`) or denies (`not_joins:`) in the overlay: the
    child's columns → the parent's, one table each side."""

    child_table: str
    child_columns: list[str]
    parent_table: str
    parent_columns: list[str]

    @classmethod
    def parse(cls, entry: Any) -> Join:
        """`{from: flights.tailnum, to: planes.tailnum}`, or lists of `table.column` for a
        composite join; a table may be schema-qualified (`shop.orders.customer_id`)."""
        if not isinstance(entry, dict) or "from" not in entry or "to" not in entry:
            raise TypeError("a join needs `from` and `to`")
        child_table, child_columns = _columns_of(entry["from"])
        parent_table, parent_columns = _columns_of(entry["to"])
        if len(child_columns) != len(parent_columns):
            raise TypeError(f"a join's `from` and `to` differ in length: {entry}")
        return cls(
            child_table=child_table,
            child_columns=child_columns,
            parent_table=parent_table,
            parent_columns=parent_columns,
        )

    def describe(self) -> str:
        return (
            f"{self.child_table}.{', '.join(self.child_columns)} → "
            f"{self.parent_table}.{', '.join(self.parent_columns)}"
        )


def _listed(data: dict[str, Any], key: str) -> list[Any]:
    entries = data.get(key) or []
    if not isinstance(entries, list):
        raise TypeError(f"`{key}:` is a list of {{from: table.column, to: table.column}}")
    return entries


def _columns_of(value: Any) -> tuple[str, list[str]]:
    names = value if isinstance(value, list) else [value]
    if not names or not all(isinstance(n, str) for n in names):
        raise TypeError(f"write each column as table.column: {value}")
    split = [n.strip().rsplit(".", 1) for n in names]
    if any(len(parts) != 2 or not all(parts) for parts in split):
        raise TypeError(f"write each column as table.column: {value}")
    if len({column.lower() for _, column in split}) != len(split):
        raise TypeError(f"a column is named twice on one side of a join: {value}")
    tables = {table for table, _ in split}
    if len(tables) != 1:
        raise TypeError(f"a join's columns on one side are of one table: {value}")
    return split[0][0], [column for _, column in split]


class Definition(BaseModel):
    name: str
    text: str


class Example(BaseModel):
    question: str
    sql: str


class Metadata(BaseModel):
    """Keyed by table name as the source writes it (bare or schema-qualified)."""

    tables: dict[str, TableMeta] = Field(default_factory=dict)
    relationships: list[Relationship] = Field(default_factory=list)
    # From the overlay: joins the data team states, and joins it says are wrong.
    joins: list[Join] = Field(default_factory=list)
    not_joins: list[Join] = Field(default_factory=list)
    unique: list[tuple[str, str]] = Field(default_factory=list)
    definitions: list[Definition] = Field(default_factory=list)
    rules: list[Rule] = Field(default_factory=list)
    examples: list[Example] = Field(default_factory=list)
    jargon: dict[str, str] = Field(default_factory=dict)
    # From the query log (enrich/usage.py): use counts, co-used tables, logged examples.
    usage: Usage | None = None
    # From the data (enrich/profile.py): `table.column` (lower case) → its profile.
    profiles: dict[str, ColumnProfile] = Field(default_factory=dict)

    def merge(self, other: Metadata) -> Metadata:
        """`other` wins where both say something (the overlay is applied after dbt)."""
        merged = self.model_copy(deep=True)
        for name, table in other.tables.items():
            _merge_table(merged.tables.setdefault(name, TableMeta()), table)
        merged.relationships += other.relationships
        merged.joins += other.joins
        merged.not_joins += other.not_joins
        merged.unique += other.unique
        merged.definitions += other.definitions
        merged.rules += other.rules
        merged.examples += other.examples
        merged.jargon.update(other.jargon)
        merged.usage = other.usage or merged.usage
        merged.profiles.update(other.profiles)
        return merged

    def table_meta(self, graph_name: str) -> TableMeta | None:
        """Metadata for a graph table, by full name and by bare name: a dbt model says
        `orders`, the overlay `shop.orders`; what both say is merged, the full name's entry
        winning where both say something (its description over the model's, say)."""
        lowered = {k.lower(): v for k, v in self.tables.items()}
        full = lowered.get(graph_name.lower())
        bare = lowered.get(graph_name.rsplit(".", 1)[-1].lower())
        if full is None or bare is None or full is bare:
            return full or bare
        merged = bare.model_copy(deep=True)
        _merge_table(merged, full)
        return merged


def _merge_table(mine: TableMeta, other: TableMeta) -> None:
    """`other` into `mine`, `other` winning where both say something."""
    for field_name in ("description", "deprecated"):
        if getattr(other, field_name):
            setattr(mine, field_name, getattr(other, field_name))
    mine.synonyms = list(dict.fromkeys([*mine.synonyms, *other.synonyms]))
    mine.certified = mine.certified or other.certified
    mine.depends_on = list(dict.fromkeys([*mine.depends_on, *other.depends_on]))
    for column_name, column in other.columns.items():
        target = mine.columns.setdefault(column_name, ColumnMeta())
        if column.description:
            target.description = column.description
        target.synonyms = list(dict.fromkeys([*target.synonyms, *column.synonyms]))
        target.values.update(column.values)
        target.accepted_values = column.accepted_values or target.accepted_values


def _load_yaml(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise SchemawiseError(f"{path} is not valid YAML: {exc}", "Fix the file's syntax.") from exc


def _ref(value: str) -> str:
    """`ref('customers')` → customers."""
    value = value.strip()
    if value.startswith("ref(") and value.endswith(")"):
        return value[4:-1].strip().strip("'\"")
    return value


def from_dbt(project: Path) -> Metadata:
    """A dbt project folder (its models' YAML files), or a `manifest.json`. No dbt needed."""
    if project.is_file() and project.suffix == ".json":
        return _from_manifest(project)
    if not project.is_dir():
        raise SchemawiseError(f"No dbt project at {project}.", "Give the project folder.")
    meta = Metadata()
    for path in sorted(project.rglob("*.yml")) + sorted(project.rglob("*.yaml")):
        data = _load_yaml(path)
        # dbt_project.yml has a `models:` mapping of configs: only lists describe models.
        models = data.get("models") if isinstance(data, dict) else None
        for model in models if isinstance(models, list) else []:
            if isinstance(model, dict):
                _add_model(meta, model)
    return meta


def _add_model(meta: Metadata, model: dict[str, Any]) -> None:
    name = model.get("name")
    if not name:
        return
    model_meta = model.get("meta") or (model.get("config") or {}).get("meta") or {}
    table = meta.tables.setdefault(name, TableMeta())
    table.description = model.get("description") or table.description
    table.synonyms = list(model_meta.get("synonyms", []))
    table.certified = bool(model_meta.get("certified", False))
    if model.get("deprecation_date") or model_meta.get("deprecated"):
        replaced = model_meta.get("replaced_by")
        table.deprecated = "deprecated" + (f"; use {replaced}" if replaced else "")
    for column in model.get("columns", []) or []:
        cname = column.get("name")
        if not cname:
            continue
        cmeta = column.get("meta") or {}
        entry = table.columns.setdefault(cname, ColumnMeta())
        entry.description = column.get("description") or entry.description
        entry.synonyms = list(cmeta.get("synonyms", []))
        entry.values = {str(k): str(v) for k, v in (cmeta.get("values") or {}).items()}
        for test in column.get("tests") or column.get("data_tests") or []:
            if test == "unique":
                meta.unique.append((name, cname))
            elif isinstance(test, dict) and "accepted_values" in test:
                entry.accepted_values = [str(v) for v in test["accepted_values"].get("values", [])]
            elif isinstance(test, dict) and "relationships" in test:
                rel = test["relationships"]
                meta.relationships.append(
                    Relationship(child_table=name, child_column=cname,
                                 parent_table=_ref(str(rel.get("to", ""))),
                                 parent_column=str(rel.get("field", "")))
                )  # fmt: skip


def _from_manifest(path: Path) -> Metadata:
    import json

    manifest = json.loads(path.read_text())
    meta = Metadata()
    for node in (manifest.get("nodes") or {}).values():
        if node.get("resource_type") != "model":
            continue
        model = {
            "name": node.get("name"),
            "description": node.get("description"),
            "meta": (node.get("config") or {}).get("meta") or node.get("meta"),
            "deprecation_date": node.get("deprecation_date"),
            "columns": [
                {"name": c.get("name"), "description": c.get("description"), "meta": c.get("meta")}
                for c in (node.get("columns") or {}).values()
            ],
        }
        _add_model(meta, model)
        depends = (node.get("depends_on") or {}).get("nodes") or []
        meta.tables[node["name"]].depends_on = [d.rsplit(".", 1)[-1] for d in depends]
    return meta


def from_overlay(path: Path) -> Metadata:
    """The overlay file (`schemawise.yml`), documented in the README."""
    if not path.is_file():
        raise SchemawiseError(f"No overlay file at {path}.", "Give a schemawise.yml file.")
    data = _load_yaml(path)
    try:
        tables = {
            name: TableMeta(
                description=spec.get("description"),
                synonyms=spec.get("synonyms", []),
                certified=bool(spec.get("certified", False)),
                deprecated=spec.get("deprecated"),
                columns={
                    c: ColumnMeta(**(cs or {})) for c, cs in (spec.get("columns") or {}).items()
                },
            )
            for name, spec in (data.get("tables") or {}).items()
        }
        return Metadata(
            tables=tables,
            definitions=[Definition(**d) for d in data.get("definitions", [])],
            rules=[Rule(**r) for r in data.get("rules", [])],
            examples=[Example(**e) for e in data.get("examples", [])],
            jargon={str(k): str(v) for k, v in (data.get("jargon") or {}).items()},
            joins=[Join.parse(j) for j in _listed(data, "joins")],
            not_joins=[Join.parse(j) for j in _listed(data, "not_joins")],
        )
    except (ValidationError, TypeError, AttributeError) as exc:
        raise SchemawiseError(
            f"{path} is not a valid overlay: {str(exc).splitlines()[0]}",
            "See the overlay section of the README for its format.",
        ) from exc
