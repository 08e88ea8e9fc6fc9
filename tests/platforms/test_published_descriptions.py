"""The check every adapter request goes through in the suite (`tests/support/platform_specs`) refuses
what the platforms' published descriptions refuse, and passes the requests the adapters make."""

from __future__ import annotations

import json

import httpx2
import pytest

from tests.support.platform_specs import check, seen_from

BASE = "http://127.0.0.1:1/sandbox"


def _problems(platform: str, method: str, path: str, **kwargs) -> list[str]:
    kwargs.setdefault("headers", {"Authorization": "Bearer sandbox-token"})
    seen = seen_from(platform, httpx2.Request(method, f"{BASE}/{platform}{path}", **kwargs))
    assert seen is not None
    return check(seen)


@pytest.mark.parametrize(("platform", "method", "path", "kwargs"), [
    ("youtube", "POST", "/upload/youtube/v3/videos", {"params": {"uploadType": "resumable", "part": "snippet,status"},
                                                       "json": {"snippet": {"title": "t"}, "status": {"privacyStatus": "private"}}}),
    ("x", "POST", "/2/media/upload/initialize", {"json": {"media_type": "video/mp4", "total_bytes": 10,
                                                          "media_category": "tweet_video"}}),
    ("x", "GET", "/2/users/12/tweets", {"params": {"max_results": "20", "tweet.fields": "created_at"}}),
    ("telegram", "POST", "/bot1:AAA/sendMediaGroup", {"json": {"chat_id": "@c", "media": [
        {"type": "photo", "media": "https://e.com/a.jpg", "caption": "c"}, {"type": "video", "media": "https://e.com/b.mp4"}]}}),
    ("facebook", "POST", "/v23.0/1/feed", {"json": {"message": "m", "attached_media": [{"media_fbid": "2"}]}}),
    ("instagram", "POST", "/v23.0/1/media", {"json": {"image_url": "https://e.com/a.jpg", "caption": "c"}}),
])
def test_requests_the_descriptions_have_pass(platform, method, path, kwargs):
    assert _problems(platform, method, path, **kwargs) == []


@pytest.mark.parametrize(("platform", "method", "path", "kwargs", "named"), [
    ("youtube", "POST", "/upload/youtube/v3/videos", {"params": {"uploadType": "resumable", "part": "snippet,statuz"}}, "statuz"),
    ("youtube", "POST", "/youtube/v3/comments", {"params": {"part": "snippet"},
                                                  "json": {"snippet": {"parentId": "p", "text": "x"}}}, "text"),
    ("youtube", "GET", "/youtube/v3/channelz", {"params": {"part": "snippet"}}, "no such method"),
    ("x", "POST", "/2/media/upload", {"data": {"command": "INIT", "media_type": "video/mp4", "total_bytes": "10"}}, "x-www-form-urlencoded"),
    ("x", "POST", "/2/tweets", {"json": {"text": "t", "reply_settings": "everyone"}}, "reply_settings"),
    ("x", "GET", "/2/users/me", {"params": {"user.fields": "public_metricz"}}, "user.fields"),
    ("telegram", "POST", "/bot1:AAA/sendMessage", {"json": {"chat_id": 1, "text": "t", "disable_web_preview": True}},
     "disable_web_preview"),
    ("telegram", "POST", "/bot1:AAA/sendMessage", {"json": {"chat_id": 1}}, "text"),
    ("telegram", "POST", "/bot1:AAA/sendAlbum", {"json": {"chat_id": 1}}, "no such Bot API method"),
    ("facebook", "POST", "/v23.0/1/feed", {"json": {"mesage": "m"}}, "mesage"),
    ("instagram", "POST", "/v23.0/1/media", {"json": {"image_url": "https://e.com/a.jpg", "captoin": "c"}}, "captoin"),
    ("whatsapp", "GET", "/v23.0/1/message_templates", {"params": {"limt": "10"}}, "limt"),
    ("meta_ads", "POST", "/v23.0/act_1/adcreatives", {"json": {"nme": "x"}}, "nme"),
])
def test_requests_the_descriptions_refuse_fail(platform, method, path, kwargs, named):
    problems = _problems(platform, method, path, **kwargs)
    assert problems and named in json.dumps(problems), problems
