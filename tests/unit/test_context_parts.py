"""Pure parts of the context engine: sharded families, profiles, query-log usage, column
pruning, structural ranking, the Spider 2.0 loader."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from schemawise.enrich.metadata import Metadata
from schemawise.enrich.profile import ColumnProfile, from_values
from schemawise.enrich.usage import usage_from_log
from schemawise.eval.spider2 import load_databases, load_questions
from schemawise.graph.families import collapse, family_pattern, group_families
from schemawise.graph.infer import QueryLogEntry
from schemawise.graph.model import Column, Edge, Evidence, SchemaGraph, Table
from schemawise.index.cards import documents
from schemawise.prune.columns import (
    PruneInput,
    _implied_columns,
    _label_columns,
    _written_out,
    has_time_phrase,
    prune,
)
from schemawise.rank.structural import (
    Candidate,
    PassedOver,
    RankSettings,
    apply_metadata,
    apply_schema_mentions,
    choose,
    wordless_floor,
)
from schemawise.retrieve.evidence import best_distinct, table_terms
from schemawise.retrieve.implied import implied_words, with_implied_words
from schemawise.retrieve.pack import SourceScore
from schemawise.retrieve.settings import RETRIEVAL, RetrievalSettings
from schemawise.retrieve.source_choice import (
    close_calls,
    columns_written,
    coverage,
    rank_sources,
    tables_named,
)
from schemawise.retrieve.words import (
    looks_like_identifier,
    question_words,
    with_compounds,
    with_split_identifiers,
    written_names,
)


def _table(name: str, *columns: str, pk: str | None = None) -> Table:
    return Table(
        name=name,
        columns=[Column(name=c, type="integer" if c.endswith("id") else "text") for c in columns],
        primary_key=[pk] if pk else [],
    )


@pytest.mark.parametrize(
    ("name", "pattern"),
    [
        ("ds.ga_sessions_20170701", "ds.ga_sessions_*"),
        ("cbsa_2018_1yr", "cbsa_*_*yr"),
        ("NOAA.GSOD.GSOD1999", "NOAA.GSOD.GSOD*"),
        ("orders", "orders"),
    ],
)
def test_family_pattern(name: str, pattern: str) -> None:
    assert family_pattern(name) == pattern


def test_shards_collapse_into_one_entry_and_keep_their_edges() -> None:
    shards = [_table(f"events_2023010{d}", "event_id", "user_id", "kind") for d in range(1, 4)]
    # Same digits pattern, different columns: not a shard of the family.
    other = _table("events_9", "payload", "checksum")
    users = _table("users", "user_id", "name", pk="user_id")
    edges = [
        Edge(child_table=s.name, child_columns=["user_id"], parent_table="users",
             parent_columns=["user_id"], evidence=Evidence())
        for s in shards
    ]  # fmt: skip
    graph = SchemaGraph(tables=[*shards, other, users], edges=edges)
    groups = group_families(graph.tables)
    assert [len(g) for g in groups] == [3, 1, 1]
    small = collapse(graph)
    family = small.table("events_*")
    assert family is not None and family.shards == [s.name for s in shards]
    assert [t.name for t in small.tables] == ["events_*", "events_9", "users"]
    # Three shard edges become one family edge.
    assert [(e.child_table, e.parent_table) for e in small.edges] == [("events_*", "users")]
    assert collapse(SchemaGraph(tables=[users])).tables == [users]


def test_a_family_card_describes_its_columns_from_its_shards() -> None:
    shards = [_table(f"noaa.gsod{year}", "stn", "temp", "wdsp") for year in (2019, 2020)]
    shards[1].columns[2].comment = "Mean wind speed for the day in knots"
    described = {"noaa.gsod2020.temp": "Mean temperature for the day"}
    docs = documents("s", SchemaGraph(tables=shards), descriptions=described)
    card = next(d for d in docs if d.kind == "table")
    assert card.table == "noaa.gsod*"
    assert "temp (Mean temperature for the day)" in card.text
    assert "wdsp (Mean wind speed for the day in knots)" in card.text
    column = next(d for d in docs if d.kind == "column" and d.column == "temp")
    assert "Mean temperature for the day" in column.text


def test_growing_schema_still_links_shard_to_shard() -> None:
    old = _table("sales_2019", "a", "b", "c")
    mid = _table("sales_2020", "a", "b", "c", "d", "e")
    new = _table("sales_2021", "c", "d", "e", "f", "g")  # shares little with 2019
    (family,) = [g for g in group_families([old, mid, new]) if len(g) > 1]
    assert [t.name for t in family] == ["sales_2019", "sales_2020", "sales_2021"]


@pytest.mark.parametrize(
    ("values", "total", "distinct", "enum"),
    [
        (["S", "A", "S", None, "P"] * 10, None, 3, ["A", "P", "S"]),
        ([str(i) for i in range(100)], None, 100, []),
        (["x", "y"], 2, 2, ["x", "y"]),  # the whole table: the list is complete
        (["x", "y"], None, 2, []),  # two rows of a bigger table prove nothing
        ([], None, 0, []),
    ],
)
def test_profile_from_values(
    values: list[str | None], total: int | None, distinct: int, enum: list[str]
) -> None:
    profile = from_values(values, total)
    assert profile.distinct == distinct
    assert profile.values == enum
    assert set(profile.samples) <= {v for v in values if v is not None}
    if enum == ["A", "P", "S"]:
        assert profile.samples == ["S", "A", "P"]  # most common first
        assert profile.null_fraction == 0.2


def _shop() -> SchemaGraph:
    return SchemaGraph(
        dialect="postgres",
        tables=[
            _table("shop.orders", "order_id", "status", "ordered_at", "customer_id", pk="order_id"),
            _table("shop.customers", "customer_id", "name", "region", "email", pk="customer_id"),
            _table("shop.refunds", "refund_id", "order_id", "amount", pk="refund_id"),
            _table("hr.staff", "staff_id", "name", "dept_id", pk="staff_id"),
            _table("hr.dept", "dept_id", "name", pk="dept_id"),
        ],
        edges=[
            Edge(child_table="shop.orders", child_columns=["customer_id"],
                 parent_table="shop.customers", parent_columns=["customer_id"]),
            Edge(child_table="shop.refunds", child_columns=["order_id"],
                 parent_table="shop.orders", parent_columns=["order_id"]),
            Edge(child_table="hr.staff", child_columns=["dept_id"],
                 parent_table="hr.dept", parent_columns=["dept_id"]),
        ],
    )  # fmt: skip


def test_usage_counts_tables_columns_pairs_and_examples() -> None:
    log = [
        QueryLogEntry("SELECT o.status FROM shop.orders o JOIN shop.customers c "
                      "ON o.customer_id = c.customer_id"),
        QueryLogEntry("SELECT count(*) FROM shop.orders WHERE status = 'S'"),
        QueryLogEntry("SELECT * FROM gone.table_that_was_dropped"),
        QueryLogEntry("SELEC nonsense"),
    ]  # fmt: skip
    usage = usage_from_log(log, _shop())
    assert usage.queries == 3 and usage.failed == 1
    assert usage.tables == {"shop.orders": 2, "shop.customers": 1}
    assert usage.column_count("shop.orders", "status") == 2
    assert usage.co_use_share("shop.customers", ["shop.orders"]) == 1.0
    assert usage.co_use_share("shop.orders", ["shop.customers"]) == 0.5
    assert usage.co_use_share("shop.refunds", ["shop.orders"]) == 0.0
    first = usage.examples_for(["shop.orders", "shop.customers"])[0]
    assert first.tables == ["shop.customers", "shop.orders"]


@pytest.mark.parametrize(
    ("question", "timely"),
    [("orders in 2023", True), ("latest orders", True), ("orders per region", False)],
)
def test_time_phrase(question: str, timely: bool) -> None:
    assert has_time_phrase(question) is timely


@pytest.mark.parametrize(
    ("text", "column", "written"),
    [
        ("rate = `Free Meal Count (K-12)` / Enrollment", "Free Meal Count (K-12)", True),
        ("cards whose convertedManaCost is 5", "convertedManaCost", True),
        ("cards whose convertedManaCost is 5", "ManaCost", False),
        ("the name of each shop", "name", True),
        ("the names of each shop", "name", False),
    ],
)
def test_a_column_written_out(text: str, column: str, written: bool) -> None:
    assert _written_out(text, column) is written


@pytest.mark.parametrize(
    ("columns", "labels"),
    [(("id", "player_name", "height"), ["player_name"]), (("id", "title", "year"), ["title"]),
     (("circuitId", "circuitRef", "name"), ["name"]), (("id", "amount"), []),
     (("id", "asciiName", "borderColor", "name"), ["name"]),  # the plain one first
     # A person's name parts go together: "Lewis Hamilton" spans both.
     (("driverId", "forename", "surname", "dob"), ["forename", "surname"]),
     (("id", "FirstName", "LastName", "Company"), ["FirstName", "LastName"]),
     (("id", "first_name", "middle_name", "last_name"), ["first_name", "last_name"]),
     # Only parts of a person's name pair up: a second name-like column stays out.
     (("id", "name", "nickname"), ["name"]), (("id", "team_long_name", "team_short_name"),
     ["team_long_name"])],
)  # fmt: skip
def test_the_columns_naming_a_tables_rows(columns: tuple[str, ...], labels: list[str]) -> None:
    assert _label_columns(_table("t", *columns)) == labels


@pytest.mark.parametrize(
    ("question", "implied"),
    [("Which circuits are in Italy?", ["country", "nationality"]),
     ("List the German drivers", ["country", "nationality"]),
     ("How much did client 617 pay in 1998?", ["amount"]),
     ("How many circuits are there?", [])],
)  # fmt: skip
def test_columns_a_question_implies(question: str, implied: list[str]) -> None:
    table = _table("t", "id", "name", "country", "nationality", "amount", "country_id")
    assert [c for c, _ in _implied_columns(table, question)] == implied


def test_prune_keeps_the_keys_of_every_join_among_the_chosen_tables() -> None:
    picks = prune(
        PruneInput(_shop(), ["shop.orders", "shop.customers"], question="anything", asked=set())
    )
    got = {(p.table, p.name): p.why for p in picks}
    # No path was given: the declared join still shows its keys on both sides.
    assert got[("shop.orders", "customer_id")] == "key"
    assert got[("shop.customers", "customer_id")] == "key"
    # `refunds` joins `orders` too, but it is not chosen: its key stays out.
    assert not [p for p in picks if p.table == "shop.refunds"]


def test_prune_tiers() -> None:
    graph = _shop()
    meta = Metadata(
        profiles={
            "shop.orders.status": ColumnProfile(values=["A", "P", "S"], samples=["S"]),
            "shop.customers.region": ColumnProfile(values=["north", "south"], samples=["north"]),
        }
    )
    picks = prune(
        PruneInput(
            graph,
            ["shop.orders", "shop.customers"],
            question="orders of customers in the north since 2023",
            asked={"order", "customer", "north", "2023"},
            retrieved={"shop.orders": ["status"]},
            join_keys={("shop.orders", "customer_id"), ("shop.customers", "customer_id")},
            meta=meta,
        )
    )
    got = {(p.table, p.name): (p.tier, p.why) for p in picks}
    assert got[("shop.orders", "status")] == (1, "retrieved")
    assert got[("shop.customers", "region")] == (1, "holds a value the question names")
    assert got[("shop.orders", "ordered_at")] == (1, "time column for a time phrase")
    assert got[("shop.orders", "customer_id")][0] == 1  # shares "customer" with the question
    assert got[("shop.orders", "order_id")] == (1, "shares words with the question")
    # The column naming a customer is shown, as answers name things; nothing else unasked is.
    assert got[("shop.customers", "name")] == (2, "names the rows")
    assert ("shop.customers", "email") not in got
    tiers = [p.tier for p in picks if p.table == "shop.orders"]
    assert tiers == sorted(tiers)


def test_choose_prefers_joinable_and_penalises_deprecated() -> None:
    graph = _shop()
    candidates = [
        Candidate("shop.orders", 1.0, {"order"}),
        Candidate("hr.staff", 0.62, {"name"}),
        Candidate("shop.customers", 0.6, {"customer"}),
        Candidate("shop.refunds", 0.9, {"refund"}),
    ]
    meta = Metadata.model_validate({"tables": {"shop.refunds": {"deprecated": "use returns"}}})
    apply_metadata(candidates, meta)
    assert candidates[3].score == pytest.approx(0.45)
    picked = choose(candidates, graph, RankSettings(max_tables=3))
    # customers (0.6 × 1.15) overtakes staff (0.62, joined to another part of the graph: × 0.7),
    # and so does the deprecated refunds table (0.45 × 1.15).
    assert [c.table for c in picked] == ["shop.orders", "shop.customers", "shop.refunds"]
    assert "joins a chosen table" in picked[1].reasons
    assert [c.table for c in choose(candidates, graph, RankSettings(relative_cutoff=0.95))] == [
        "shop.orders"
    ]


def test_choose_passes_over_a_copy_of_a_chosen_table_in_another_schema() -> None:
    graph = SchemaGraph(tables=[_table(n, "country", "debt") for n in ("wdi.country_summary",
                        "debt.country_summary", "debt.indicators")])  # fmt: skip
    candidates = [
        Candidate("wdi.country_summary", 1.0, {"country"}),
        Candidate("debt.country_summary", 0.95, {"country", "summary"}),
        Candidate("debt.indicators", 0.7, {"debt"}),
    ]
    picked = choose(candidates, graph, RankSettings(max_tables=2))
    assert [c.table for c in picked] == ["wdi.country_summary", "debt.indicators"]


def _documents_db() -> tuple[SchemaGraph, list[Candidate]]:
    graph = SchemaGraph(
        tables=[
            _table("documents", "document_id", "template_id", pk="document_id"),
            _table("templates", "template_id", "version", pk="template_id"),
        ],
        edges=[Edge(child_table="documents", child_columns=["template_id"],
                    parent_table="templates", parent_columns=["template_id"],
                    source="foreign_key")],
    )  # fmt: skip
    # `templates` matches no question word: only meaning and path documents put it here.
    return graph, [Candidate("documents", 0.11, {"document"}), Candidate("templates", 0.074)]


@pytest.mark.parametrize(("words", "kept"), [(1, 1), (3, 1), (12, 2), (None, 2)])
def test_a_short_question_keeps_no_table_matching_none_of_its_words(
    words: int | None, kept: int
) -> None:
    graph, candidates = _documents_db()
    settings = RankSettings(question_words=words)
    assert len(choose(candidates, graph, settings)) == kept


def test_the_wordless_floor_falls_with_length_to_a_minimum() -> None:
    assert wordless_floor(RankSettings(question_words=1)) == pytest.approx(0.74)
    assert wordless_floor(RankSettings(question_words=5)) == pytest.approx(0.5)
    assert wordless_floor(RankSettings(question_words=20)) == pytest.approx(0.4)
    assert wordless_floor(RankSettings(question_words=20, relative_cutoff=0.5)) == 0.5
    # Without the question (a caller ranking on its own), the cutoff alone decides.
    assert wordless_floor(RankSettings()) == RankSettings().relative_cutoff


@pytest.mark.parametrize(
    ("settings", "causes"),
    [
        # The cap: customers would pass the cut, but two tables are all the pack may hold.
        (RankSettings(max_tables=2), {"shop.customers": "full", "hr.staff": "full"}),
        # The cut: staff, joined elsewhere (× 0.7), comes to 0.52 of the first, under 0.6.
        (RankSettings(max_tables=6, relative_cutoff=0.6), {"hr.staff": "cut"}),
        # Only the best table weighed, and nothing else.
        (
            RankSettings(pool=0),
            {t: "unweighed" for t in ("shop.refunds", "shop.customers", "hr.staff")},
        ),
    ],
)
def test_choose_says_why_it_left_each_candidate_out(
    settings: RankSettings, causes: dict[str, str]
) -> None:
    candidates = [
        Candidate("shop.orders", 1.0, {"order"}),
        Candidate("hr.staff", 0.62, {"name"}),
        Candidate("shop.customers", 0.6, {"customer"}),
        Candidate("shop.refunds", 0.9, {"refund"}),
    ]
    left: list[PassedOver] = []
    picked = choose(candidates, _shop(), settings, passed_over=left)
    assert {p.candidate.table: p.cause for p in left} == causes
    # Every candidate is either chosen or passed over, once.
    assert sorted([c.table for c in picked] + [p.candidate.table for p in left]) == sorted(
        c.table for c in candidates
    )
    # Best first, each share against the first table's score, said in words too.
    shares = [p.share for p in left if p.cause != "unweighed"]
    assert shares == sorted(shares, reverse=True)
    assert all(f"{p.share:.2f}" in p.why or p.cause in ("full", "unweighed") for p in left)


def test_a_full_pack_does_not_hide_a_table_under_the_cut() -> None:
    graph = SchemaGraph(tables=[_table(n, "id") for n in ("a", "b", "c")])
    candidates = [
        Candidate("a", 1.0, {"x"}),
        Candidate("b", 0.9, {"y"}),
        Candidate("c", 0.05, {"z"}),
    ]
    left: list[PassedOver] = []
    choose(candidates, graph, RankSettings(max_tables=2), passed_over=left)
    # c would not have been chosen with room to spare: it fails the cut, whatever the cap.
    assert [(p.candidate.table, p.cause) for p in left] == [("c", "cut")]
    candidates.append(Candidate("d", 0.8, {"w"}))
    left.clear()
    choose(candidates, graph, RankSettings(max_tables=2), passed_over=left)
    assert {p.candidate.table: p.cause for p in left} == {"d": "full", "c": "cut"}
    # Its share is the adjusted one the bars compared (a new word: × 1.2), said in words too.
    assert f"{left[0].share:.2f}" in left[0].why and "(2)" in left[0].why


def test_a_table_matching_no_word_is_passed_over_as_wordless() -> None:
    graph, candidates = _documents_db()
    left: list[PassedOver] = []
    choose(candidates, graph, RankSettings(question_words=1), passed_over=left)
    ((passed, cause),) = [(p.candidate.table, p.cause) for p in left]
    assert (passed, cause) == ("templates", "wordless")
    assert "matches no word of the question" in left[0].why


def test_a_table_adding_a_question_word_goes_before_one_repeating_them() -> None:
    graph = SchemaGraph(tables=[_table(n, "id") for n in ("gsod", "icoads", "stations")])
    candidates = [
        Candidate("gsod", 1.0, {"temperature"}),
        Candidate("icoads", 0.7, {"temperature"}),  # × 0.8: nothing new
        Candidate("stations", 0.5, {"station"}),  # × 1.2: one new word
    ]
    picked = choose(candidates, graph, RankSettings(max_tables=2))
    assert [c.table for c in picked] == ["gsod", "stations"]


def test_a_table_matching_a_word_is_kept_however_short_the_question() -> None:
    graph, candidates = _documents_db()
    candidates[1].terms = {"template"}
    assert len(choose(candidates, graph, RankSettings(question_words=1))) == 2


def test_terms_match_inflected_question_words() -> None:
    graph = SchemaGraph(tables=[_table("likes", "student_id", "liked_id")])
    asked = question_words("high schoolers who have friends and are liked")
    assert table_terms(graph, None, "likes", asked, []) == {"liked"}
    assert table_terms(graph, None, "likes", question_words("friends who rated"), []) == set()


@pytest.mark.parametrize(
    ("question", "terms"),
    [
        ("tracks never purchased", {"purchased"}),  # a synonym's word, inflected
        ("which sales lines are largest", {"sale", "line"}),  # question words are singular
        ("tracks never played", set()),  # nothing the table is called
        ("purchases per customer", {"purchase"}),  # "customer" names another table
    ],
)
def test_the_names_metadata_gives_a_table_are_its_words(question: str, terms: set[str]) -> None:
    graph = SchemaGraph(tables=[_table("InvoiceLine", "InvoiceLineId", "TrackId"),
                                _table("Customer", "CustomerId")])  # fmt: skip
    meta = Metadata.model_validate(
        {"tables": {"InvoiceLine": {"synonyms": ["purchase line", "sale", "customer purchase"]}}}
    )
    assert table_terms(graph, meta, "InvoiceLine", question_words(question), []) == terms
    assert table_terms(graph, None, "InvoiceLine", question_words(question), []) <= {"line"}


@pytest.mark.parametrize(
    ("schemas", "asked", "order", "unlifted"),
    [
        # "crypto" is in every schema: it names none of them; "bitcoin" names the whole of
        # `crypto_bitcoin` and half of `crypto_bitcoin_cash`.
        (["crypto_dash", "crypto_bitcoin", "crypto_bitcoin_cash"], {"bitcoin", "input", "crypto"},
         ["crypto_bitcoin", "crypto_bitcoin_cash"], {"crypto_dash"}),
        # Each schema has every word of its own named, but "classic" says which one is meant.
        (["crypto_ethereum", "crypto_ethereum_classic", "crypto_bitcoin"],
         {"ethereum", "classic", "input"}, ["crypto_ethereum_classic"],
         {"crypto_ethereum", "crypto_bitcoin"}),
    ],
)  # fmt: skip
def test_a_schema_the_question_names_lifts_its_tables(
    schemas: list[str], asked: set[str], order: list[str], unlifted: set[str]
) -> None:
    candidates = [Candidate(f"crypto.{schema}.inputs", 1.0) for schema in schemas]
    apply_schema_mentions(candidates, asked)
    scores = {c.table.split(".")[1]: c.score for c in candidates}
    lifted = [scores[schema] for schema in order]
    assert lifted == sorted(lifted, reverse=True) and len(set(lifted)) == len(lifted)
    assert min(lifted) > 1.0
    assert all(scores[schema] == 1.0 for schema in unlifted)
    for candidate in candidates:
        named = any(r.startswith("its schema is named") for r in candidate.reasons)
        assert named == (candidate.table.split(".")[1] in order)


def test_one_schema_gains_nothing() -> None:
    candidates = [Candidate("sales.orders", 1.0), Candidate("sales.items", 0.5)]
    apply_schema_mentions(candidates, {"sale", "order"})
    assert [c.score for c in candidates] == [1.0, 0.5]


def test_spider2_loader(tmp_path: Path) -> None:
    tables = [
        {"name": f"p.ds.ga_sessions_2017070{d}", "columns": [
            {"name": "visitId", "type": "INT64", "description": "visit"},
            {"name": "channel", "type": "STRING", "description": None}],
         "sample_rows": [{"visitId": 1, "channel": "Organic Search"}]}
        for d in (1, 2)
    ]  # fmt: skip
    notes = {"name": "p.ds.notes", "table_description": "Notes."}
    db = {"db_id": "ga", "engine": "bigquery", "tables": tables,
          "tables_without_column_info": [notes]}  # fmt: skip
    with gzip.open(tmp_path / "databases.jsonl.gz", "wt") as handle:
        handle.write(json.dumps(db) + "\n")
    question = {"instance_id": "q1", "db_id": "ga", "question": "visits in July?",
                "external_knowledge": None, "gold_tables": [t["name"] for t in tables]}  # fmt: skip
    (tmp_path / "questions.jsonl").write_text(json.dumps(question) + "\n")
    loaded = load_databases(tmp_path)["ga"]
    assert [t.name for t in loaded.graph.tables] == ["p.ds.ga_sessions_*", "p.ds.notes"]
    assert loaded.graph.dialect == "bigquery" and len(loaded.tables) == 3
    assert loaded.samples["p.ds.ga_sessions_20170701.channel"] == ["Organic Search"]
    assert loaded.about["p.ds.notes"] == "Notes."
    (q,) = load_questions(tmp_path)
    assert q.gold_tables == frozenset(t["name"] for t in tables) and q.knowledge == ""


def test_path_example_and_glossary_documents() -> None:
    from schemawise.index.cards import example_documents, glossary_documents, path_documents

    graph = _shop()
    paths = path_documents("s", graph)
    assert [d.table for d in paths] == [
        "shop.orders|shop.customers",
        "shop.refunds|shop.orders",
        "hr.staff|hr.dept",
        "shop.customers|shop.orders|shop.refunds",  # two joins apart, through orders
    ]
    assert "orders.customer_id = customers.customer_id" in paths[0].text
    assert paths[3].text == (
        "customers and refunds are joined through orders: orders.customer_id = "
        "customers.customer_id; refunds.order_id = orders.order_id."
    )
    assert "repeats them per orders row" in paths[0].text  # the aggregation warning
    examples = example_documents("s", [("refunds per order", "SELECT …", ["shop.refunds"]),
                                       ("no tables", "SELECT 1", [])])  # fmt: skip
    assert [d.table for d in examples] == ["shop.refunds"]
    glossary = glossary_documents(
        "s", graph, [("net revenue", "SUM(shop.orders.amt) minus refunds.amount"), ("x", "y")]
    )
    assert [d.table for d in glossary] == ["shop.orders|shop.refunds"]


def test_look_alike_tables_with_different_references_are_not_shards() -> None:
    first = _table("customer_1", "id", "attr_1", "attr_2", "attr_3", "order_3_id")
    second = _table("customer_2", "id", "attr_1", "attr_2", "attr_3", "product_5_id")
    assert [len(g) for g in group_families([first, second])] == [1, 1]


def test_current_table_joins_its_numbered_versions() -> None:
    tables = [_table(n, "activity_id", "value", "units") for n in ("activities", "activities_23",
              "activities_24")]  # fmt: skip
    (group,) = group_families(tables)
    assert [t.name for t in group] == ["activities", "activities_23", "activities_24"]


def test_value_partitions_collapse_when_several_and_alike() -> None:
    states = [_table(f"geo.census_tracts_{s}", "geo_id", "tract_ce", "area")
              for s in ("alabama", "alaska", "ohio")]  # fmt: skip
    pair = [_table(f"geo.zip_{s}", "zip", "area") for s in ("east", "west")]  # only two
    unlike = [_table("geo.store_sales", "sale_id", "amount"), _table("geo.store_staff", "name"),
              _table("geo.store_hours", "opens", "closes")]  # fmt: skip
    graph = collapse(SchemaGraph(tables=[*states, *pair, *unlike]))
    assert graph.tables[0].name == "geo.census_tracts_*"
    assert len(graph.tables) == 1 + 2 + 3


def test_values_of_several_words_join_their_partition() -> None:
    names = ("alabama", "ohio", "utah", "new_york", "new_jersey", "new_mexico", "north_dakota")
    states = [_table(f"geo.census_tracts_{s}", "geo_id", "tract_ce", "area") for s in names]
    other = _table("geo.census_tracts_summary", "total", "year")  # other columns: stays apart
    graph = collapse(SchemaGraph(tables=[*states, other]))
    assert [t.name for t in graph.tables] == ["geo.census_tracts_*", "geo.census_tracts_summary"]
    assert len(graph.tables[0].shards) == len(names)


def test_column_hits_repeating_a_matched_word_count_less() -> None:
    asked = {"wind", "temperature"}
    winds = [("reunion_wind", 0.3), ("tokyo_wind", 0.3), ("usa_wind", 0.3)]
    assert best_distinct(winds, asked) == pytest.approx(0.3 * (1 + 2 * RETRIEVAL.repeated_column))
    varied = [("wind", 0.3), ("temperature", 0.3), ("stn", 0.3)]
    assert best_distinct(varied, asked) == pytest.approx(0.9)
    # A column's values document after its column document is a repeat too.
    assert best_distinct([("stn", 0.3), ("stn", 0.2)], asked) == pytest.approx(
        0.3 + 0.2 * RETRIEVAL.repeated_column
    )


def test_compounds_join_adjacent_words() -> None:
    words = with_compounds("Count the grades of high school students").split()
    assert "highschool" in words and "grades" in words and "students" in words
    assert "count" not in words and "the" not in words


def test_database_vocabulary_leaves_out_numbers_and_inflected_asking_words() -> None:
    words = with_compounds("the transcript which shows at least 4 results between 5000 and 10000")
    assert "transcript" in words.split() and "results" in words.split()
    assert not {"shows", "4", "5000", "10000"} & set(words.split())
    assert with_compounds("What is the average weight for each year?").split() == [
        "weight", "year", "weightyear"
    ]  # fmt: skip


def test_coverage_weights_rare_words_over_common_ones() -> None:
    found = {"music": {"singer", "citizenship"}, "concerts": {"singer"}}
    covered = coverage(found, in_scope=2)
    assert covered["music"] == pytest.approx(1.0)
    # "singer" is in both sources, so it weighs less than "citizenship", found in one.
    assert 0.0 < covered["concerts"] < 0.5


def test_coverage_can_overturn_more_hits() -> None:
    by_source = {"concerts": [0.016, 0.015, 0.014], "music": [0.013, 0.012]}
    scores = {("concerts", "singer"): 0.12, ("music", "singer"): 0.10}
    assert choose_source(by_source, scores) == "concerts"
    covered = coverage({"music": {"singer", "citizenship"}, "concerts": {"singer"}}, 2)
    assert choose_source(by_source, scores, covered) == "music"


def test_tables_named_counts_distinct_names_the_question_holds() -> None:
    graph = SchemaGraph(tables=[_table("singer", "name"), _table("song", "title")])
    other = SchemaGraph(tables=[_table("singer", "song_name"), _table("concert", "year")])
    asked = question_words("names of singers that have more than one song")
    assert tables_named(graph, asked) == 2
    assert tables_named(other, asked) == 1


def test_a_database_naming_more_tables_breaks_a_near_tie() -> None:
    by_source = {"concerts": [0.0645, 0.06], "music": [0.0635, 0.06]}
    scores = {("concerts", "singer"): 0.25, ("music", "singer"): 0.234}
    assert choose_source(by_source, scores) == "concerts"
    assert choose_source(by_source, scores, None, {"concerts": 1, "music": 2}) == "music"


def test_profile_keeps_wordlike_values_for_the_value_index() -> None:
    names = [f"Country {i}" for i in range(60)] + ["1999-01-02", "42", None]
    profile = from_values(names)
    assert profile.values == []  # too many for an enum
    assert "Country 0" in profile.seen and "42" not in profile.seen
    assert "1999-01-02" not in profile.seen
    assert from_values(["S", "A"] * 10).seen == []  # an enum lists its values already


def test_a_jsonl_log_line_may_say_how_often_it_ran(tmp_path: Path) -> None:
    from schemawise.graph.infer import read_query_log

    log = tmp_path / "log.jsonl"
    log.write_text('{"sql": "SELECT 1", "calls": 12}\n{"sql": "SELECT 2", "calls": "x"}\n')
    assert [e.calls for e in read_query_log(log)] == [12, 1]


@pytest.mark.parametrize(
    ("text", "implied"),
    [
        ("the money rank of the tallest poker player", ["height"]),
        ("models weighing more than 3500", ["weight"]),
        ("the cheapest product", ["price", "cost"]),
        ("names of European countries", ["europe"]),
        ("drivers from the USA", ["american"]),
        ("Japanese constructors", ["japan"]),
        ("How is the math course described?", ["description"]),
        ("customers who subscribed last year", ["subscription"]),
        ("members of the tribe", []),
        ("the height of the tallest player", []),  # already written
        ("how many singers are there", []),
    ],
)
def test_words_a_question_implies(text: str, implied: list[str]) -> None:
    assert implied_words(text) == implied


def test_implied_words_are_appended_not_substituted() -> None:
    assert with_implied_words("the oldest dog") == "the oldest dog age"
    assert with_implied_words("every dog") == "every dog"


def test_an_implied_measure_keeps_its_column() -> None:
    graph = SchemaGraph(
        source="t", dialect="sqlite", tables=[_table("people", "people_id", "name", "height")]
    )
    text = "the tallest person"
    asked = question_words(with_implied_words(text))
    picks = prune(PruneInput(graph, ["people"], text, asked))
    assert ("people", "height", 1) in {(p.table, p.name, p.tier) for p in picks}


@pytest.mark.parametrize(
    ("word", "identifier"),
    [("first_name", True), ("convertedManaCost", True), ("A11", True), ("county", False),
     ("Harlan", False), ("_private", False)],
)  # fmt: skip
def test_words_that_read_as_identifiers(word: str, identifier: bool) -> None:
    assert looks_like_identifier(word) is identifier


def test_columns_written_out_name_the_databases_having_them() -> None:
    club = SchemaGraph(tables=[_table("member", "first_name", "last_name", "county")])
    schools = SchemaGraph(tables=[_table("schools", "AdmFName1", "County", "url")])
    graphs = {"club": club, "schools": schools}
    question = "Tell the hometown county for Adela"
    # A prose word of the question is not taken for a column name…
    assert columns_written(graphs, None, written_names(question, "")) == {}
    # …but the evidence says what words mean in the schema, and identifiers are identifiers.
    evidence = "full name refers to first_name; county"
    written = columns_written(graphs, None, written_names(question, evidence))
    assert written == {"club": {"first_name", "county"}, "schools": {"county"}}
    spelled = written_names(question, "county")
    assert columns_written(graphs, ["schools"], spelled) == {"schools": {"county"}}


def test_a_database_with_the_written_out_columns_wins_a_near_tie() -> None:
    by_source = {"club": [0.0635, 0.06], "schools": [0.0645, 0.06]}
    scores = {("club", "member"): 0.234, ("schools", "schools"): 0.25}
    assert choose_source(by_source, scores) == "schools"
    written = coverage({"club": {"first_name", "county"}, "schools": {"county"}}, 2)
    assert choose_source(by_source, scores, None, None, written) == "club"


def test_camel_case_identifiers_add_their_words() -> None:
    assert with_split_identifiers("disqualified refers to statusID = 2") == (
        "disqualified refers to statusID = 2 status id"
    )
    assert with_split_identifiers("no identifiers here") == "no identifiers here"


@pytest.mark.parametrize(
    ("question", "evidence", "written"),
    [
        # Prose is not a column name, whatever column shares its spelling.
        ("records with missing or invalid values by date", "", set()),
        ("the first_name of statusID 2", "", {"first_name", "statusid"}),
        # The evidence is there to name columns: all of its words count.
        (
            "schools that are virtual",
            "virtual refers to Virtual = 'F'",
            {"virtual", "refers"},
        ),
    ],
)
def test_names_written_out(question: str, evidence: str, written: set[str]) -> None:
    assert written_names(f"{question} {evidence}", evidence) == written


def choose_source(*args: object) -> str:
    """The database chosen: the first of the ranking."""
    return rank_sources(*args)[0][0]  # type: ignore[arg-type]


def test_the_ranking_says_how_close_the_runners_up_are() -> None:
    # A near tie: the pack names the runner-up with a vote close to 1, so a caller can ask.
    by_source = {"concerts": [0.0645, 0.06], "music": [0.0635, 0.06], "cars": [0.02]}
    scores = {("concerts", "singer"): 0.25, ("music", "singer"): 0.234, ("cars", "car"): 0.05}
    ranking = rank_sources(by_source, scores)
    assert [s for s, _ in ranking] == ["concerts", "music", "cars"]
    assert ranking[0][1] == 1.0 and 0.95 < ranking[1][1] < 1.0 and ranking[2][1] < 0.5


def test_a_schema_whose_lexicon_is_nearer_the_unknown_words_wins_a_close_vote() -> None:
    from dataclasses import replace

    from schemawise.retrieve.settings import RETRIEVAL

    by_source = {"concerts": [0.06], "music": [0.0605]}
    scores = {("concerts", "singer"): 0.2, ("music", "artist"): 0.2}
    near = {"concerts": 0.5, "music": 0.1}
    assert choose_source(by_source, scores) == "music"
    assert choose_source(by_source, scores, None, None, None, near) == "concerts"
    # Off (weight 0, as without `lexicon`), the nearness changes nothing.
    off = replace(RETRIEVAL, lexicon_vote=0.0)
    assert rank_sources(by_source, scores, None, None, None, near, tuning=off)[0][0] == "music"


def test_a_database_whose_table_card_reads_nearer_the_question_wins_a_close_vote() -> None:
    from dataclasses import replace

    from schemawise.retrieve.settings import RETRIEVAL

    # "How many crushes are recorded for each pupil id?": nothing of either database is
    # named, the search's votes are nearly even, and the word reader puts the question nearer
    # network's `likes: student id, liked id` than any card of orchestra's.
    by_source = {"orchestra": [0.0605], "network": [0.06]}
    scores = {("orchestra", "performance"): 0.2, ("network", "likes"): 0.2}
    cards = {"orchestra": 0.21, "network": 0.38}
    assert choose_source(by_source, scores) == "orchestra"
    assert choose_source(by_source, scores, None, None, None, None, cards) == "network"
    off = replace(RETRIEVAL, card_vote=0.0)
    assert rank_sources(by_source, scores, cards=cards, tuning=off)[0][0] == "orchestra"


def test_a_card_read_as_unrelated_does_not_lower_a_vote() -> None:
    by_source = {"a": [0.06], "b": [0.0605]}
    scores = {("a", "x"): 0.2, ("b", "y"): 0.2}
    # Every cosine at or under 0: no card reads near, so the vote is the search's alone.
    cards = {"a": 0.0, "b": -0.3}
    assert rank_sources(by_source, scores, cards=cards) == rank_sources(by_source, scores)


def test_a_cap_on_shared_documents_keeps_a_hub_from_outweighing_a_matched_card() -> None:
    from schemawise.index.store import Hit
    from schemawise.retrieve.evidence import table_evidence
    from schemawise.retrieve.settings import ContextSettings

    graph = SchemaGraph(tables=[_table("track", "name"), _table("invoice_line", "price")])
    # One strong card for invoice_line; a dozen join-path documents that all name track.
    hits = [Hit("c", "s", "table", "invoice_line", None, 0.03, 0.3)]
    hits += [Hit(f"p{i}", "s", "path", f"track|t{i}", None, 0.015, 0.5) for i in range(12)]
    uncapped = table_evidence(hits, {"s": graph}, None, set(), set(), ContextSettings())
    capped = table_evidence(hits, {"s": graph}, None, set(), set(),
                            ContextSettings(shared_documents=4))  # fmt: skip
    assert uncapped.scores[("s", "track")] > uncapped.scores[("s", "invoice_line")]
    assert capped.scores[("s", "track")] < capped.scores[("s", "invoice_line")]
    # The reasons still count every document that matched.
    assert capped.reasons[("s", "track")].count("path document matched") == 12


@pytest.mark.parametrize(
    ("scores", "close"),
    [
        ([0.95, 0.9, 0.89], ["b", "c"]),  # at the share or above: named
        ([0.5], []),  # a clear choice
        ([], []),  # one database searched
    ],
)
def test_close_calls_are_the_runners_up_near_the_chosen(
    scores: list[float], close: list[str]
) -> None:
    named = [SourceScore(source=s, score=v) for s, v in zip("bcd", scores, strict=False)]
    found = close_calls(named, RetrievalSettings(close_call=0.9))
    assert [a.source for a in found] == close


@pytest.mark.parametrize(
    ("share", "terms", "cause", "says"),
    [
        (0.349, {"x"}, "cut", "scored 0.34 of the first table's score, under the cut of 0.35"),
        (0.3, set(), "cut", "scored 0.30 "),
        (0.29, {"x"}, "cut", "scored 0.29 "),  # not 0.28: 0.29 * 100 < 29 in binary
        (0.5, set(), "wordless", "scored 0.49 of the first table's score, under the 0.50"),
        (0.9, {"x"}, "full", "the choice already held as many tables as a pack may (6)"),
    ],
)
def test_why_a_table_was_left_out_never_contradicts_itself(
    share: float, terms: set[str], cause: str, says: str
) -> None:
    from schemawise.rank.structural import Candidate, RankSettings, _why_left_out

    settings = RankSettings()
    found, why = _why_left_out(
        share - 0.0001 if cause == "wordless" else share, Candidate("t", 1.0, terms), 6,
        settings, wordless=0.5,
    )  # fmt: skip
    assert found == cause and says in why
