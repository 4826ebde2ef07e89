"""The relevance floor's word reader (index/embed.py `word_reader`): the first model of
`WORD_READERS` that is installed, else None, so that the floor falls back to the search's
embedder and its own bar."""

from __future__ import annotations

import pytest

from schemawise.index import embed


@pytest.fixture(autouse=True)
def fresh_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embed, "_READER", [])


def test_no_reader_installed_is_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embed, "WORD_READERS", ("no-such-model",))
    assert embed.word_reader() is None


def test_the_first_reader_that_loads_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    # The default embedder stands in for an installed reader: no model file is needed.
    monkeypatch.setattr(embed, "WORD_READERS", ("no-such-model", embed.DEFAULT_MODEL))
    reader = embed.word_reader()
    assert reader is not None and reader.name == embed.DEFAULT_MODEL
    # Looked for once: the same object again.
    assert embed.word_reader() is reader
