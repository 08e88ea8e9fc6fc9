"""Meta Ads' post rules: a creative names its Page and its link; it takes no first comment."""

from __future__ import annotations

from tests.platforms.rule_checks import problems


def test_a_creative_needs_its_page_and_link():
    assert problems("meta_ads", options={"pageId": "1", "link": "https://example.com"}) == {}
    assert problems("meta_ads", options={"pageId": "1"}) == {
        "targets[0].options": "a Meta Ads creative needs pageId and link"}
    assert "Instagram, Facebook, LinkedIn and X only" in problems(
        "meta_ads", options={"pageId": "1", "link": "https://example.com", "firstComment": "hi"})[
        "targets[0].options.firstComment"]
