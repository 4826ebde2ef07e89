"""Build the schema graph of a source: catalog, declared and inferred edges, cardinality."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from itertools import combinations

from schemawise.db.base import Source
from schemawise.graph import cardinality, conventions
from schemawise.graph.containment import (
    IMPROBABLE,
    Containment,
    improbable_parent,
    integer_chance_log10,
    normalise,
)
from schemawise.graph.datachecks import DataChecker
from schemawise.graph.infer import (
    MIN_CONFIDENCE,
    Candidate,
    JoinPairs,
    QueryLogEntry,
    composite_candidates,
    containment_candidates,
    implied_composites,
    join_pairs,
    key_family,
    name_candidates,
    names_a_composite,
    overlap_candidates,
    primary_keys,
    query_log_candidates,
)
from schemawise.graph.lineage import resolve_reads
from schemawise.graph.model import Edge, Evidence, Problem, SchemaGraph, unreadable_tables
from schemawise.graph.naming import (
    KEY_WORDS,
    ends_with,
    entity_words,
    is_generic,
    is_time,
    singular_words,
    split_identifier,
    type_family,
    types_compatible,
)

# Inclusion at or above this confirms a candidate; below REJECT it is dropped.
CONFIRM_INCLUSION = 0.95
REJECT_INCLUSION = 0.9
# A column that is not named as a key is taken for one when unique over at least this many
# rows (any two rows are unique by chance), and a pair of key-like columns likewise.
MIN_ROWS_MEASURED = 10
# Pairs of key-like columns are tried only in tables with this many at most (28 pairs), and
# this many pairs at most in a graph (each a DISTINCT over a table).
MAX_KEY_LIKE_PAIRED = 8
MAX_COMPOSITE_PROBES = 200

Progress = Callable[[str], None]


@dataclass
class ExtractOptions:
    data_checks: bool = True
    infer: bool = True
    query_log: list[QueryLogEntry] | None = None
    budget_seconds: float = 60.0
    check_timeout_ms: int = 5000
    sample_rows: int = 200_000


# A check refused for a table: Postgres names the table in its message, which may not be the
# table the check was for (an inclusion check of a readable child in an unreadable parent).
_DENIED = re.compile(r'permission denied for (?:table|relation|view) "?([\w.$]+)"?', re.IGNORECASE)


def _new_problems(found: list[Problem], known: list[Problem]) -> list[Problem]:
    """The data checks' problems less those already said: a table the catalog found
    unreadable was warned of once, with its grant (each failed check on it said it again, under
    whichever table the check was for), and a problem said twice is said once."""
    unreadable = {t.rsplit(".", 1)[-1].lower() for t in unreadable_tables(known)}
    out: list[Problem] = []
    for problem in found:
        denied = _DENIED.search(problem.message)
        if denied and denied.group(1).rsplit(".", 1)[-1].lower() in unreadable:
            continue
        if problem not in out:
            out.append(problem)
    return out


def _keep_log_count(kept: Edge, other: Edge) -> None:
    """An edge found by its name and by the query log keeps how often the log joined it."""
    if kept.evidence.query_log_joins is None and other.evidence.query_log_joins is not None:
        kept.evidence.query_log_joins = other.evidence.query_log_joins


def unread_log_problems(log: list[QueryLogEntry], pairs: JoinPairs) -> list[Problem]:
    """What of the query log was not read: lines that are no entry, SQL that did not parse."""
    skipped = getattr(log, "skipped", [])
    if not skipped and not pairs.failed:
        return []
    parts = []
    if skipped:
        parts.append(f"{len(skipped)} line{'s' if len(skipped) > 1 else ''} not an entry "
                     f"(first: {skipped[0]})")  # fmt: skip
    if pairs.failed:
        parts.append(f"{pairs.failed} quer{'ies' if pairs.failed > 1 else 'y'} whose SQL did "
                     "not parse")  # fmt: skip
    return [Problem(
        stage="query_log",
        message=f"Not read from the query log: {'; '.join(parts)}. The other "
        f"{pairs.parsed} queries were.",
        hint="A log line is one JSON object with `sql`; SQL in another dialect than the "
        "database's does not parse.",
    )]  # fmt: skip


def extract_graph(
    source: Source,
    options: ExtractOptions | None = None,
    progress: Progress | None = None,
) -> SchemaGraph:
    options = options or ExtractOptions()
    say = progress or (lambda _: None)
    say("reading catalog")
    catalog = source.read_catalog()
    graph = SchemaGraph(
        source=source.display_url,
        dialect=source.dialect,
        tables=catalog.tables,
        problems=list(catalog.problems),
    )
    for fk in catalog.foreign_keys:
        graph.edges.append(
            Edge(
                child_table=fk.child_table,
                child_columns=list(fk.child_columns),
                parent_table=fk.parent_table,
                parent_columns=list(fk.parent_columns),
                source="foreign_key",
                confidence=1.0,
                evidence=Evidence(rule="declared"),
            )
        )
    _add_view_lineage(graph, catalog.view_definitions, source.dialect)
    checker = (
        DataChecker(
            source,
            budget_seconds=options.budget_seconds,
            timeout_ms=options.check_timeout_ms,
            sample_rows=options.sample_rows,
        )
        if options.data_checks
        else None
    )
    if options.infer:
        say("inferring joins")
        _infer(graph, checker, options.query_log)
    say("measuring cardinality")
    for edge in graph.edges:
        if edge.via is None:
            cardinality.assign(edge, graph, checker)
    if checker is not None and not source.enforces_foreign_keys:
        # After cardinality, which has the first claim on the checks' time budget. (A
        # Postgres key marked NOT VALID is not checked either: rare, and not read here.)
        say("checking declared joins on the data")
        for edge in graph.edges:
            if edge.via is None and edge.source == "foreign_key":
                measure_inclusion(edge, graph, checker)
    add_bridges(graph)
    if checker is not None:
        graph.problems.extend(_new_problems(checker.problems, graph.problems))
        if checker.skipped_for_budget:
            graph.problems.append(
                budget_problem(checker.skipped_for_budget, options.budget_seconds)
            )
    graph.partial = bool(graph.problems)
    graph.version = graph.compute_version()
    return graph


def budget_problem(skipped: int, budget: float) -> Problem:
    return Problem(
        stage="data_check",
        message=f"time budget of {budget:g}s spent: {skipped} data checks skipped; "
        "edges they would have measured keep their declared cardinality, and joins they "
        "would have checked for orphans say nothing of them",
        hint="Raise --budget, or run with --no-data-checks for structure only.",
    )


def _add_view_lineage(graph: SchemaGraph, definitions: dict[str, str], dialect: str) -> None:
    """A view that carries a base table's key joins like that table: add that edge."""
    for view in graph.tables:
        definition = definitions.get(view.name)
        if view.kind == "table" or not definition:
            continue
        view.reads = resolve_reads(view, definition, graph, dialect)
        for base_name in view.reads:
            base = graph.table(base_name)
            if base is None or len(base.primary_key) != 1:
                continue
            column = view.column(base.primary_key[0])
            if column is None:
                continue
            graph.edges.append(
                Edge(
                    child_table=view.name,
                    child_columns=[column.name],
                    parent_table=base.name,
                    parent_columns=[base.primary_key[0]],
                    source="view_lineage",
                    confidence=0.8,
                    evidence=Evidence(rule="view_reads_key"),
                )
            )


def _key_like(name: str) -> bool:
    """Named as a key: its last word is a key word (`…_id`, `…code`, `…key`)."""
    words = split_identifier(name)
    return bool(words) and words[-1] in KEY_WORDS


def _measured_keys(
    graph: SchemaGraph, checker: DataChecker | None, real: dict[tuple[str, str], str]
) -> set[tuple[str, str]]:
    """Columns of tables that declare no key, unique on the data: possible parents. Every
    key-like column (`…_id`, `…code`), and the first column whatever its name when it is not a
    generic word (`airlines.carrier`, `airports.faa`: a key comes first) and the table has
    rows enough for uniqueness to mean something. `graph` may carry logical names
    (conventions.py); `real` maps them back for the data."""
    found: set[tuple[str, str]] = set()
    if checker is None:
        return presumed_keys(graph)
    for table in graph.tables:
        if table.kind != "table" or table.primary_key or table.unique:
            continue
        for position, column in enumerate(table.columns):
            key_like = _key_like(column.name)
            first = (
                position == 0
                and not is_generic(column.name)
                and key_family(column.type)
                and not is_time(column.type, column.name)  # unique timestamps are no key
            )
            if not (key_like or first):
                continue
            measured = checker.uniqueness(
                table.name, [real.get((table.name, column.name), column.name)]
            )
            if measured.unique and (key_like or measured.rows >= MIN_ROWS_MEASURED):
                found.add((table.name, column.name))
    return found


def _measured_composite_keys(
    graph: SchemaGraph,
    checker: DataChecker | None,
    real: dict[tuple[str, str], str],
    single: set[tuple[str, str]],
) -> dict[str, list[str]]:
    """A table that declares no key and has no single key column: the first two of its
    key-like columns, in table order, unique together on the data (`Teams (yearID, teamID)`,
    a team's season), when its key-like columns are few enough to try each pair. Only a pair
    another table holds by the same names is tried (only such a table could reference it:
    infer.composite_candidates), within the checks' time budget and MAX_COMPOSITE_PROBES."""
    if checker is None:
        return {}
    keyed = {table for table, _ in single}
    holders: dict[str, set[str]] = defaultdict(set)  # column name → the tables holding it
    for other in graph.tables:
        if other.kind == "table":
            for column in other.columns:
                holders[column.name.lower()].add(other.name)
    found: dict[str, list[str]] = {}
    probes = 0
    for table in graph.tables:
        if table.kind != "table" or table.primary_key or table.unique or table.name in keyed:
            continue
        key_like = [c.name for c in table.columns if _key_like(c.name)]
        if len(key_like) > MAX_KEY_LIKE_PAIRED:
            continue
        for pair in combinations(key_like, 2):
            others = holders[pair[0].lower()] & holders[pair[1].lower()] - {table.name}
            if not names_a_composite(list(pair)) or not others:
                continue
            if checker.out_of_time or probes >= MAX_COMPOSITE_PROBES:
                return found
            probes += 1
            measured = checker.uniqueness(table.name, [real.get((table.name, c), c) for c in pair])
            if measured.unique and measured.rows >= MIN_ROWS_MEASURED:
                found[table.name] = list(pair)
                break
    return found


def presumed_keys(graph: SchemaGraph) -> set[tuple[str, str]]:
    """Without data to measure (a catalog known only by its schema, as warehouses that do not
    enforce keys often are): a table's key is presumed to be its `id` column, or else the
    key-like column named after the table (`orders.order_id`), when it declares none.

    A named key another table of the schema declares is not presumed (`People.playerID`, not
    `AwardsPlayers.playerID`, whose name ends in "players"); of the tables presuming one name,
    those named after it alone keep it when there are any (`concert.concert_id`, not
    `singer_in_concert`), and all of them when none is (`customers` and `vip_customers` both
    presume `cust_id`: the name rules then choose among them)."""
    found: set[tuple[str, str]] = set()
    presumers: dict[tuple[str, str], list[tuple[str, str, bool]]] = defaultdict(list)
    for table in graph.tables:
        if table.kind != "table" or table.primary_key or table.unique:
            continue
        entity = entity_words(table.name.rsplit(".", 1)[-1])
        named: tuple[str, str, bool] | None = None
        for column in table.columns:
            words = singular_words(column.name)
            if not words or words[-1] not in KEY_WORDS:
                continue
            stem = words[:-1]
            if not stem:  # the table's own `id`, wherever it stands, before a named key
                found.add((table.name, column.name))
                named = None
                break
            if named is None and entity and ends_with(entity, stem) > 0:
                named = (table.name, column.name, tuple(entity) == tuple(stem))
        if named is not None:
            presumers[(_schema_of(table.name), named[1].lower())].append(named)
    declared = {
        (_schema_of(t.name), key[0].lower())
        for t in graph.tables
        for key in [t.primary_key, *t.unique]
        if len(key) == 1
    }
    for owner, tables in presumers.items():
        if owner in declared:
            continue
        exact = [t for t in tables if t[2]]
        found |= {(table, column) for table, column, _ in exact or tables}
    return found


def _schema_of(table: str) -> str:
    return table.rpartition(".")[0]


def _infer(
    graph: SchemaGraph, checker: DataChecker | None, query_log: list[QueryLogEntry] | None
) -> None:
    taken = {e.unordered_key() for e in graph.edges}
    # The naming rules read the columns' logical names when the schema has a convention of
    # its own (`l_orderkey` → `order_key`: conventions.py); edges come back in real names.
    names = conventions.logical_names(graph)
    view = conventions.renamed(graph, names) if names else graph
    back = conventions.restore(names)
    measured_view = _measured_keys(view, checker, back)
    measured = {(t, back.get((t, c), c)) for t, c in measured_view}
    candidates: list[Candidate] = _restored(name_candidates(view, measured_view), back)
    candidates += _restored(composite_candidates(view), back)
    if query_log:
        pairs = join_pairs(query_log, graph.dialect)
        candidates += query_log_candidates(graph, pairs)
        graph.problems.extend(unread_log_problems(query_log, pairs))
    kept: dict[frozenset[tuple[str, tuple[str, ...]]], Edge] = {}
    for candidate in candidates:
        _take(candidate, kept, taken, graph, checker)
    # Composite keys no table declares, measured on the data, and the references to them:
    # after the named joins are confirmed, so that on a large catalog the checks' time budget
    # goes to those first.
    composites = _measured_composite_keys(view, checker, back, measured_view)
    for candidate in _restored(composite_candidates(view, composites, set(composites)), back):
        _take(candidate, kept, taken, graph, checker)
    # Composite references the data confirmed that a smaller one of the same child implies.
    for edge in implied_composites(list(kept.values()), graph):
        del kept[edge.unordered_key()]
    # A column placed by a name, the log or a declared key is not offered to the value-only
    # rule; a part of an inferred composite reference may still reference a table of its own
    # (`Fielding.playerID` → People beside `(playerID, yearID, stint)` → Batting).
    placed = {
        (e.child_table, e.child_columns[0]) for e in kept.values() if len(e.child_columns) == 1
    }
    placed |= {(e.child_table, c) for e in graph.edges for c in e.child_columns}
    if checker is not None:
        primaries = primary_keys(graph, measured)
        for edge in _confirm_overlaps(graph, checker, overlap_candidates(graph, placed, primaries)):
            if edge.unordered_key() not in taken and edge.unordered_key() not in kept:
                kept[edge.unordered_key()] = edge
        placed |= {
            (e.child_table, e.child_columns[0]) for e in kept.values() if len(e.child_columns) == 1
        }
        candidates_by_column = containment_candidates(graph, placed, primaries)
        for edge in _improbable_containments(graph, checker, candidates_by_column):
            if edge.unordered_key() not in taken and edge.unordered_key() not in kept:
                kept[edge.unordered_key()] = edge
    graph.edges.extend(kept.values())


def _take(
    candidate: Candidate,
    kept: dict[frozenset[tuple[str, tuple[str, ...]]], Edge],
    taken: set[frozenset[tuple[str, tuple[str, ...]]]],
    graph: SchemaGraph,
    checker: DataChecker | None,
) -> None:
    """Confirm a candidate (or, rejected, one of its fallbacks) and keep the better verdict."""
    edge = candidate.edge
    key = edge.unordered_key()
    if key in taken:
        return
    verdict = _confirm(edge, graph, checker, candidate.needs_confirmation)
    for fallback in candidate.fallbacks if verdict is None and checker is not None else []:
        # The data rejected the best-named parent: a less likely one must be confirmed.
        if fallback.unordered_key() in taken:
            continue
        verdict = _confirm(fallback, graph, checker, needs_confirmation=True)
        if verdict is not None:
            verdict.evidence.notes.append(
                f"{edge.parent_table}.{edge.parent_columns[0]}, named more alike, "
                "does not hold its values"
            )
            key = verdict.unordered_key()
            break
    if verdict is None:
        return
    previous = kept.get(key)
    if previous is None or verdict.confidence > previous.confidence:
        if previous is not None:
            verdict.evidence.notes.append(f"also found by {previous.source}")
            _keep_log_count(verdict, previous)
        kept[key] = verdict
    elif previous.source != verdict.source:
        previous.evidence.notes.append(f"also found by {verdict.source}")
        _keep_log_count(previous, verdict)


def _restored(found: list[Candidate], back: dict[tuple[str, str], str]) -> list[Candidate]:
    """Candidates found on logical names, put back into the real column names."""
    for candidate in found:
        for edge in [candidate.edge, *candidate.fallbacks]:
            edge.child_columns = [back.get((edge.child_table, c), c) for c in edge.child_columns]
            edge.parent_columns = [back.get((edge.parent_table, c), c) for c in edge.parent_columns]
    return found


def _confirm(
    edge: Edge, graph: SchemaGraph, checker: DataChecker | None, needs_confirmation: bool
) -> Edge | None:
    """Keep, strengthen or reject a candidate by value inclusion; None means rejected."""
    measured = (
        checker.inclusion(*_inclusion_args(edge, graph), same_types=_same_types(edge, graph))
        if checker
        else None
    )
    if measured is None:
        if needs_confirmation or edge.confidence < MIN_CONFIDENCE:
            return None
        edge.evidence.notes.append("not confirmed on data (no rows or no data checks)")
        return edge
    inclusion, distinct = measured
    edge.evidence.inclusion = round(inclusion, 4)
    if inclusion < REJECT_INCLUSION or (needs_confirmation and inclusion < CONFIRM_INCLUSION):
        return None
    if checker is not None and _parent_repeats(edge, graph, checker):
        return None
    if inclusion >= CONFIRM_INCLUSION:
        edge.confidence = round(min(0.99, edge.confidence + 0.1), 3)
        edge.evidence.notes.append(f"{distinct} distinct values checked against the parent")
    return edge


def measure_inclusion(edge: Edge, graph: SchemaGraph, checker: DataChecker) -> None:
    """How many of a declared join's child values its parent holds: a declared key is not
    enforced everywhere, and an orphan is a row an inner join drops (graph/paths.py warns)."""
    measured = checker.inclusion(*_inclusion_args(edge, graph), same_types=_same_types(edge, graph))
    if measured is None:
        return
    inclusion, distinct = measured
    edge.evidence.inclusion = round(inclusion, 4)
    if inclusion < 1.0:
        missing = round((1.0 - inclusion) * 100, 1)
        edge.evidence.notes.append(
            f"{missing:g}% of {distinct} distinct child values checked have no parent"
        )


def _parent_repeats(edge: Edge, graph: SchemaGraph, checker: DataChecker) -> bool:
    """A parent no constraint declares unique whose values repeat on the data is no key: a
    column named after its table (`TeamsHalf.Half`, 1 or 2) holds any small child's values.
    (Measured once; cardinality asks the same question later.)"""
    parent = graph.table(edge.parent_table)
    if parent is None or parent.is_declared_unique(edge.parent_columns):
        return False
    return checker.uniqueness(edge.parent_table, edge.parent_columns).unique is False


def _inclusion_args(edge: Edge, graph: SchemaGraph) -> tuple[str, list[str], str, list[str]]:
    return edge.child_table, edge.child_columns, edge.parent_table, edge.parent_columns


def _same_types(edge: Edge, graph: SchemaGraph) -> bool:
    child, parent = graph.table(edge.child_table), graph.table(edge.parent_table)
    if child is None or parent is None:
        return False
    for c, p in zip(edge.child_columns, edge.parent_columns, strict=True):
        cc, pc = child.column(c), parent.column(p)
        if cc is None or pc is None or not _comparable_as_typed(cc.type, pc.type):
            return False
    return True


def _comparable_as_typed(first: str, second: str) -> bool:
    """The same declared type, or numbers both (an INTEGER 3 equals a REAL 3.0, whose text is
    '3.0'): compared as they are; anything else is compared as text, which cannot fail on a
    type error (a uuid against a text column)."""
    if first.lower() == second.lower():
        return types_compatible(first, second)
    return {type_family(first), type_family(second)} <= {"integer", "number"}


def _confirm_overlaps(
    graph: SchemaGraph, checker: DataChecker, candidates: list[Candidate]
) -> list[Edge]:
    """Keep a key-like column's edge only when exactly one parent holds all of its values."""
    by_column: dict[tuple[str, str], list[Edge]] = defaultdict(list)
    for candidate in candidates:
        edge = candidate.edge
        by_column[(edge.child_table, edge.child_columns[0])].append(edge)
    confirmed = []
    for edges in by_column.values():
        passing = []
        for edge in edges:
            measured = checker.inclusion(
                *_inclusion_args(edge, graph), same_types=_same_types(edge, graph)
            )
            # Fewer than 3 distinct values fit almost any key range: not evidence.
            if measured and measured[0] >= 1.0 and measured[1] >= 3:
                edge.evidence.inclusion = 1.0
                edge.evidence.notes.append(f"all {measured[1]} distinct values found in parent")
                passing.append(edge)
        if len(passing) == 1 and not _dense_by_chance(checker, passing[0]):
            confirmed.append(passing[0])
    return confirmed


def _dense_by_chance(checker: DataChecker, edge: Edge) -> bool:
    """The parent's key fills the child's whole range (ids 1…N holding ticket numbers 1…M):
    containment there is certain by chance, and being the only key that holds the values says
    only that no other table is as large. Integer values only; the parent is counted in the
    child's range by the database, as a key may be too large to read."""
    child = checker.distinct_values(
        edge.child_table, edge.child_columns[0], CHILD_VALUES, whole=False
    )
    numbers = [int(v) for v in child or [] if isinstance(v, int) and not isinstance(v, bool)]
    if not child or len(numbers) < len(child):
        return False
    low, high = min(numbers), max(numbers)
    held = checker.distinct_between(edge.parent_table, edge.parent_columns[0], low, high)
    if not held:
        return False
    return integer_chance_log10(len(numbers), held, high - low + 1) > IMPROBABLE


# A child column's values are read up to this many (a sample beyond); a parent key's in full,
# up to PARENT_VALUES, or not at all.
CHILD_VALUES = 2000
PARENT_VALUES = 50_000


def _improbable_containments(
    graph: SchemaGraph,
    checker: DataChecker,
    candidates: dict[tuple[str, str], list[tuple[str, str]]],
) -> list[Edge]:
    """Joins no name suggests, kept when one key holds all or nearly all of a column's values
    against the odds (sparse ids, words): see `containment.improbable_parent`."""
    parent_values: dict[tuple[str, str], set[str] | None] = {}

    def values_of(table: str, column: str, whole: bool) -> set[str] | None:
        limit = PARENT_VALUES if whole else CHILD_VALUES
        found = checker.distinct_values(table, column, limit, whole=whole)
        return None if found is None else {normalise(v) for v in found}

    edges = []
    for (child_table, child_column), parents in candidates.items():
        child = values_of(child_table, child_column, whole=False)
        if not child:
            continue
        known = {}
        for parent in parents:
            if parent not in parent_values:
                parent_values[parent] = values_of(*parent, whole=True)
            values = parent_values[parent]
            if values is not None:
                known[parent] = values
        unique = checker.uniqueness(child_table, [child_column]).unique is not False
        found = improbable_parent(child, known, child_unique=unique)
        if found is None or _names_its_own_row(
            graph, checker, child_table, child_column, found, unique=unique
        ):
            continue
        parent_table, parent_column = found.parent
        edges.append(
            Edge(
                child_table=child_table,
                child_columns=[child_column],
                parent_table=parent_table,
                parent_columns=[parent_column],
                source="value_overlap",
                confidence=0.7,
                evidence=Evidence(
                    rule="improbable_inclusion",
                    inclusion=round(found.found / found.distinct, 4),
                    notes=[
                        f"{_share_found(found)} distinct values found in parent; by chance "
                        f"about 1 in 10^{-found.chance_log10:g}"
                    ],
                ),
            )
        )
    return edges


def _names_its_own_row(
    graph: SchemaGraph,
    checker: DataChecker,
    table: str,
    column: str,
    found: Containment,
    *,
    unique: bool,
) -> bool:
    """A unique column of the key's own table that mostly equals its own row's key names the
    same row another way (`People.bbrefID` beside `playerID`): a second key, not a reference to
    another row (`TeamsFranchises.NAassoc`, the franchise a club became, differs from its own
    row's; a record's `canonical`, often itself, is not unique). Unknown: a reference, as
    before the question was asked."""
    if found.parent[0] != table or not unique:
        return False
    share = checker.same_row_share(
        table, column, found.parent[1], same_types=_numbers_or_alike(graph, table, column, found)
    )
    return share is not None and share >= 0.5


def _numbers_or_alike(graph: SchemaGraph, table: str, column: str, found: Containment) -> bool:
    holder = graph.table(table)
    first = holder.column(column) if holder else None
    second = holder.column(found.parent[1]) if holder else None
    if first is None or second is None:
        return False
    return _comparable_as_typed(first.type, second.type)


def _share_found(found: Containment) -> str:
    if found.found == found.distinct:
        return f"all {found.distinct}"
    return f"{found.found} of {found.distinct}"


def add_bridges(graph: SchemaGraph, skip: tuple[str, ...] = ("view_lineage",)) -> None:
    """A table whose key is two foreign keys relates their parents many-to-many (joins of the
    sources in `skip` take no part)."""
    outgoing: dict[str, list[Edge]] = defaultdict(list)
    for edge in graph.edges:
        if edge.via is None and edge.source not in skip:
            outgoing[edge.child_table].append(edge)
    for bridge_name, edges in outgoing.items():
        bridge = graph.table(bridge_name)
        if bridge is None or bridge.kind != "table":
            continue
        key = {c.lower() for c in bridge.primary_key}
        all_columns = {c.name.lower() for c in bridge.columns}
        for i, first in enumerate(edges):
            for second in edges[i + 1 :]:
                used = {c.lower() for c in first.child_columns + second.child_columns}
                is_bridge = (key and used == key) or (not key and len(all_columns - used) <= 1)
                if not is_bridge:
                    continue
                both_declared = first.source == second.source == "foreign_key"
                graph.edges.append(
                    Edge(
                        child_table=first.parent_table,
                        child_columns=first.parent_columns,
                        parent_table=second.parent_table,
                        parent_columns=second.parent_columns,
                        cardinality="many_to_many",
                        source="foreign_key" if both_declared else second.source,
                        confidence=round(min(first.confidence, second.confidence), 3),
                        evidence=Evidence(
                            cardinality_basis="declared" if both_declared else "measured",
                            rule="bridge_table",
                            notes=[
                                f"through {bridge_name}: {first.describe()}; {second.describe()}"
                            ],
                        ),
                        via=bridge_name,
                    )
                )
