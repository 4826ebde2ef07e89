import pytest

from schemawise.db.urls import (
    absolute_url,
    missing_file,
    parse_url,
    password_hint,
    redact,
    same_stored_url,
    without_redacted_password,
)
from schemawise.errors import InvalidURLError
from schemawise.graph.lineage import tables_read


@pytest.mark.parametrize(
    ("url", "kind", "target"),
    [
        ("postgresql://u:p@h:5432/db", "postgres", "postgresql://u:p@h:5432/db"),
        ("postgres://h/db", "postgres", "postgres://h/db"),
        ("sqlite:///data/x.sqlite", "sqlite", "data/x.sqlite"),
        ("duckdb:///w.duckdb", "duckdb", "w.duckdb"),
        ("file.sqlite", "sqlite", "file.sqlite"),
        ("embedded", "embedded", ""),
        ("embedded/sales", "embedded", "sales"),
    ],
)
def test_parse_url(url: str, kind: str, target: str) -> None:
    parsed = parse_url(url)
    assert (parsed.kind, parsed.target) == (kind, target)


def test_three_slashes_find_an_absolute_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    db = tmp_path / "a.sqlite"
    db.write_bytes(b"")
    assert parse_url(f"sqlite://{db}").target == str(db)  # sqlite:// + /tmp/... = three slashes


@pytest.mark.parametrize("url", ["embedded/", "embedded/x;drop", "embedded/a b"])
def test_an_embedded_database_name_must_be_an_identifier(url: str) -> None:
    with pytest.raises(InvalidURLError) as caught:
        parse_url(url)
    assert "embedded/sales" in caught.value.hint


@pytest.mark.parametrize("url", ["", "mysql://h/db", "nonsense"])
def test_bad_urls_raise_with_hint(url: str) -> None:
    with pytest.raises(InvalidURLError) as info:
        parse_url(url)
    assert "sqlite:///" in info.value.hint


def test_redact_hides_password() -> None:
    assert redact("postgresql://me:secret@h/db") == "postgresql://me:***@h/db"
    assert redact("sqlite:///x") == "sqlite:///x"


@pytest.mark.parametrize(
    ("sql", "dialect", "tables"),
    [
        ("SELECT o.id FROM shop.orders o JOIN shop.customers c ON c.id = o.cid", "postgres",
         ["shop.orders", "shop.customers"]),
        ("WITH x AS (SELECT * FROM a) SELECT * FROM x JOIN b ON true", "postgres", ["a", "b"]),
        ("CREATE VIEW v AS SELECT * FROM t1 UNION SELECT * FROM t2", "sqlite", ["t1", "t2"]),
        ("not a view (((", "postgres", []),
    ],
)  # fmt: skip
def test_tables_read(sql: str, dialect: str, tables: list[str]) -> None:
    assert sorted(tables_read(sql, dialect)) == sorted(tables)


@pytest.mark.parametrize("kind", ["sqlite", "duckdb"])
def test_a_file_is_stored_by_its_absolute_path(tmp_path, monkeypatch, kind: str) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / f"a.{kind}").write_bytes(b"")
    monkeypatch.chdir(tmp_path)
    assert absolute_url(f"{kind}:///a.{kind}") == f"{kind}:///{tmp_path / f'a.{kind}'}"
    assert absolute_url(f"{kind}:///gone.{kind}") == f"{kind}:///gone.{kind}"  # as given
    assert absolute_url("postgresql://u:p@h/db") == "postgresql://u:p@h/db"


def test_a_missing_relative_file_is_reported_by_both_readings(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    assert missing_file("tmp/x.sqlite") == f"tmp/x.sqlite (from {tmp_path}), nor at /tmp/x.sqlite"
    assert missing_file("/tmp/x.sqlite") == "/tmp/x.sqlite"


@pytest.mark.parametrize(
    "url",
    [
        "host=127.0.0.1 port=1 user=u password=hunter2 connect_timeout=2",
        "postgresql://u@127.0.0.1:1/db?password=hunter2&connect_timeout=2",
        "host=h password='hunter2' user=x",
    ],
)
def test_a_password_given_as_a_parameter_is_hidden_too(url: str) -> None:
    assert "hunter2" not in redact(url) and "password=***" in redact(url)


@pytest.mark.parametrize(
    "url",
    [
        "mysql://reader:hunter2@127.0.0.1:3306/wh",
        "host=127.0.0.1 dbname=wh user=reader password=hunter2",
    ],
)
def test_an_unsupported_url_is_refused_without_its_password(url: str) -> None:
    with pytest.raises(InvalidURLError) as refused:
        parse_url(url)
    assert "hunter2" not in str(refused.value) and "***" in str(refused.value)


def test_a_link_is_stored_as_the_link(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "real.sqlite").write_bytes(b"")
    (tmp_path / "current.sqlite").symlink_to(tmp_path / "real.sqlite")
    monkeypatch.chdir(tmp_path)
    assert absolute_url("sqlite:///current.sqlite") == f"sqlite:///{tmp_path / 'current.sqlite'}"


@pytest.mark.parametrize("path", ["nothere.sqlite", "../gone.sqlite"])
def test_a_bare_or_climbing_path_is_not_read_as_absolute(path: str) -> None:
    assert "nor at" not in missing_file(path)


@pytest.mark.parametrize(
    ("stored", "connectable"),
    [
        ("postgresql://u:***@h:5432/db", "postgresql://u@h:5432/db"),
        ("postgresql://u:***@h/db?sslmode=require", "postgresql://u@h/db?sslmode=require"),
        ("postgresql://u@h/db?password=***", "postgresql://u@h/db"),
        ("postgresql://u@h/db?password=***&sslmode=require", "postgresql://u@h/db?sslmode=require"),
        ("postgresql://u@h/db?sslmode=require&password=***", "postgresql://u@h/db?sslmode=require"),
        (
            "postgresql://u@h/db?sslmode=require&password=***&application_name=x",
            "postgresql://u@h/db?sslmode=require&application_name=x",
        ),
        # An `@` in a parameter belongs to no user: the host stays the host.
        (
            "postgresql://h:5432/db?user=alice@corp&password=***",
            "postgresql://h:5432/db?user=alice@corp",
        ),
        # A real password, or none, is left as it is.
        ("postgresql://u:s3cret@h/db", "postgresql://u:s3cret@h/db"),
        ("postgresql://u@h/db", "postgresql://u@h/db"),
        ("sqlite:////data/x.sqlite", "sqlite:////data/x.sqlite"),
    ],
)
def test_a_stored_url_connects_without_the_placeholder_of_its_password(
    stored: str, connectable: str
) -> None:
    assert without_redacted_password(stored) == connectable


@pytest.mark.parametrize(
    ("url", "hinted"),
    [
        ("postgresql://u@h/db", True),
        ("host=h user=u dbname=db", True),
        ("postgresql://u:s3cret@h/db", False),
        ("postgresql://u@h/db?password=s3cret", False),
        ("sqlite:////data/x.sqlite", False),
    ],
)
def test_a_failed_login_without_a_password_says_where_libpq_looks(url: str, hinted: bool) -> None:
    hint = password_hint(url)
    assert bool(hint) == hinted
    if hinted:
        assert "PGPASSWORD" in hint and ".pgpass" in hint


def test_an_at_sign_in_a_parameter_is_not_read_as_a_user() -> None:
    url = "postgresql://db.internal:5432/sales?user=alice@corp&password=s3cret"
    assert redact(url) == "postgresql://db.internal:5432/sales?user=alice@corp&password=***"
    assert redact("postgresql://u:p@h/db?x=a@b") == "postgresql://u:***@h/db?x=a@b"


@pytest.mark.parametrize(
    ("first", "second", "same"),
    [
        ("postgresql://u:***@h/db", "postgresql://u@h/db", True),
        ("postgresql://u:s3cret@h/db", "postgresql://u:***@h/db", True),
        ("postgresql://u@h/db", "postgresql://u@h/other", False),
        ("postgresql://u@h/db?password=***", "postgresql://u@h/db", True),
        ("postgres://u:***@h/db", "postgresql://u@h/db", True),
    ],
)
def test_a_stored_url_is_the_same_database_with_or_without_its_password(
    first: str, second: str, same: bool
) -> None:
    assert same_stored_url(first, second) is same


@pytest.mark.parametrize(
    ("url", "secret"),
    [
        # libpq ends the authority at the first `/` only: `?` and `#` may be in a password.
        ("postgresql://u:s3cr?t@db.example.com:5432/prod?sslmode=require", "s3cr?t"),
        ("postgresql://u:p#ss@h/db", "p#ss"),
        # Key/value strings: `&` is part of a value, `\'` escapes a quote.
        ("host=h password=a&b dbname=d", "a&b"),
        ("host=h password='p\\'w x' dbname=d", "w x"),
        # The client key's passphrase, and a parameter name libpq decodes.
        ("host=h sslpassword=keypw user=u", "keypw"),
        ("postgresql://u@h/db?sslpassword=kp&sslmode=require", "kp"),
        ("postgresql://u@h/db?pass%77ord=pw9", "pw9"),
    ],
)
def test_no_password_survives_redaction(url: str, secret: str) -> None:
    assert secret not in redact(url), redact(url)


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://u:s3cr?t@db.example.com:5432/prod?sslmode=require",
        "postgresql://u:p@[::1]:5432/db",
        "postgresql://h:5432/db?user=alice@corp&password=s3cret",
        "postgresql://u@/rv?host=/tmp/x",
    ],
)
def test_a_redacted_url_connects_where_the_url_did(url: str) -> None:
    from psycopg.conninfo import conninfo_to_dict

    given = {k: v for k, v in conninfo_to_dict(url).items() if k != "password"}
    assert conninfo_to_dict(without_redacted_password(redact(url))) == given
