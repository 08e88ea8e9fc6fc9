"""The check of adapter requests against the platforms' published descriptions
(`tests/support/platform_specs`) refuses plausible wrong requests (wrong values, missing required
fields, counts out of range, bad headers, not only misspelt names) and passes the adapters' own.

The good ones are the adapters' real requests, with the emulator's answers, recorded from a run of
the suite (`SWITCHBOARD_SPEC_RECORD`; `recorded/adapter_requests.jsonl`, one a shape, secrets replaced);
each wrong one is a good one changed the way a mistake would change it."""

from __future__ import annotations

import base64
import copy
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from tests.support.platform_specs import Answer, Seen, check
from tests.support.platform_specs.known_defects import DEFECTS, known

PLATFORMS = ("youtube", "x", "telegram", "instagram", "facebook", "meta_ads", "whatsapp", "tiktok", "linkedin")
RECORDED = [json.loads(line) for line in (Path(__file__).parent / "recorded" / "adapter_requests.jsonl").read_text().splitlines()]


def seen_of(record: dict[str, Any]) -> Seen:
    body = base64.b64decode(record["body_base64"]) if "body_base64" in record else record.get("body", "").encode()
    answer = record.get("answer")
    return Seen(record["platform"], record["method"], record["path"], dict(record["query"]), record["content_type"],
                body, "", dict(record["headers"]),
                None if answer is None else Answer(answer["status"], answer["content_type"], answer["body"].encode()))


def _id(record: dict[str, Any]) -> str:
    return f"{record['platform']}-{record['method']}-{record['path'][:48]}-{sorted(record['query'])}"


GOOD = [r for r in RECORDED if not r.get("known_defect")]
DEFECTIVE = [r for r in RECORDED if r.get("known_defect")]


@pytest.mark.parametrize("record", GOOD, ids=[_id(r) for r in GOOD])
def test_the_adapters_own_requests_pass(record):
    assert check(seen_of(record)) == []


def test_every_known_defect_is_still_found():
    """Each entry of `known_defects` matches a problem of a recorded request: a fixed defect's
    entry (and its recording) goes, rather than passing a new mistake of the same shape."""
    found = [f"{r['platform']} {r['method']} {r['path']}: {p}" for r in DEFECTIVE for p in check(seen_of(r))]
    assert bool(found) == bool(DEFECTS), "a recorded defective request for each listed defect, and none else"
    assert all(any(defect.problem.search(line) for line in found) for defect in DEFECTS), [
        defect.item for defect in DEFECTS if not any(defect.problem.search(line) for line in found)]
    assert all(known(line.split(" ", 1)[0], line) for line in found), found


# -- the wrong ones ---------------------------------------------------------------------------------
def _first(platform: str, method: str, path_part: str, query_key: str | None = None) -> dict[str, Any]:
    return next(r for r in GOOD if r["platform"] == platform and r["method"] == method and path_part in r["path"]
                and (query_key is None or query_key in r["query"]))


def _json(record: dict[str, Any]) -> Any:
    return json.loads(record["body"])


def changed(platform: str, method: str, path_part: str, change: Callable[[dict[str, Any]], None],
            query_key: str | None = None) -> Callable[[], Seen]:
    """A recorded good request of that shape, changed by `change` (which edits a copy in place:
    its `query`, `headers`, `path`, or `json` for the parsed JSON body)."""

    def build() -> Seen:
        record = copy.deepcopy(_first(platform, method, path_part, query_key))
        if record.get("body", "")[:1] in ("{", "["):
            record["json"] = _json(record)
        change(record)
        if "json" in record:
            record["body"] = json.dumps(record.pop("json"))
        return seen_of(record)

    return build


def made(platform: str, method: str, path: str, *, query: dict[str, str] | None = None, body: Any = None,
         headers: dict[str, str] | None = None, form: dict[str, str] | None = None) -> Callable[[], Seen]:
    """A request written out whole (for a method the recordings do not hold)."""

    def build() -> Seen:
        content_type, raw = "", b""
        if body is not None:
            content_type, raw = "application/json", json.dumps(body).encode()
        if form is not None:
            content_type, raw = "application/x-www-form-urlencoded", urlencode(form).encode()
        return Seen(platform, method, path, query or {}, content_type, raw, "",
                    {"content-type": content_type, **{k.lower(): v for k, v in (headers or {}).items()}})

    return build


def _set(where: str, key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(record: dict[str, Any]) -> None:
        record[where][key] = value
    return change


def _drop(where: str, key: str) -> Callable[[dict[str, Any]], None]:
    def change(record: dict[str, Any]) -> None:
        record[where].pop(key)
    return change


def _edit(function: Callable[[dict[str, Any]], Any]) -> Callable[[dict[str, Any]], None]:
    return function  # type: ignore[return-value]


BEARER = {"Authorization": "Bearer ya29.sandboxtoken"}
BOT = "/bot123456:AAsandboxsandboxsandboxsandboxsandbox"
PHOTO = {"type": "photo", "media": "https://cdn.example.com/a.jpg"}
WA = "/v23.0/100000000000040/messages"
WA_BASE = {"messaging_product": "whatsapp", "recipient_type": "individual", "to": "15550001234"}
WA_AUTH = {"Authorization": "Bearer EAAWsandboxtoken"}
LI_HEADERS = {"Authorization": "Bearer AQVsandboxtoken", "LinkedIn-Version": "202610",
              "X-Restli-Protocol-Version": "2.0.0"}

# (platform, what is wrong, the request, a fragment the refusal names)
WRONG: list[tuple[str, str, Callable[[], Seen], str]] = [
    # YouTube
    ("youtube", "channels.list part=snippet,statisticz",
     changed("youtube", "GET", "/channels", _set("query", "part", "snippet,statisticz")), "statisticz"),
    ("youtube", "commentThreads.list maxResults=500",
     changed("youtube", "GET", "/commentThreads", _set("query", "maxResults", "500")), "maximum of 100"),
    ("youtube", "commentThreads.list with three filters",
     changed("youtube", "GET", "/commentThreads", _edit(lambda r: r["query"].update(videoId="v1", channelId="UC1"))),
     "exactly one filter"),
    ("youtube", "comments.insert without textOriginal",
     changed("youtube", "POST", "/youtube/v3/comments", _edit(lambda r: r["json"]["snippet"].pop("textOriginal"))),
     "snippet.textOriginal is required"),
    ("youtube", "comments.insert without parentId",
     changed("youtube", "POST", "/youtube/v3/comments", _edit(lambda r: r["json"]["snippet"].pop("parentId"))),
     "snippet.parentId is required"),
    ("youtube", "the reply text as the read-only textDisplay",
     changed("youtube", "POST", "/youtube/v3/comments",
             _edit(lambda r: r["json"]["snippet"].update(textDisplay=r["json"]["snippet"].pop("textOriginal")))),
     "textDisplay is read-only"),
    ("youtube", "videos.insert without a title",
     changed("youtube", "POST", "/upload/youtube/v3/videos", _edit(lambda r: r["json"]["snippet"].pop("title")),
             query_key="uploadType"), "snippet.title is required"),
    ("youtube", "videos.insert with a title over 100 characters",
     changed("youtube", "POST", "/upload/youtube/v3/videos", _edit(lambda r: r["json"]["snippet"].update(title="t" * 101)),
             query_key="uploadType"), "longer than 100"),
    ("youtube", "no Bearer token",
     changed("youtube", "GET", "/channels", _drop("headers", "authorization")), "Authorization"),
    # X
    ("x", "dm_events max_results=500",
     made("x", "GET", "/2/dm_events", query={"max_results": "500"}, headers=BEARER), "maximum of 100"),
    ("x", "users/{id}/tweets max_results=200",
     made("x", "GET", "/2/users/1500000000000000006/tweets", query={"max_results": "200"}, headers=BEARER),
     "maximum of 100"),
    ("x", "a DM body of {}",
     made("x", "POST", "/2/dm_conversations/with/1500000000000000007/messages", body={}, headers=BEARER), "text"),
    ("x", "a DM to @bob rather than a numeric id",
     made("x", "POST", "/2/dm_conversations/with/@bob/messages", body={"text": "hi"}, headers=BEARER),
     "participant_id"),
    ("x", "total_bytes as text",
     made("x", "POST", "/2/media/upload/initialize",
          body={"media_type": "video/mp4", "total_bytes": "123", "media_category": "tweet_video"}, headers=BEARER),
     "not of type 'integer'"),
    ("x", "a post without Authorization",
     changed("x", "POST", "/2/tweets", _drop("headers", "authorization")), "Authorization"),
    ("x", "a reply whose in_reply_to_tweet_id is not an id",
     made("x", "POST", "/2/tweets", body={"text": "t", "reply": {"in_reply_to_tweet_id": "abc"}}, headers=BEARER),
     "in_reply_to_tweet_id"),
    # Telegram
    ("telegram", "an album of 11",
     made("telegram", "POST", f"{BOT}/sendMediaGroup", body={"chat_id": 1, "media": [PHOTO] * 11}), "2-10 items"),
    ("telegram", "an album of a photo and a document",
     made("telegram", "POST", f"{BOT}/sendMediaGroup", body={"chat_id": 1, "media": [
         PHOTO, {"type": "document", "media": "https://cdn.example.com/a.pdf"}]}), "their own type"),
    ("telegram", "a button with both url and callback_data",
     changed("telegram", "POST", "/sendMessage", _edit(lambda r: r["json"].update(reply_markup={"inline_keyboard": [[
         {"text": "Open", "url": "https://example.com", "callback_data": "x"}]]}))), "exactly one of the optional"),
    ("telegram", "a 5,000-character message",
     changed("telegram", "POST", "/sendMessage", _edit(lambda r: r["json"].update(text="x" * 5000))), "1-4096"),
    ("telegram", "a 2,000-character caption",
     made("telegram", "POST", f"{BOT}/sendPhoto",
          body={"chat_id": 1, "photo": "https://cdn.example.com/a.jpg", "caption": "x" * 2000}), "0-1024"),
    ("telegram", "parse_mode=markdown2",
     changed("telegram", "POST", "/sendMessage", _edit(lambda r: r["json"].update(parse_mode="markdown2"))),
     "parse_mode"),
    ("telegram", "MarkdownV2 with an unescaped reserved character",
     changed("telegram", "POST", "/sendMessage", _edit(lambda r: r["json"].update(
         parse_mode="MarkdownV2", text="Price: 5.00!"))), "not escaped"),
    ("telegram", "chat_id as a JSON object",
     changed("telegram", "POST", "/sendMessage", _edit(lambda r: r["json"].update(chat_id={"id": 1}))), "chat_id"),
    # Instagram
    ("instagram", "media_type=VIDEO (retired for REELS)",
     made("instagram", "POST", "/v23.0/17841400000000042/media",
          body={"video_url": "https://cdn.example.com/a.mp4", "media_type": "VIDEO", "caption": "c"},
          headers={"Authorization": "Bearer IGAAsandboxtoken"}), "REELS"),
    ("instagram", "media_type=reels (case)",
     made("instagram", "POST", "/v23.0/17841400000000042/media",
          body={"video_url": "https://cdn.example.com/a.mp4", "media_type": "reels"},
          headers={"Authorization": "Bearer IGAAsandboxtoken"}), "media_type"),
    ("instagram", "media_publish without creation_id",
     changed("instagram", "POST", "/media_publish", _edit(lambda r: r["json"].pop("creation_id"))), "creation_id"),
    ("instagram", "a path of three segments",
     changed("instagram", "GET", "/media", _edit(lambda r: r.update(path=r["path"] + "/extra"))), "/{id}/{edge}"),
    ("instagram", "a read of a field no Instagram node has",
     changed("instagram", "GET", "/media", _set("query", "fields", "id,permalink_urll")), "permalink_urll"),
    # Facebook
    ("facebook", "fields=permalink (Facebook's is permalink_url)",
     made("facebook", "GET", "/v23.0/100000000000044_14000000000001043", query={"fields": "permalink"},
          headers={"Authorization": "Bearer EAAsandboxtoken"}), "permalink"),
    ("facebook", "a feed post with none of message, link, attached_media",
     changed("facebook", "POST", "/feed", _edit(lambda r: r.update(json={"published": True}))), "one of"),
    ("facebook", "subscribed_fields with a value of the wrong case",
     changed("facebook", "POST", "/subscribed_apps", _set("query", "subscribed_fields", "messages,Feed")), "Feed"),
    ("facebook", "a call without a token",
     changed("facebook", "POST", "/photos", _drop("headers", "authorization")), "no access token"),
    # Meta Ads
    ("meta_ads", "link_data.image_url (the field is picture)",
     changed("meta_ads", "POST", "/adcreatives", _edit(lambda r: r["json"]["object_story_spec"]["link_data"].update(
         image_url="https://cdn.example.com/a.jpg"))), "image_url"),
    ("meta_ads", "object_story_spec as a list",
     changed("meta_ads", "POST", "/adcreatives", _edit(lambda r: r["json"].update(object_story_spec=["x"]))),
     "object_story_spec"),
    ("meta_ads", "an adcreative with no story",
     changed("meta_ads", "POST", "/adcreatives", _edit(lambda r: r["json"].pop("object_story_spec"))), "one of"),
    ("meta_ads", "a read of the ad accounts with an unknown field",
     changed("meta_ads", "GET", "/adaccounts", _set("query", "fields", "id,account_idd")), "account_idd"),
    # WhatsApp
    ("whatsapp", "a /messages body of {\"bogus\": 1}",
     made("whatsapp", "POST", WA, body={"bogus": 1}, headers=WA_AUTH), "required property"),
    ("whatsapp", "a template whose language is a bare string",
     made("whatsapp", "POST", WA, body={**WA_BASE, "type": "template",
                                        "template": {"name": "hello_world", "language": "en_US"}}, headers=WA_AUTH),
     "language"),
    ("whatsapp", "a text message with an unknown field",
     made("whatsapp", "POST", WA, body={**WA_BASE, "type": "text", "text": {"body": "hi"}, "txt": 1}, headers=WA_AUTH),
     "txt"),
    ("whatsapp", "a cta_url button label over 20 characters",
     made("whatsapp", "POST", WA, body={**WA_BASE, "type": "interactive", "interactive": {
         "type": "cta_url", "body": {"text": "x"}, "action": {"name": "cta_url", "parameters": {
             "display_text": "A label far too long to show", "url": "https://example.com"}}}}, headers=WA_AUTH),
     "too long"),
    ("whatsapp", "no Bearer token",
     made("whatsapp", "POST", WA, body={**WA_BASE, "type": "text", "text": {"body": "hi"}},
          headers={"Authorization": "OAuth EAAWsandboxtoken"}), "Authorization"),
    ("whatsapp", "phone numbers read with limit=abc",
     made("whatsapp", "GET", "/v23.0/200000000000040/phone_numbers", query={"limit": "abc"}, headers=WA_AUTH),
     "limit"),
    # TikTok
    ("tiktok", "privacy_level in the wrong case",
     changed("tiktok", "POST", "/video/init/", _edit(lambda r: r["json"]["post_info"].update(privacy_level="self_only"))),
     "privacy_level"),
    ("tiktok", "FILE_UPLOAD without its sizes",
     changed("tiktok", "POST", "/video/init/", _edit(lambda r: r["json"].update(source_info={"source": "FILE_UPLOAD"}))),
     "source_info"),
    ("tiktok", "a title over 2200 characters",
     changed("tiktok", "POST", "/video/init/", _edit(lambda r: r["json"]["post_info"].update(title="t" * 2201))),
     "title"),
    ("tiktok", "video.list max_count=50",
     changed("tiktok", "POST", "/v2/video/list/", _edit(lambda r: r["json"].update(max_count=50))), "maximum of 20"),
    ("tiktok", "a Login Kit call without the JSON content type",
     changed("tiktok", "POST", "/status/fetch/", _drop("headers", "content-type")), "content-type"),
    ("tiktok", "Business Messaging with a Login Kit token",
     made("tiktok", "POST", "/open_api/v1.3/business/message/send/", body={
         "business_id": "b", "recipient_type": "CONVERSATION", "recipient": "c", "message_type": "TEXT",
         "text": {"body": "hi"}}, headers={"Access-Token": "act.sandboxtoken"}), "access-token"),
    ("tiktok", "Business Messaging TEXT without its text",
     made("tiktok", "POST", "/open_api/v1.3/business/message/send/", body={
         "business_id": "b", "recipient_type": "CONVERSATION", "recipient": "c", "message_type": "TEXT"},
          headers={"Access-Token": "bizsandboxtoken"}), "not valid"),
    ("tiktok", "the business grant's code as Login Kit's `code`",
     changed("tiktok", "POST", "/tt_user/oauth2/token/", _edit(lambda r: r["json"].update(
         code=r["json"].pop("auth_code")))), "auth_code"),
    ("tiktok", "the business grant refreshed with grant_type authorization_code",
     changed("tiktok", "POST", "/tt_user/oauth2/refresh_token/", _edit(lambda r: r["json"].update(
         grant_type="authorization_code"))), "grant_type"),
    # LinkedIn
    ("linkedin", "a post without LinkedIn-Version",
     changed("linkedin", "POST", "/rest/posts", _drop("headers", "linkedin-version")), "linkedin-version"),
    ("linkedin", "a post with X-Restli-Protocol-Version 1.0.0",
     changed("linkedin", "POST", "/rest/posts", _set("headers", "x-restli-protocol-version", "1.0.0")),
     "x-restli-protocol-version"),
    ("linkedin", "visibility=public (case)",
     changed("linkedin", "POST", "/rest/posts", _edit(lambda r: r["json"].update(visibility="public"))), "visibility"),
    ("linkedin", "an author that is not a person or organization URN",
     changed("linkedin", "POST", "/rest/posts", _edit(lambda r: r["json"].update(author="bob"))), "author"),
    ("linkedin", "a multi-image post of one image",
     changed("linkedin", "POST", "/rest/posts", _edit(lambda r: r["json"].update(content={"multiImage": {"images": [
         {"id": "urn:li:image:1"}]}}))), "too short"),
    ("linkedin", "commentary over 3000 characters",
     changed("linkedin", "POST", "/rest/posts", _edit(lambda r: r["json"].update(commentary="c" * 3001))),
     "commentary"),
    ("linkedin", "userinfo without a token",
     made("linkedin", "GET", "/v2/userinfo"), "authorization"),
]


def answered(platform: str, method: str, path_part: str, change: Callable[[Any], None],
             query_key: str | None = None) -> Callable[[], Seen]:
    """A recorded good request whose recorded answer is changed by `change` (on its parsed JSON)."""

    def build() -> Seen:
        record = copy.deepcopy(next(
            r for r in GOOD if r["platform"] == platform and r["method"] == method and path_part in r["path"]
            and (query_key is None or query_key in r["query"]) and 200 <= (r.get("answer") or {}).get("status", 0) < 300 and r["answer"]["body"]))
        body = json.loads(record["answer"]["body"])
        change(body)
        record["answer"]["body"] = json.dumps(body)
        return seen_of(record)

    return build


# (platform, what is wrong in the emulator's answer, the exchange, a fragment the refusal names)
WRONG_ANSWERS: list[tuple[str, str, Callable[[], Seen], str]] = [
    ("youtube", "a channel's subscriberCount as a number (Google writes 64-bit counts as text)",
     answered("youtube", "GET", "/channels", lambda a: a["items"][0]["statistics"].update(subscriberCount=5)),
     "subscriberCount"),
    ("youtube", "a comment thread list with a property the resource lacks",
     answered("youtube", "GET", "/commentThreads", lambda a: a.update(threads=[])), "threads"),
    ("x", "a post's id as a number",
     answered("x", "POST", "/2/tweets", lambda a: a["data"].update(id=1)), "id"),
    ("telegram", "a sent message without its message_id",
     answered("telegram", "POST", "/sendMessage", lambda a: a["result"].pop("message_id")), "message_id"),
    ("telegram", "a refusal without error_code",
     answered("telegram", "POST", "/sendMessage", lambda a: a.clear() or a.update(ok=False, description="x")),
     "error_code"),
    ("whatsapp", "a phone number's display_phone_number as a number",
     lambda: replace(made("whatsapp", "GET", "/v23.0/200000000000040/phone_numbers", headers=WA_AUTH)(),
                     answer=Answer(200, "application/json", json.dumps({"data": [{
                         "id": "100000000000040", "display_phone_number": 15550140, "verified_name": "Co",
                         "quality_rating": "GREEN", "status": "CONNECTED"}]}).encode())),
     "display_phone_number"),
    ("instagram", "a read answering a field not asked for",
     answered("instagram", "GET", "/v23.0/me", lambda a: a.update(biography="b")), "biography"),
    ("tiktok", "a publish status TikTok does not have",
     answered("tiktok", "POST", "/status/fetch/", lambda a: a["data"].update(status="DONE")), "DONE"),
    ("linkedin", "an image upload's answer without its uploadUrl",
     answered("linkedin", "POST", "/rest/images", lambda a: a["value"].pop("uploadUrl")), "uploadUrl"),
]


@pytest.mark.parametrize(("platform", "wrong", "build", "named"), WRONG_ANSWERS,
                         ids=[f"{w[0]}: {w[1]}" for w in WRONG_ANSWERS])
def test_wrong_answers_of_the_emulator_are_refused(platform, wrong, build, named):
    problems = check(build())
    assert problems, f"{platform}: {wrong} passed"
    assert named.lower() in json.dumps(problems).lower(), problems


@pytest.mark.parametrize(("platform", "wrong", "build", "named"), WRONG, ids=[f"{w[0]}: {w[1]}" for w in WRONG])
def test_wrong_requests_are_refused(platform, wrong, build, named):
    problems = check(build())
    assert problems, f"{platform}: {wrong} passed"
    assert named.lower() in json.dumps(problems).lower(), problems


def test_every_platform_has_good_and_wrong_requests():
    wrong = Counter(platform for platform, *_ in WRONG)
    good = Counter(r["platform"] for r in GOOD)
    assert all(wrong[platform] >= 4 and good[platform] >= 1 for platform in PLATFORMS), (wrong, good)
