"""What each SELECT of a (qualified) query joins: its base tables, its predicates, and which
graph edge each equality between two tables matches."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp
from sqlglot.optimizer.scope import Scope, traverse_scope

from schemawise.graph.model import Edge, EdgeSource, Evidence, SchemaGraph
from schemawise.validate.resolve import find_table


@dataclass
class JoinPair:
    left_alias: str
    left_column: str
    right_alias: str
    right_column: str
    edge: Edge | None = None
    # True when the edge's child is the left side.
    child_is_left: bool = True


@dataclass
class ScopeJoins:
    scope: Scope
    tables: dict[str, str] = field(default_factory=dict)  # alias → graph table
    others: set[str] = field(default_factory=set)  # derived tables, CTEs, table functions
    single_row: set[str] = field(default_factory=set)  # derived sources returning one row
    links: list[set[str]] = field(default_factory=list)  # aliases each predicate ties
    pairs: list[JoinPair] = field(default_factory=list)
    cross_joins: list[str] = field(default_factory=list)  # aliases joined with no condition
    explicit_cross: set[str] = field(default_factory=set)


def _conjuncts(condition: exp.Expr | None) -> list[exp.Expr]:
    if condition is None:
        return []
    if isinstance(condition, exp.And):
        return _conjuncts(condition.left) + _conjuncts(condition.right)
    if isinstance(condition, exp.Paren):
        return _conjuncts(condition.this)
    return [condition]


def _compared_columns(predicate: exp.Expr) -> tuple[exp.Column, exp.Column] | None:
    """The two columns an equality compares, under casts and parentheses (`CAST(oi.order_id
    AS INT) = o.order_id` joins the same rows as the bare columns would)."""
    if not isinstance(predicate, exp.EQ | exp.NullSafeEQ):
        return None
    sides = []
    for node in (predicate.left, predicate.right):
        while isinstance(node, exp.Cast | exp.Paren):
            node = node.this
        if not isinstance(node, exp.Column):
            return None
        sides.append(node)
    return sides[0], sides[1]


def _defines(select: exp.Select, alias: str) -> bool:
    from_ = select.args.get("from_")
    items = [from_.this] if from_ is not None else []
    items += [j.this for j in select.args.get("joins") or []]
    return any(i.alias_or_name == alias for i in items)


def _shadowed(column: exp.Column, predicate: exp.Expr) -> bool:
    """Whether a SELECT nested in `predicate` defines the column's alias for itself, as BIRD's
    `… > (SELECT … FROM schools AS t1 JOIN frpm AS t2 …)` does with the outer t1 and t2."""
    ancestor = column.parent
    while ancestor is not None and ancestor is not predicate:
        if isinstance(ancestor, exp.Select) and _defines(ancestor, column.table):
            return True
        ancestor = ancestor.parent
    return False


def _aliases(node: exp.Expr, known: set[str], predicate: exp.Expr) -> set[str]:
    """Aliases of this scope that `node`, a part of `predicate`, references directly or from
    a correlated subquery; not a subquery's own sources that reuse an outer alias's name."""
    found = set()
    for column in node.find_all(exp.Column):
        table = column.table
        if table in known and table not in found and not _shadowed(column, predicate):
            found.add(table)
    return found


_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ, exp.Like,
                exp.ILike, exp.Is)  # fmt: skip


def _links(predicate: exp.Expr, known: set[str]) -> list[set[str]]:
    """Alias sets a predicate compares with each other. `a.x = b.y` links a and b;
    `a.x = 1 OR b.y > 2` filters each on its own and links nothing."""
    links = []
    for node in predicate.find_all(*_COMPARISONS, exp.Between, exp.In):
        parts: list[exp.Expr | None]
        if isinstance(node, exp.Between):
            parts = [node.this, node.args.get("low"), node.args.get("high")]
        elif isinstance(node, exp.In):
            parts = [node.this, *node.expressions, node.args.get("query")]
        else:
            parts = [node.args.get("this"), node.args.get("expression")]
        sides = [_aliases(p, known, predicate) for p in parts if p is not None]
        touched = set().union(*sides) if sides else set()
        if len([s for s in sides if s]) >= 2 and len(touched) >= 2:
            links.append(touched)
    for sub in predicate.find_all(exp.Exists, exp.Subquery):
        touched = _aliases(sub, known, predicate)
        if len(touched) >= 2:
            links.append(touched)
    return links


def _filter_of_one_table(source: Scope, graph: SchemaGraph) -> str | None:
    """The table a derived source only filters: one table, no join, no grouping, DISTINCT,
    aggregate or window, every output a column of it under its own name (`(SELECT order_id,
    amt FROM orders WHERE amt > 0) x`). Joined on, it is that table's rows: a join to its many
    side repeats them as it would the table's."""
    select = source.expression
    if not isinstance(select, exp.Select) or select.args.get("joins"):
        return None
    if any(select.args.get(part) for part in ("group", "distinct", "qualify", "having")):
        return None
    sources = list(source.selected_sources.values())
    if len(sources) != 1 or not isinstance(sources[0][1], exp.Table):
        return None
    table = find_table(graph, sources[0][1])
    if table is None:
        return None
    for output in select.expressions:
        if isinstance(output, exp.Star):
            continue
        column = output.unalias()
        if not isinstance(column, exp.Column) or output.alias_or_name != column.name:
            return None
    return table.name


def _returns_one_row(source: Scope) -> bool:
    select = source.expression
    if not isinstance(select, exp.Select):
        return False
    limit = select.args.get("limit")
    if limit is not None and limit.expression is not None and limit.expression.sql() == "1":
        return True
    if select.args.get("group"):
        return False
    return all(
        isinstance(e.unalias(), exp.AggFunc) or e.unalias().find(exp.AggFunc) is not None
        for e in select.expressions
    )


def _edge_index(graph: SchemaGraph) -> dict[frozenset[str], list[Edge]]:
    index: dict[frozenset[str], list[Edge]] = {}
    for e in graph.edges:
        if e.via is None:
            index.setdefault(frozenset((e.child_table, e.parent_table)), []).append(e)
    return index


def _by_child(graph: SchemaGraph) -> dict[str, list[Edge]]:
    index: dict[str, list[Edge]] = {}
    for e in graph.edges:
        if e.via is None:
            index.setdefault(e.child_table, []).append(e)
    return index


def edges_between(graph: SchemaGraph, first: str, second: str) -> list[Edge]:
    found = graph.cached("edges_by_pair", _edge_index).get(frozenset((first, second)), [])
    if first == second:
        return [e for e in found if e.child_table == e.parent_table]
    return found


def sibling_edges(graph: SchemaGraph, first: str, second: str) -> list[Edge]:
    """Joins between two tables through a parent both reference: many-to-many, unless a side
    holds at most one row per parent row (`shipments.ord_id` and `payments.ord_id`, each one
    to one with `orders`)."""
    found = []
    by_child = graph.cached("edges_by_child", _by_child)
    for a in by_child.get(first, []):
        if len(a.child_columns) != 1:
            continue
        for b in by_child.get(second, []):
            if (
                len(b.child_columns) == 1
                and b.parent_table == a.parent_table
                and [c.lower() for c in b.parent_columns] == [c.lower() for c in a.parent_columns]
                and first != second
            ):
                evidence = Evidence(rule="shared_parent")
                columns = (a.child_columns[0], b.child_columns[0])
                found.append(through_parent(a, b, evidence, a.source, *columns))
    return found


def through_parent(
    first: Edge, second: Edge, evidence: Evidence, source: EdgeSource, first_column: str,
    second_column: str,
) -> Edge:  # fmt: skip
    """The join of two children of one parent key on their references to it. Its cardinality
    is what the two references say: each one to one with the parent, one row meets one; one
    side one to one, each of its rows meets the other's many (the other is the child, the
    one-to-one side its parent); neither, many-to-many."""
    # As a direct join reads them: a one-to-one is trusted whether its uniqueness was declared
    # or measured (on a large table, on a sample), so the two kinds of join agree.
    first_single = first.cardinality == "one_to_one"
    second_single = second.cardinality == "one_to_one"
    if first_single != second_single:
        # Oriented so that the one-to-one side is the parent: `many_to_one` then reads rightly.
        one, many = (first, second) if first_single else (second, first)
        one_column, many_column = (
            (first_column, second_column) if first_single else (second_column, first_column)
        )
        return Edge(
            child_table=many.child_table, child_columns=[many_column],
            parent_table=one.child_table, parent_columns=[one_column],
            cardinality="many_to_one", source=source, evidence=evidence, via=first.parent_table,
        )  # fmt: skip
    return Edge(
        child_table=first.child_table, child_columns=[first_column],
        parent_table=second.child_table, parent_columns=[second_column],
        cardinality="one_to_one" if first_single and second_single else "many_to_many",
        source=source, evidence=evidence, via=first.parent_table,
    )  # fmt: skip


def _references(graph: SchemaGraph, table: str, column: str) -> dict[tuple[str, str], Edge]:
    """(parent table, parent column) pairs that `table.column` references, each with the edge
    (single-column references: a part of a composite key is not one to one on its own)."""
    out: dict[tuple[str, str], Edge] = {}
    for edge in graph.cached("edges_by_child", _by_child).get(table, []):
        for c, p in zip(edge.child_columns, edge.parent_columns, strict=True):
            if c.lower() == column:
                single = (
                    edge
                    if len(edge.child_columns) == 1
                    else edge.model_copy(update={"cardinality": "many_to_one"})
                )
                out.setdefault((edge.parent_table, p.lower()), single)
    return out


def _match(pair: JoinPair, graph: SchemaGraph, left: str, right: str) -> None:
    lc, rc = pair.left_column.lower(), pair.right_column.lower()
    _match_direct(pair, graph, left, right, lc, rc)
    if pair.edge is not None:
        return
    # Siblings: both columns reference the same parent key (votes.UserId = posts.OwnerUserId,
    # both → users.Id). A legitimate join, many-to-many through that parent.
    # Its cardinality is the two references' (`through_parent`): two tables each one to one
    # with orders join one to one.
    on_left, on_right = _references(graph, left, lc), _references(graph, right, rc)
    shared = sorted(set(on_left) & set(on_right))
    if shared:
        parent, parent_column = shared[0]
        note = f"both reference {parent}.{parent_column}"
        evidence = Evidence(rule="shared_parent", notes=[note])
        pair.edge = through_parent(
            on_left[shared[0]], on_right[shared[0]], evidence, "foreign_key", pair.left_column,
            pair.right_column,
        )  # fmt: skip
        # By the child's column, not its table: in a self-join (`profiles p JOIN profiles r`)
        # both sides are one table, and the side that repeats is the one its column says.
        child_column = pair.edge.child_columns[0].lower()
        pair.child_is_left = child_column == lc if left == right else pair.edge.child_table == left


def _match_direct(
    pair: JoinPair, graph: SchemaGraph, left: str, right: str, lc: str, rc: str
) -> None:
    for edge in edges_between(graph, left, right):
        columns = list(zip(edge.child_columns, edge.parent_columns, strict=True))
        for child_col, parent_col in columns:
            cc, pc = child_col.lower(), parent_col.lower()
            if edge.child_table == left and (cc, pc) == (lc, rc):
                pair.edge, pair.child_is_left = edge, True
                return
            if edge.child_table == right and (cc, pc) == (rc, lc):
                pair.edge, pair.child_is_left = edge, False
                return


def analyse(tree: exp.Expression, graph: SchemaGraph) -> list[ScopeJoins]:
    out = []
    for scope in traverse_scope(tree):
        select = scope.expression
        if not isinstance(select, exp.Select):
            continue
        facts = ScopeJoins(scope)
        for alias, source in scope.selected_sources.items():
            node = source[1]
            if isinstance(node, exp.Table) and (table := find_table(graph, node)) is not None:
                facts.tables[alias] = table.name
            elif isinstance(node, Scope) and (wrapped := _filter_of_one_table(node, graph)):
                facts.tables[alias] = wrapped  # its rows and columns are the table's
            else:
                facts.others.add(alias)
                if isinstance(node, Scope) and _returns_one_row(node):
                    facts.single_row.add(alias)
        known = set(scope.selected_sources)
        predicates: list[exp.Expr] = []
        for join in select.args.get("joins") or []:
            alias = join.alias_or_name
            condition = join.args.get("on")
            using = join.args.get("using")
            if join.args.get("kind", "").upper() == "CROSS":
                facts.explicit_cross.add(alias)
            if join.args.get("method"):  # NATURAL: joined on every shared name
                facts.links.append({alias, *[a for a in known if a != alias]})
            elif condition is None and not using:
                facts.cross_joins.append(alias)
            predicates.extend(_conjuncts(condition))
        predicates.extend(
            _conjuncts(select.args["where"].this if select.args.get("where") else None)
        )
        for predicate in predicates:
            facts.links.extend(_links(predicate, known))
            compared = _compared_columns(predicate)
            if compared is None:
                continue
            left, right = compared
            if left.table in facts.tables and right.table in facts.tables:
                if left.table == right.table:
                    continue
                pair = JoinPair(left.table, left.name, right.table, right.name)
                _match(pair, graph, facts.tables[left.table], facts.tables[right.table])
                facts.pairs.append(pair)
        # Lateral and correlated sources tie themselves to the aliases they reference.
        for alias, source in scope.selected_sources.items():
            node = source[1]
            if isinstance(node, Scope):
                outer = {c.table for c in node.external_columns if c.table in known}
                if outer:
                    facts.links.append(outer | {alias})
        out.append(facts)
    return out
