"""YouTube's post rules: a scheduled `publishAt` in the future keeps the video private until then, and
a thumbnail is a JPEG or PNG of at most 2 MB."""

from __future__ import annotations

from platforms.rules import MediaInfo
from tests.platforms.rule_checks import VIDEO, problems


def test_publish_at_must_be_a_future_instant_and_the_video_private():
    assert problems("youtube", media=(VIDEO,), options={"publishAt": "2999-01-01T00:00:00Z"}) == {}
    past = problems("youtube", media=(VIDEO,), options={"publishAt": "2001-01-01T00:00:00Z", "privacyStatus": "public"})
    assert past == {"targets[0].options.publishAt": "must be in the future",
                    "targets[0].options.privacyStatus": past["targets[0].options.privacyStatus"]}
    assert "offset" in problems("youtube", media=(VIDEO,), options={"publishAt": "tomorrow"})[
        "targets[0].options.publishAt"]


def test_a_thumbnail_is_a_jpeg_or_png_of_at_most_2_mb():
    small, large = MediaInfo("image/png", 1_000_000), MediaInfo("image/png", 3 * 1024 * 1024)
    given = {"thumbnailMediaId": "m1"}
    assert problems("youtube", media=(VIDEO,), options=given, option_media={"m1": small}) == {}
    assert "2 MB" in problems("youtube", media=(VIDEO,), options=given, option_media={"m1": large})[
        "targets[0].options.thumbnailMediaId"]
    assert "not a completed media" in problems("youtube", media=(VIDEO,), options=given)[
        "targets[0].options.thumbnailMediaId"]
