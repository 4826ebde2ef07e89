"""Table descriptions written by a model, for tables that have none.

A question asks in its own words ("tracks never purchased"); a table says `InvoiceLine`. The
words in between are the business's, and no list written here could hold them for every
warehouse. A language model knows them: given a table's name, columns, joins and a few values,
it says what one row is and what people call such rows ("purchase", "sale", "order line").
The description and its words join the table's card (cards.py), where lexical and semantic
search find them. They are marked as written by a model, and kept per table structure so that
`sync` asks again only for a table that changed. Nothing here runs SQL; the model sees the
schema and sample values the profile already read.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from schemawise.enrich.metadata import Metadata, TableMeta
from schemawise.graph.model import SchemaGraph, Table

# The example is of another domain on purpose: it shows the kind of words wanted (what a row
# stands for, and what happened when it was written: "sign-up"), not words to copy.
INSTRUCTIONS = """\
You help people find a database table in their own everyday words. Reply with one JSON \
object and nothing else: {"description": "one short sentence: what one row stands for in the \
real world", "synonyms": ["up to six everyday words or short phrases people use for these \
rows, for the things they record, or for what happened when a row was added"]}. Do not list \
the columns, and do not repeat the table's or the columns' names. Example, for a table \
Enrollment(student_id, course_id, term): {"description": "one student taking one course in \
one term", "synonyms": ["registration", "sign-up", "class taken", "course load", "attendance"]}"""

MAX_COLUMNS = 30  # a wide table's first columns are enough to say what a row is
MAX_SYNONYMS = 6
MARK = "described by a model"


def table_prompt(table: Table, graph: SchemaGraph, samples: dict[str, list[str]]) -> str:
    """What the model is told about one table: columns with types and a few values, joins."""
    lines = [f"Table: {table.name}"]
    if table.comment:
        lines.append(f"Comment: {table.comment}")
    lines.append("Columns:")
    for column in table.columns[:MAX_COLUMNS]:
        seen = samples.get(f"{table.name.lower()}.{column.name.lower()}", [])[:3]
        example = f" (e.g. {', '.join(seen)})" if seen else ""
        lines.append(f"- {column.name} {column.type}{example}")
    joins = [
        f"- {e.child_table}.{','.join(e.child_columns)} -> {e.parent_table}"
        for e in graph.edges
        if table.name in (e.child_table, e.parent_table)
    ]
    if joins:
        lines += ["Joins:", *joins[:10]]
    return "\n".join(lines)


def read_reply(text: str) -> TableMeta | None:
    """The description and synonyms of a reply, or None when it holds neither."""
    from schemawise.agent.draft import json_objects

    for found in json_objects(text):
        description = str(found.get("description") or "").strip()
        raw = found.get("synonyms") or []
        words = [str(w).strip() for w in raw if str(w).strip()] if isinstance(raw, list) else []
        if description or words:
            return TableMeta(
                description=f"{description} ({MARK})" if description else None,
                synonyms=words[:MAX_SYNONYMS],
            )
    return None


def structure_key(table: Table) -> str:
    """Changes when the table's name, columns or types change (then it is described again)."""
    text = json.dumps([table.name, [(c.name, c.type) for c in table.columns]])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# Replies are kept per table structure and per instructions: new instructions ask again.
INSTRUCTIONS_KEY = hashlib.sha256(INSTRUCTIONS.encode()).hexdigest()[:8]


# (one table's prompt) → the model's reply text, or None when there is none to be had (no
# model, or the call failed): the table is then left undescribed and asked about next time.
Describe = Callable[[str], str | None]


def with_model(llm: Any) -> Describe:
    """A Describe that asks the configured model (agent/llm.py), each table with a fresh
    budget; a call that fails leaves that table as it was (its earlier reply, if any), but a
    model that cannot be reached stops the run: an index "described" by nobody would pass
    for a described one."""
    from schemawise.errors import ModelCallError, ModelUnreachableError

    def describe(prompt: str) -> str | None:
        try:
            return str(llm.fresh().run("describe", INSTRUCTIONS, prompt))
        except ModelUnreachableError:
            raise
        except ModelCallError:
            return None

    return describe


def cached_only(prompt: str) -> str | None:
    """No model at hand (`sync` without one): only the descriptions already kept are used."""
    return None


def describe_tables(
    graph: SchemaGraph,
    meta: Metadata,
    samples: dict[str, list[str]],
    describe: Describe,
    cache: Path | None = None,
    say: Callable[[str], None] | None = None,
) -> dict[str, TableMeta]:
    """Table name → a model's description, for each table the metadata does not describe.
    Replies are kept in `cache` (JSON, by table structure and instructions) and reused. A
    reply kept under earlier instructions is asked again when a model is at hand, and used
    as it is when none is (`sync` without a model keeps what it had)."""
    say = say or (lambda _: None)
    kept: dict[str, Any] = json.loads(cache.read_text()) if cache and cache.exists() else {}
    out: dict[str, TableMeta] = {}
    todo = [t for t in graph.tables if not _described(meta, t.name)]
    for number, table in enumerate(todo, 1):
        structure = structure_key(table)
        key = f"{structure}:{INSTRUCTIONS_KEY}"
        if key not in kept:
            earlier = _earlier_reply(kept, structure)
            if describe is not cached_only:
                again = " (asked again: new instructions)" if earlier is not None else ""
                say(f"describing tables with the model: {number}/{len(todo)} {table.name}{again}")
            reply = describe(table_prompt(table, graph, samples))
            if reply is None:
                if earlier is not None:  # no model: the earlier reply beats none
                    key = earlier
                else:
                    continue
            else:
                kept[key] = reply
            if cache is not None:  # after every table: an interrupted run keeps what it paid for
                cache.parent.mkdir(parents=True, exist_ok=True)
                cache.write_text(json.dumps(kept, indent=1))
        found = read_reply(str(kept[key]))
        if found is not None:
            out[table.name] = found
    return out


def _earlier_reply(kept: dict[str, Any], structure: str) -> str | None:
    """The key of a reply kept for this table structure under other instructions (or from
    before replies were kept by instructions: the structure alone), if any."""
    # The latest such reply: kept replies are in the order they were written.
    return next(
        (k for k in reversed(kept) if k == structure or k.startswith(f"{structure}:")), None
    )


def _described(meta: Metadata, table: str) -> bool:
    table_meta = meta.table_meta(table)
    return table_meta is not None and bool(table_meta.description or table_meta.synonyms)
