"""TikTok's post rules: the privacy level is one the creator is offered now (read live), and a post
cannot be checked without that answer."""

from __future__ import annotations

from tests.platforms.rule_checks import VIDEO, problems

FIELD = "targets[0].options.privacyLevel"


def test_the_privacy_level_is_one_the_creator_is_offered():
    offered = {"privacyLevels": ["SELF_ONLY"]}
    assert problems("tiktok", media=(VIDEO,), options={"privacyLevel": "SELF_ONLY"}, live_options=offered) == {}
    assert "SELF_ONLY" in problems("tiktok", media=(VIDEO,), options={"privacyLevel": "PUBLIC_TO_EVERYONE"},
                                   live_options=offered)[FIELD]
    assert "try again" in problems("tiktok", media=(VIDEO,), options={"privacyLevel": "SELF_ONLY"})[FIELD]
    blocked = {"privacyLevels": [], "blockedReason": "the creator cannot post now"}
    assert problems("tiktok", media=(VIDEO,), live_options=blocked) == {FIELD: "the creator cannot post now"}
