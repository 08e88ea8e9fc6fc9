"""Keyword matching: case and accents ignored; `exact` takes the whole text, `contains` any part."""

import pytest

from kit.matching import fold, matches


@pytest.mark.parametrize(("text", "keyword"), [
    ("Café", "cafe"), ("cafe", "Café"), ("PREÇO", "preco"), ("Straße", "strasse"), ("ｉｎｆｏ", "info"),
    ("Cafe\u0301", "café"),  # a decomposed accent
])
def test_case_and_accents_never_matter(text, keyword):
    assert fold(text) == fold(keyword)
    assert matches(text, [keyword], "exact")
    assert matches(f"quero {text} agora", [keyword], "contains")


@pytest.mark.parametrize(("text", "expected"), [
    ("info", True), ("  INFO!! ", True), ("¿info?", True), ("info 🙏", True), ("more info", False),
    ("info please", False), ("", False),
])
def test_exact_wants_the_whole_text_but_blanks_and_punctuation_around_it(text, expected):
    assert matches(text, ["Info"], "exact") is expected


def test_contains_and_any():
    assert matches("what is the price?", ["PRICE", "cost"], "contains")
    assert not matches("what is it?", ["price"], "contains")
    assert not matches("anything", [], "contains")
    assert matches(None, [], "any")
    assert matches("price  list", ["price list"], "exact")
