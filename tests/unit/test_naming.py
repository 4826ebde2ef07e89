import pytest

from schemawise.graph.naming import (
    entity_words,
    glued_abbreviation,
    is_generic,
    singular,
    split_identifier,
    type_affinity,
    words_match,
)


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("order_items", ("order", "items")),
        ("custId", ("cust", "id")),
        ("StuID", ("stu", "id")),
        ("CountryCode", ("country", "code")),
        ("HTTPRequestLog", ("http", "request", "log")),
        ("address_line2", ("address", "line", "2")),
        ("Total-Spent", ("total", "spent")),
        # Two capitals before a word: the pair stays whole when what follows is a word and
        # the second capital with it is not.
        ("teamIDwinner", ("team", "id", "winner")),
        ("GSoffered", ("gs", "offered")),
        ("FieldingOFsplit", ("fielding", "of", "split")),
        ("LName", ("l", "name")),  # `name` is a word: one letter to each side
        ("AdmFName1", ("adm", "f", "name", "1")),
        ("teamIDlahman45", ("team", "i", "dlahman", "45")),  # `lahman` is no word: as before
        ("AVGscore", ("avg", "score")),  # a longer run of capitals alike
        ("CEOname", ("ceo", "name")),
        ("", ()),
    ],
)
def test_split_identifier(name: str, words: tuple[str, ...]) -> None:
    assert split_identifier(name) == words


@pytest.mark.parametrize(
    ("plural", "single"),
    [
        ("customers", "customer"),
        ("categories", "category"),
        ("addresses", "address"),
        ("boxes", "box"),
        ("status", "status"),
        ("class", "class"),
        ("bus", "bus"),
        ("ids", "ids"),
    ],
)
def test_singular(plural: str, single: str) -> None:
    assert singular(plural) == single


@pytest.mark.parametrize(
    ("a", "b", "score"),
    [
        ("customer", "customers", 1.0),
        ("cust", "customer", 0.8),
        ("prod", "products", 0.8),
        ("stu", "student", 0.7),
        ("hero", "superhero", 0.7),
        ("id", "idea", 0.0),  # too short to be an abbreviation
        ("order", "customer", 0.0),
    ],
)
def test_words_match(a: str, b: str, score: float) -> None:
    assert words_match(a, b) == score


@pytest.mark.parametrize(
    ("word", "words", "expected"),
    [
        ("cdemo", ("customer", "demographic"), True),
        ("hdemo", ("household", "demographic"), True),
        ("custaddr", ("customer", "address"), True),
        # The first letters must be the table's own, in order.
        ("hdemo", ("customer", "demographic"), False),
        ("democ", ("customer", "demographic"), False),
        # Every word contributes, and the last piece says enough (3 letters or more).
        ("cde", ("customer", "demographic"), False),
        ("customer", ("customer", "address"), False),
        # One word is not glued from anything.
        ("demo", ("demographic",), False),
        # A word of English means itself: `item` is not i + tem of invoice_template.
        ("item", ("invoice", "template"), False),
        ("user", ("user", "service"), False),
        ("plan", ("page", "language"), False),
        ("sport", ("ship", "port"), False),
        # Digits in a table name are not words to abbreviate.
        ("cdemo", ("customer", "demographic", "2023"), True),
    ],
)
def test_glued_abbreviation(word: str, words: tuple[str, ...], expected: bool) -> None:
    assert glued_abbreviation(word, words) is expected


@pytest.mark.parametrize(
    ("table", "entity"),
    [
        ("model_list", ("model",)),
        ("dim_customers", ("customer",)),
        ("tv_channel", ("tv", "channel")),
        ("list", ("list",)),  # nothing left: keep the name as it is
    ],
)
def test_entity_words(table: str, entity: tuple[str, ...]) -> None:
    assert entity_words(table) == entity


@pytest.mark.parametrize(
    ("name", "generic"),
    [("id", True), ("name", True), ("status_code", True), ("customer_id", False)],
)
def test_is_generic(name: str, generic: bool) -> None:
    assert is_generic(name) is generic


@pytest.mark.parametrize(
    ("a", "b", "affinity"),
    [
        ("integer", "bigint", 1.0),
        ("INT", "numeric(10,2)", 1.0),
        ("text", "varchar(20)", 1.0),
        ("", "integer", 1.0),
        ("TEXT", "INTEGER", 0.7),
        ("date", "integer", 0.0),
        ("boolean", "text", 0.0),
    ],
)
def test_type_affinity(a: str, b: str, affinity: float) -> None:
    assert type_affinity(a, b) == affinity
