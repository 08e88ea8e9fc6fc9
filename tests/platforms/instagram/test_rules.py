"""Instagram's post rules: a story is one image or one video and takes no first comment; a reel is one
video; a first comment is at most 2,200 characters."""

from __future__ import annotations

from tests.platforms.rule_checks import IMAGE, VIDEO, problems


def test_stories_reels_and_first_comments():
    assert problems("instagram", media=(IMAGE,), options={"mediaType": "STORIES"}) == {}
    story = problems("instagram", media=(IMAGE, IMAGE), options={"mediaType": "STORIES", "firstComment": "hi"})
    assert story == {"targets[0].options.firstComment": "a story takes no comments",
                     "mediaIds": "an Instagram story is one image or one video"}
    assert problems("instagram", media=(IMAGE,), options={"mediaType": "REELS"}) == {
        "mediaIds": "an Instagram reel is one video"}
    assert problems("instagram", media=(VIDEO,), options={"firstComment": "c" * 2200}) == {}
    assert "2200" in problems("instagram", media=(VIDEO,), options={"firstComment": "c" * 2201})[
        "targets[0].options.firstComment"]
