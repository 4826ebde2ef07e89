"""Joins no name gives away, found on the data of real SQLite databases."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from schemawise.db import connect
from schemawise.graph.extract import ExtractOptions, extract_graph
from schemawise.graph.model import SchemaGraph
from schemawise.graph.paths import connecting_tree

STUDENTS = [1025, 1101, 1247, 1304, 1381, 1468, 1510, 1641, 1689, 1709, 1782, 1911, 1934]


def _graph(tmp_path: Path, script: str, data_checks: bool = True) -> SchemaGraph:
    path = tmp_path / "db.sqlite"
    if not path.exists():
        with sqlite3.connect(path) as conn:
            conn.executescript(script)
    with connect(f"sqlite:///{path}") as source:
        return extract_graph(source, ExtractOptions(data_checks=data_checks))


def _joins(graph: SchemaGraph) -> dict[tuple[str, str], tuple[str, str, str]]:
    return {
        (e.child_table, e.child_columns[0]): (e.parent_table, e.parent_columns[0], e.evidence.rule)
        for e in graph.edges
        if e.via is None and e.source != "foreign_key"
    }


def test_sparse_ids_are_found_whatever_the_column_is_called(tmp_path: Path) -> None:
    rows = ", ".join(f"({s}, 'n{s}', {i % 12 + 1})" for i, s in enumerate(STUDENTS))
    pairs = [(1025, 1101), (1101, 1689), (1247, 1911), (1304, 1025), (1510, 1934), (1689, 1247)]
    script = f"""
    CREATE TABLE grade (id INTEGER PRIMARY KEY, label TEXT);
    CREATE TABLE highschooler (id INTEGER PRIMARY KEY, name TEXT, grade INTEGER);
    CREATE TABLE crush (admirer INTEGER, admired INTEGER, rating INTEGER);
    INSERT INTO grade VALUES {", ".join(f"({g}, 'g{g}')" for g in range(1, 13))};
    INSERT INTO highschooler VALUES {rows};
    INSERT INTO crush VALUES {", ".join(f"({a}, {b}, {a % 5 + 1})" for a, b in pairs)};
    """
    joins = _joins(_graph(tmp_path, script))
    assert joins[("crush", "admirer")] == ("highschooler", "id", "improbable_inclusion")
    assert joins[("crush", "admired")] == ("highschooler", "id", "improbable_inclusion")
    # Small numbers fit the dense ids of `grade` as well as any: not evidence.
    assert ("crush", "rating") not in joins
    # Without data nothing is proposed for names that say nothing.
    assert ("crush", "admirer") not in _joins(_graph(tmp_path, script, data_checks=False))


def test_a_rejected_parent_gives_way_to_the_next_name(tmp_path: Path) -> None:
    script = """
    CREATE TABLE continents (ContId INTEGER, Continent TEXT);
    CREATE TABLE countries (CountryId INTEGER PRIMARY KEY, Name TEXT, Continent INTEGER);
    INSERT INTO continents VALUES (1, 'america'), (2, 'europe'), (3, 'asia'), (4, 'africa');
    INSERT INTO countries VALUES (1, 'usa', 1), (2, 'france', 2), (3, 'japan', 3), (4, 'peru', 1);
    """
    joins = _joins(_graph(tmp_path, script))
    # `continents.Continent` is named more alike but holds names; the ids hold the values.
    assert joins[("countries", "Continent")][:2] == ("continents", "ContId")


# A warehouse's own conventions (graph/conventions.py): columns prefixed with an abbreviation
# of their table, and keys named `…_sk` or with `key` glued on, as in the TPC schemas.
WAREHOUSE = """
CREATE TABLE item (i_item_sk INTEGER PRIMARY KEY, i_item_id TEXT, i_brand TEXT);
CREATE TABLE store (s_store_sk INTEGER PRIMARY KEY, s_store_id TEXT, s_name TEXT);
CREATE TABLE date_dim (d_date_sk INTEGER PRIMARY KEY, d_date_id TEXT, d_year INTEGER);
CREATE TABLE store_sales (ss_sold_date_sk INTEGER, ss_item_sk INTEGER, ss_store_sk INTEGER,
    ss_ticket_number INTEGER, ss_quantity INTEGER, PRIMARY KEY (ss_item_sk, ss_ticket_number));
CREATE TABLE nation (n_nationkey INTEGER PRIMARY KEY, n_name TEXT);
CREATE TABLE customer (c_custkey INTEGER PRIMARY KEY, c_name TEXT, c_nationkey INTEGER);
CREATE TABLE orders (o_orderkey INTEGER PRIMARY KEY, o_custkey INTEGER, o_total REAL);
"""


def _warehouse_rows(orders: int = 1500) -> str:
    items = ", ".join(f"({i}, 'AAA{i}', 'b{i % 7}')" for i in range(1, 201))
    stores = ", ".join(f"({i}, 'S{i}', 'store {i}')" for i in range(1, 13))
    # Date keys are Julian day numbers, as in TPC-DS: sparse against any small id range.
    dates = ", ".join(f"({2450815 + i}, 'D{i}', {1998 + i // 365})" for i in range(0, 4000))
    sales = ", ".join(
        f"({2450815 + (t * 37) % 4000}, {t % 200 + 1}, {t % 12 + 1}, {t}, {t % 9})"
        for t in range(1, 3001)
    )
    nations = ", ".join(f"({i}, 'n{i}')" for i in range(0, 25))
    customers = ", ".join(f"({i}, 'c{i}', {i % 25})" for i in range(1, 151))
    order_rows = ", ".join(f"({i}, {i % 150 + 1}, {i * 1.5})" for i in range(1, orders + 1))
    return f"""
    INSERT INTO item VALUES {items}; INSERT INTO store VALUES {stores};
    INSERT INTO date_dim VALUES {dates}; INSERT INTO store_sales VALUES {sales};
    INSERT INTO nation VALUES {nations}; INSERT INTO customer VALUES {customers};
    INSERT INTO orders VALUES {order_rows};
    """


@pytest.mark.parametrize("data_checks", [True, False])
def test_a_warehouses_own_conventions_give_its_joins_away(
    tmp_path: Path, data_checks: bool
) -> None:
    joins = _joins(_graph(tmp_path, WAREHOUSE + _warehouse_rows(), data_checks=data_checks))
    assert joins[("store_sales", "ss_sold_date_sk")][:2] == ("date_dim", "d_date_sk")
    assert joins[("store_sales", "ss_item_sk")][:2] == ("item", "i_item_sk")
    assert joins[("store_sales", "ss_store_sk")][:2] == ("store", "s_store_sk")
    assert joins[("orders", "o_custkey")][:2] == ("customer", "c_custkey")
    assert joins[("customer", "c_nationkey")][:2] == ("nation", "n_nationkey")
    # The business ids (`i_item_id`, text) are not where the facts point.
    assert all(parent[1] != "i_item_id" for parent in joins.values())


def test_numbers_a_dense_key_holds_by_chance_are_not_a_join(tmp_path: Path) -> None:
    # Ticket numbers 1…3000 all lie among the order keys 1…5000, and in no other key: being
    # the only key large enough says nothing; a dense range holds any such numbers.
    joins = _joins(_graph(tmp_path, WAREHOUSE + _warehouse_rows(orders=5000)))
    assert ("store_sales", "ss_ticket_number") not in joins


def test_columns_named_as_another_tables_composite_key_reference_it(tmp_path: Path) -> None:
    script = """
    CREATE TABLE sales (item INTEGER, ticket_number INTEGER, qty INTEGER,
        PRIMARY KEY (item, ticket_number));
    CREATE TABLE sale_returns (item INTEGER, ticket_number INTEGER, reason TEXT,
        PRIMARY KEY (item, ticket_number));
    CREATE TABLE audit (item INTEGER, ticket_number INTEGER, note TEXT);
    """
    sales = [(i % 40 + 1, t) for t, i in zip(range(1000, 1600), range(600), strict=True)]
    rows = f"""
    INSERT INTO sales VALUES {", ".join(f"({i}, {t}, 1)" for i, t in sales)};
    INSERT INTO sale_returns VALUES {", ".join(f"({i}, {t}, 'r')" for i, t in sales[::7])};
    INSERT INTO audit VALUES {", ".join(f"({i + 1}, {t}, 'x')" for i, t in sales[:30])};
    """
    edges = {
        (e.child_table, tuple(e.child_columns), e.parent_table): e.evidence.rule
        for e in _graph(tmp_path, script + rows).edges
        if e.source != "foreign_key"
    }
    # A return is of a sale: the data says which way (every return is a sale, not the reverse).
    assert edges[("sale_returns", ("item", "ticket_number"), "sales")] == "same_composite_key"
    assert ("sales", ("item", "ticket_number"), "sale_returns") not in edges
    # Names alone are not enough: `audit`'s pairs are not sales (the items are shifted).
    assert not any(child == "audit" for child, _, _ in edges)
    # Without data nothing is proposed: only the data may confirm a composite key.
    assert not any(
        len(e.child_columns) > 1
        for e in _graph(tmp_path, script + rows, data_checks=False).edges
        if e.source != "foreign_key"
    )


def test_a_part_of_a_composite_reference_may_reference_a_table_of_its_own(
    tmp_path: Path,
) -> None:
    """A batting line names its player's season on the roster, `(person, yearID)`, and through
    `person` the player, which no name ties to `People.pid`; only the data does, and the
    composite reference holding `person` must not hide it from the data (the Baseball
    Databank's `Fielding.playerID`, both in a season key and a player's id)."""
    players = [f"{last}{first}01" for last in ("aaron", "bonds", "cobb", "ruth", "mays")
               for first in ("ha", "ba", "ty")]  # fmt: skip
    roster = [(p, y) for p in players for y in (2001, 2002)]
    script = f"""
    CREATE TABLE People (pid TEXT PRIMARY KEY, nameLast TEXT);
    CREATE TABLE Roster (person TEXT, yearID INTEGER, salary INTEGER,
        PRIMARY KEY (person, yearID));
    CREATE TABLE Batting (person TEXT, yearID INTEGER, HR INTEGER);
    INSERT INTO People VALUES {", ".join(f"('{p}', '{p[:-4]}')" for p in players)},
        ('unused01', 'unused');
    INSERT INTO Roster VALUES {", ".join(f"('{p}', {y}, {len(p) * y})" for p, y in roster)};
    INSERT INTO Batting VALUES {", ".join(f"('{p}', {y}, {y % 7})" for p, y in roster[::2])};
    """
    edges = {
        (e.child_table, tuple(e.child_columns)): e.parent_table
        for e in _graph(tmp_path, script).edges
        if e.source != "foreign_key"
    }
    assert edges[("Batting", ("person", "yearID"))] == "Roster"
    assert edges[("Batting", ("person",))] == "People"


def test_a_larger_composite_key_stands_when_the_data_rejects_the_smaller(
    tmp_path: Path,
) -> None:
    """Adjustments hold a shift's `(store_code, day)` and a count's `(store_code, day,
    product_code)`; the shifts cover half the days, so the data rejects the smaller key, and
    the count, which it confirms, is the reference."""
    stores, products = ["north", "south", "east"], ["apple", "pear", "plum", "fig"]
    days = [f"2024-01-{d:02d}" for d in range(1, 11)]
    counts = [(s, d, p) for s in stores for d in days for p in products]
    script = f"""
    CREATE TABLE shifts (store_code TEXT, day TEXT, staff INTEGER, PRIMARY KEY (store_code, day));
    CREATE TABLE stock_counts (store_code TEXT, day TEXT, product_code TEXT, units INTEGER,
        PRIMARY KEY (store_code, day, product_code));
    CREATE TABLE count_adjustments (store_code TEXT, day TEXT, product_code TEXT, delta INTEGER);
    INSERT INTO shifts VALUES {", ".join(f"('{s}', '{d}', 3)" for s in stores for d in days[::2])};
    INSERT INTO stock_counts VALUES {", ".join(f"('{s}', '{d}', '{p}', 10)" for s, d, p in counts)};
    INSERT INTO count_adjustments VALUES {
        ", ".join(f"('{s}', '{d}', '{p}', -1)" for s, d, p in counts[::3])
    };
    """
    edges = {
        (e.child_table, tuple(e.child_columns)): e.parent_table
        for e in _graph(tmp_path, script).edges
        if e.source != "foreign_key"
    }
    key = ("store_code", "day", "product_code")
    assert edges[("count_adjustments", key)] == "stock_counts"
    assert ("count_adjustments", ("store_code", "day")) not in edges


def test_codes_with_a_few_orphans_still_reference_their_key(tmp_path: Path) -> None:
    # 40 airport codes; flights go to 39 of them and to one the table lacks (2.5% orphans).
    codes = [f"{a}{b}X" for a in "ABCDEFGH" for b in "KLMNP"]
    destinations = [*codes[:39], "ZZZ"]
    script = f"""
    CREATE TABLE airports (faa TEXT PRIMARY KEY, name TEXT);
    CREATE TABLE flights (id INTEGER PRIMARY KEY, dest TEXT);
    INSERT INTO airports VALUES {", ".join(f"('{c}', 'airport {c}')" for c in codes)};
    INSERT INTO flights VALUES {", ".join(f"({i}, '{d}')" for i, d in enumerate(destinations * 2))};
    """
    graph = _graph(tmp_path, script)
    assert _joins(graph)[("flights", "dest")] == ("airports", "faa", "improbable_inclusion")
    (edge,) = [e for e in graph.edges if e.child_columns == ["dest"]]
    assert edge.evidence.inclusion == 0.975
    assert any("39 of 40" in note for note in edge.evidence.notes)


@pytest.mark.parametrize("first", ["'b000q'", "NULL"])
def test_a_second_key_of_the_same_rows_is_not_a_self_reference(tmp_path: Path, first: str) -> None:
    # bbref_code equals its own row's key but for one person (another code, or none): another
    # name for the row. A franchise's `became` names another row: a self-reference.
    ids = [f"p{n:03d}x" for n in range(30)]
    people = [(i, first if n == 0 else f"'{i}'") for n, i in enumerate(ids)]
    franchises = [(f"F{n:02d}", f"F{n + 10:02d}" if n < 8 else "NULL") for n in range(20)]
    rows = ", ".join(f"('{f}', {'NULL' if b == 'NULL' else repr(b)})" for f, b in franchises)
    script = f"""
    CREATE TABLE people (person_code TEXT PRIMARY KEY, bbref_code TEXT UNIQUE);
    CREATE TABLE franchises (fr TEXT PRIMARY KEY, became TEXT);
    INSERT INTO people VALUES {", ".join(f"('{i}', {b})" for i, b in people)};
    INSERT INTO franchises VALUES {rows};
    """
    joins = _joins(_graph(tmp_path, script))
    assert ("people", "bbref_code") not in joins
    assert joins[("franchises", "became")] == ("franchises", "fr", "improbable_inclusion")


def test_a_composite_key_with_a_part_named_for_a_role(tmp_path: Path) -> None:
    # A series names the winner's and the loser's team season: (year, teamIDwinner) and
    # (year, teamIDloser) each reference the team season (year, teamID).
    seasons = [(y, t) for y in range(2000, 2010) for t in ("BOS", "NYA", "SLN", "LAN")]
    series = [(y, "BOS" if y % 2 else "SLN", "NYA" if y % 3 else "LAN") for y in range(2000, 2010)]
    script = f"""
    CREATE TABLE Teams (yearID INTEGER, teamID TEXT, W INTEGER, PRIMARY KEY (yearID, teamID));
    CREATE TABLE SeriesPost (yearID INTEGER, round TEXT, teamIDwinner TEXT, teamIDloser TEXT);
    INSERT INTO Teams VALUES {", ".join(f"({y}, '{t}', 90)" for y, t in seasons)};
    INSERT INTO SeriesPost VALUES {", ".join(f"({y}, 'WS', '{w}', '{lo}')" for y, w, lo in series)};
    """
    edges = {
        (tuple(e.child_columns), e.parent_table, tuple(e.parent_columns))
        for e in _graph(tmp_path, script).edges
        if e.child_table == "SeriesPost" and e.via is None
    }
    team_season = ("Teams", ("yearID", "teamID"))
    assert (("yearID", "teamIDwinner"), *team_season) in edges
    assert (("yearID", "teamIDloser"), *team_season) in edges


def test_a_self_reference_often_to_its_own_row_stands(tmp_path: Path) -> None:
    # Deduplicated records: most are their own canonical record, the rest point at another.
    # Not unique, so not a second key.
    ids = [f"r{n:03d}z" for n in range(40)]
    rows = [(i, i if n < 28 else ids[n % 28]) for n, i in enumerate(ids)]
    script = f"""
    CREATE TABLE records (rec TEXT PRIMARY KEY, canonical TEXT);
    INSERT INTO records VALUES {", ".join(f"('{a}', '{b}')" for a, b in rows)};
    """
    joins = _joins(_graph(tmp_path, script))
    assert joins[("records", "canonical")] == ("records", "rec", "improbable_inclusion")


def test_a_second_key_stored_as_real_numbers_is_still_a_second_key(tmp_path: Path) -> None:
    # pandas writes an integer column with a gap as REAL: 1037.0 is its row's id 1037.
    ids = [1000 + 37 * n + (n * n) % 11 for n in range(30)]
    rows = ", ".join(f"({i}, {'NULL' if n == 0 else float(i)})" for n, i in enumerate(ids))
    script = f"""
    CREATE TABLE people (id INTEGER PRIMARY KEY, legacy REAL UNIQUE);
    INSERT INTO people VALUES {rows};
    """
    assert ("people", "legacy") not in _joins(_graph(tmp_path, script))


def test_a_declared_join_with_orphans_says_so_on_its_path(tmp_path: Path) -> None:
    # 1 of 20 destinations is not in the airports table: an inner join drops its flights.
    script = f"""
    CREATE TABLE airports (faa TEXT PRIMARY KEY, name TEXT);
    CREATE TABLE flights (id INTEGER PRIMARY KEY, dest TEXT REFERENCES airports (faa));
    INSERT INTO airports VALUES {", ".join(f"('A{n:02d}', 'airport {n}')" for n in range(19))};
    INSERT INTO flights VALUES {", ".join(f"({n}, 'A{n % 20:02d}')" for n in range(60))};
    """
    graph = _graph(tmp_path, script)
    (edge,) = [e for e in graph.edges if e.source == "foreign_key"]
    assert edge.evidence.inclusion == 0.95
    path = connecting_tree(graph, ["flights", "airports"])
    assert path.edges[0].inclusion == 0.95
    assert any(w.startswith("5% of the values of flights.dest") for w in path.warnings)


def test_declared_numbers_stored_as_real_are_not_orphans(tmp_path: Path) -> None:
    # pandas writes an integer column with a gap as REAL: 3.0 is airport 3, though its text
    # is '3.0'.
    script = f"""
    CREATE TABLE airports (id INTEGER PRIMARY KEY, name TEXT);
    CREATE TABLE flights (fid INTEGER PRIMARY KEY, dest REAL REFERENCES airports (id));
    INSERT INTO airports VALUES {", ".join(f"({n}, 'a{n}')" for n in range(1, 21))};
    INSERT INTO flights VALUES {", ".join(f"({n}, {float(n % 20 + 1)})" for n in range(60))};
    """
    graph = _graph(tmp_path, script)
    (edge,) = [e for e in graph.edges if e.source == "foreign_key"]
    assert edge.evidence.inclusion == 1.0
    warnings = connecting_tree(graph, ["flights", "airports"]).warnings
    assert not any("no value" in w or "have no airports row" in w for w in warnings)


def test_a_parent_whose_values_repeat_is_no_key(tmp_path: Path) -> None:
    # `team_half.half` (1 or 2 on every row) is named after its table, so a child's `half`
    # reads as a reference to it by name; on the data it repeats: no key, no join.
    script = f"""
    CREATE TABLE team_half (team TEXT, half INTEGER, wins INTEGER);
    CREATE TABLE manager_half (manager TEXT, half INTEGER, games INTEGER);
    INSERT INTO team_half VALUES {", ".join(f"('t{n}', {n % 2 + 1}, {n})" for n in range(20))};
    INSERT INTO manager_half VALUES {", ".join(f"('m{n}', {n % 2 + 1}, 5)" for n in range(10))};
    """
    assert ("manager_half", "half") not in _joins(_graph(tmp_path, script))


def _composite_edges(graph: SchemaGraph) -> dict[tuple[str, tuple[str, ...]], str]:
    return {
        (e.child_table, tuple(e.child_columns)): e.parent_table
        for e in graph.edges
        if e.source != "foreign_key" and len(e.child_columns) > 1
    }


def test_a_composite_key_no_table_declares_is_measured_on_the_data(tmp_path: Path) -> None:
    # A team's season: (yearID, teamID) unique in Teams, repeated in the seasons of players.
    seasons = [(y, t) for y in range(2000, 2006) for t in ("BOS", "NYA", "SEA", "TEX")]
    script = f"""
    CREATE TABLE Teams (yearID INTEGER, lgID TEXT, teamID TEXT, W INTEGER);
    CREATE TABLE Batting (playerID TEXT, yearID INTEGER, teamID TEXT, HR INTEGER);
    CREATE TABLE Awards (playerID TEXT, yearID INTEGER, teamID TEXT);
    INSERT INTO Teams VALUES {", ".join(f"({y}, 'AL', '{t}', {y % 90})" for y, t in seasons)};
    INSERT INTO Batting VALUES {", ".join(
        f"('p{i}', {y}, '{t}', {i % 40})" for i, (y, t) in enumerate(seasons * 3))};
    INSERT INTO Awards VALUES {", ".join(
        f"('p{i}', {y + 10}, '{t}')" for i, (y, t) in enumerate(seasons))};
    """  # fmt: skip
    edges = _composite_edges(_graph(tmp_path, script))
    assert edges[("Batting", ("yearID", "teamID"))] == "Teams"
    # Names alone do not make it: Awards' seasons are not Teams' (ten years later).
    assert ("Awards", ("yearID", "teamID")) not in edges
    # Batting's own pairs repeat: it is no parent.
    assert ("Teams", ("yearID", "teamID")) not in edges


def test_a_composite_key_is_not_measured_on_a_handful_of_rows(tmp_path: Path) -> None:
    script = """
    CREATE TABLE Teams (yearID INTEGER, teamID TEXT, W INTEGER);
    CREATE TABLE Batting (playerID TEXT, yearID INTEGER, teamID TEXT);
    INSERT INTO Teams VALUES (2000, 'BOS', 90), (2000, 'NYA', 80), (2001, 'BOS', 70);
    INSERT INTO Batting VALUES ('a', 2000, 'BOS'), ('b', 2000, 'NYA'), ('c', 2001, 'BOS');
    """
    assert _composite_edges(_graph(tmp_path, script)) == {}


@pytest.mark.parametrize(
    ("first", "rows", "joined"),
    [
        ("carrier TEXT", 16, True),  # unique over rows enough: the table's key
        ("carrier TEXT", 4, False),  # four rows are unique by chance
        ("name TEXT", 16, False),  # a generic word is no key, whatever the data
    ],
)
def test_a_first_column_unique_on_the_data_is_a_key_whatever_its_name(
    tmp_path: Path, first: str, rows: int, joined: bool
) -> None:
    column = first.split()[0]
    codes = [f"C{i:02d}" for i in range(rows)]
    script = f"""
    CREATE TABLE airlines ({first}, full_name TEXT);
    CREATE TABLE flights (flight INTEGER, {column} TEXT, distance INTEGER);
    INSERT INTO airlines VALUES {", ".join(f"('{c}', 'Airline {c}')" for c in codes)};
    INSERT INTO flights VALUES {", ".join(
        f"({i}, '{codes[i % rows]}', {100 + i})" for i in range(60))};
    """  # fmt: skip
    joins = _joins(_graph(tmp_path, script))
    assert (joins.get(("flights", column), ("",))[0] == "airlines") is joined, joins


def test_only_pairs_another_table_holds_are_probed_as_keys(tmp_path: Path) -> None:
    from schemawise.graph.datachecks import DataChecker
    from schemawise.graph.extract import _measured_composite_keys

    dims = ", ".join(f"dim{k}_id INTEGER" for k in range(6))
    rows = ", ".join("(" + ", ".join(str((i * (k + 3)) % 17) for k in range(6)) + ")"
                     for i in range(40))  # fmt: skip
    path = tmp_path / "facts.sqlite"
    with sqlite3.connect(path) as conn:
        conn.executescript(
            f"CREATE TABLE facts ({dims}); INSERT INTO facts VALUES {rows};"
            "CREATE TABLE notes (dim0_id INTEGER, dim1_id INTEGER, t TEXT);"
        )
    with connect(f"sqlite:///{path}") as source:
        graph = extract_graph(source, ExtractOptions(data_checks=False, infer=False))
        checker = DataChecker(source)
        _measured_composite_keys(graph, checker, {}, set())
        # Of the 15 pairs of `facts`, only (dim0_id, dim1_id) is held by another table (and
        # `notes`, keyless too, holds only that pair, which `facts` holds).
        assert checker.queries == 2


@pytest.mark.parametrize(
    ("first", "values"),
    [
        ("total REAL", [f"{100 + i * 7.25}" for i in range(20)]),  # an amount, not a key
        ("viewed_at TEXT", [f"'2024-01-{i + 1:02d} 10:00'" for i in range(20)]),  # a time
    ],
)
def test_a_unique_first_column_of_amounts_or_times_is_no_key(
    tmp_path: Path, first: str, values: list[str]
) -> None:
    column = first.split()[0]
    script = f"""
    CREATE TABLE invoices ({first}, note TEXT);
    CREATE TABLE payments (payment INTEGER, {column} {first.split()[1]});
    INSERT INTO invoices VALUES {", ".join(f"({v}, 'x')" for v in values)};
    INSERT INTO payments VALUES {", ".join(f"({i}, {v})" for i, v in enumerate(values[:12]))};
    """
    assert ("payments", column) not in _joins(_graph(tmp_path, script))
