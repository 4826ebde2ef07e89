"""A question's words and an identifier's in any script: letters with accents or of other
alphabets, and combining marks, stay whole, as the index's own text search keeps them; the
underscore still splits."""

from __future__ import annotations

import pytest

from schemawise.graph.naming import split_identifier, word_runs
from schemawise.retrieve.words import (
    content_words,
    proper_names,
    question_words,
    read_question,
    text_words,
)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("customers in São Paulo", {"customer", "são", "paulo"}),
        ("invoices of Bjørn Hansen", {"invoice", "bjørn", "hansen"}),
        ("albums by Motörhead", {"album", "motörhead"}),
        ("ventes à Zürich", {"vente", "zürich"}),
        ("first_name of the Москва office", {"first", "москва", "office"}),
    ],
)
def test_words_with_letters_of_any_script_stay_whole(text: str, words: set[str]) -> None:
    assert question_words(text) == words
    assert words <= text_words(text)


def test_content_words_keep_accented_words_and_drop_numbers() -> None:
    assert content_words("how many orders in Köln since 2013") == ["orders", "köln", "since"]


@pytest.mark.parametrize(
    ("text", "runs"),
    [
        ("ग्राहक कितने हैं", ["ग्राहक", "कितने", "हैं"]),  # vowel signs are marks, not breaks
        ("ลูกค้า", ["ลูกค้า"]),
        ("Mo\u0308torhead", ["Mötorhead"]),  # decomposed: normalised, then whole
        ("first_name, 2nd-half", ["first", "name", "2nd", "half"]),
    ],
)
def test_word_runs_keep_marks_and_split_on_the_rest(text: str, runs: list[str]) -> None:
    assert word_runs(text) == runs


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("order_items", ("order", "items")),
        ("StuID", ("stu", "id")),
        ("HTMLParser", ("html", "parser")),
        ("ss_sold_date_sk", ("ss", "sold", "date", "sk")),
        ("Größe", ("größe",)),
        ("KundenÄnderung", ("kunden", "änderung")),
        ("CPU使用率", ("cpu", "使用率")),  # a caseless script after an acronym
        ("ID番号", ("id", "番号")),
        ("APIキー", ("api", "キー")),
        ("Percent (%) Eligible Free (K-12)", ("percent", "eligible", "free", "k", "12")),
    ],
)
def test_identifiers_split_in_any_script(name: str, words: tuple[str, ...]) -> None:
    assert split_identifier(name) == words


@pytest.mark.parametrize(
    ("question", "asked_without", "asked_with"),
    [
        ("CPU utilisation over the last hour", "last", "hour"),
        ("hotel rooms for next weekend", "next", "weekend"),
        ("hail storms in the past 10 years", "past", "year"),
        ("orders of the previous 7 days", "previous", "day"),
        ("sales in the last two weeks", "last", "week"),
        ("orders over the last few days", "last", "day"),
        ("blood pressure exceeded 140 last week", "last", "week"),
    ],
)
def test_a_relative_time_phrase_points_in_time_and_names_nothing(
    question: str, asked_without: str, asked_with: str
) -> None:
    asked = read_question(question).asked
    assert asked_without not in asked and asked_with in asked


@pytest.mark.parametrize(
    "question",
    [
        "the last name of each student",
        "the last album",
        "next of kin by customer",
        # "last" as the final one, not as pointing in time
        "the last year each player played",
        "players whose last season was 2010",
        "first and last hour of each shift",
    ],
)
def test_the_same_words_elsewhere_still_count(question: str) -> None:
    assert {"last", "next"} & read_question(question).asked


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("Who lives in Paris?", ["Paris"]),
        ("Who is Jane Peacock's boss?", ["Jane", "Peacock"]),
        ("Paris customers. List the ones in the USA", ["USA"]),  # no sentence's first word
        ('Tell the phone number of "Carlo Jacobs".', ["Carlo", "Jacobs"]),
        ("how many orders shipped", []),
    ],
)
def test_proper_names_are_capitalised_words_no_sentence_starts_with(
    text: str, names: list[str]
) -> None:
    assert proper_names(text) == names
