"""Facebook Pages' post rules: one video alone, or images; a first comment of at most 8,000 characters."""

from __future__ import annotations

from tests.platforms.rule_checks import IMAGE, VIDEO, problems


def test_one_video_alone_or_images_and_a_first_comment():
    assert problems("facebook", media=(IMAGE, IMAGE), options={"firstComment": "c" * 8000}) == {}
    assert problems("facebook", media=(VIDEO, IMAGE)) == {"mediaIds": "a Facebook post takes one video alone, or images"}
    assert "8000" in problems("facebook", options={"firstComment": "c" * 8001})["targets[0].options.firstComment"]
