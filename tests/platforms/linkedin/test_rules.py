"""LinkedIn's post rules: one video alone of 75 KB to 500 MB, or images; a first comment of at most
1,250 characters."""

from __future__ import annotations

from platforms.rules import MediaInfo
from tests.platforms.rule_checks import IMAGE, VIDEO, problems


def test_one_video_of_75_kb_to_500_mb_alone():
    assert problems("linkedin", media=(VIDEO,)) == {}
    assert problems("linkedin", media=(MediaInfo("video/mp4", 1000),)) == {
        "mediaIds": "a LinkedIn video must be 75 KB to 500 MB"}
    assert "one video alone" in problems("linkedin", media=(VIDEO, IMAGE))["mediaIds"]


def test_a_first_comment_is_at_most_1250_characters():
    assert problems("linkedin", options={"firstComment": "c" * 1250}) == {}
    assert "1250" in problems("linkedin", options={"firstComment": "c" * 1251})["targets[0].options.firstComment"]
