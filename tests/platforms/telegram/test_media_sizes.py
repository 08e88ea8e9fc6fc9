"""Telegram fetches a media by URL only up to 5 MB for a photo and 20 MB for other files; larger ones
must be uploaded (multipart, a photo up to 10 MB, other files up to 50 MB), and anything larger is
refused before any call (https://core.telegram.org/bots/api#sending-files). The sandbox holds the same
rules, so a large file sent by URL is refused there as Telegram refuses it."""

from __future__ import annotations

import pytest

from platforms.base import MediaItem, Rejected
from tests.support.publish import publish

MB = 1024 * 1024


def _media(sandbox, name: str, kind: str, size: int) -> MediaItem:
    sandbox.media[name] = (b"\x00" * size, kind)
    return MediaItem(f"{sandbox.base}/media/{name}", kind, size)


def test_a_small_photo_goes_by_url_and_a_larger_one_is_uploaded(sandbox):
    acc = sandbox.connected("telegram")
    adapter = sandbox.adapters["telegram"]
    small = _media(sandbox, "small.jpg", "image/jpeg", 5 * MB)
    publish(adapter, acc, text="Small", media=[small], options={"chatId": "@sandboxnews"})
    assert sandbox.sent("telegram", acc)[-1]["payload"]["photo"] == small.url

    large = _media(sandbox, "large.jpg", "image/jpeg", 6 * MB)
    post = publish(adapter, acc, text="Large", media=[large], options={"chatId": "@sandboxnews"})
    sent = sandbox.sent("telegram", acc)[-1]
    assert sent["platformId"] == post.platform_post_id
    assert sent["payload"]["photo"] == {"upload": {"name": "photo", "size": 6 * MB, "contentType": "image/jpeg"}}
    assert sent["payload"]["caption"] == "Large"


def test_a_video_over_20_mb_is_uploaded_and_an_album_uploads_only_what_telegram_cannot_fetch(sandbox):
    acc = sandbox.connected("telegram")
    adapter = sandbox.adapters["telegram"]
    video = _media(sandbox, "big.mp4", "video/mp4", 21 * MB)
    photo = _media(sandbox, "pic.jpg", "image/jpeg", 1 * MB)
    publish(adapter, acc, text="Album", media=[photo, video], options={"chatId": "@sandboxnews"})
    sent = sandbox.sent("telegram", acc)[-1]["payload"]
    assert [(item["type"], item["media"]) for item in sent["media"]] == [
        ("photo", photo.url), ("video", "attach://file1")]
    assert sent["file1"]["upload"]["size"] == 21 * MB


def test_media_telegram_takes_neither_way_are_refused_before_any_call(sandbox):
    acc = sandbox.connected("telegram")
    adapter = sandbox.adapters["telegram"]
    before = len(sandbox.sent("telegram", acc))
    too_big = [MediaItem("https://cdn.example.com/huge.mp4", "video/mp4", 51 * MB),
               MediaItem("https://cdn.example.com/huge.jpg", "image/jpeg", 11 * MB)]
    for item in too_big:
        with pytest.raises(Rejected) as refused:
            publish(adapter, acc, text="Huge", media=[item], options={"chatId": "@sandboxnews"})
        assert refused.value.code == "media_too_large"
        assert "MB" in refused.value.reason
    assert len(sandbox.sent("telegram", acc)) == before


def test_the_sandbox_refuses_a_photo_over_5_mb_by_url_as_telegram_does(sandbox):
    acc = sandbox.connected("telegram")
    large = _media(sandbox, "by-url.jpg", "image/jpeg", 6 * MB)
    token = acc.credentials["botToken"]
    answer = sandbox.client.post(f"{sandbox.base}/sandbox/telegram/bot{token}/sendPhoto",
                                 json={"chat_id": "@sandboxnews", "photo": large.url})
    assert answer.status_code == 400
    assert answer.json()["description"] == "Bad Request: failed to get HTTP URL content"
