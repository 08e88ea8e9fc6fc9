"""Each request an adapter sends, and the answer it got, checked against the platform's own published
description.

`check(seen)` answers the problems found (an endpoint the description does not have, an unknown or
missing parameter or body field, a value of the wrong type, outside its bounds, pattern or enum, a
count or combination the description forbids, a missing or wrong header, an answer not of the
operation's response schema), or nothing. The descriptions are test data or test dependencies:

- X: the API v2 OpenAPI document itself, kept in `published/x/` (`x.py`);
- YouTube: the Data API v3 discovery document shipped in `google-api-python-client`, plus the rules
  its reference states per method (`youtube.py`);
- Telegram: the Bot API's methods and types as `aiogram`'s models, plus the limits its reference
  states (`telegram.py`);
- WhatsApp: Meta's Business Messaging API OpenAPI document, kept in `published/whatsapp/` (`whatsapp.py`);
- Graph (Facebook, Instagram, Meta Ads): `facebook-business`'s per-endpoint parameters and node
  fields (`graph.py`);
- TikTok and LinkedIn: JSON Schemas written field by field from their reference pages, each field
  citing its page (`tiktok.py`, `linkedin.py`).

Each description is loaded, and each validator compiled, once per process. Problems of requests the
adapters are known to get wrong today are listed, each with its issue, in `known_defects.py`.
"""

from __future__ import annotations

import contextlib
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx2


@dataclass(frozen=True)
class Answer:
    """What the platform (in the tests, its emulator) answered a request."""

    status: int
    content_type: str
    body: bytes


@dataclass(frozen=True)
class Seen:
    """One adapter request, decoded: its path under the platform's base, query, body and headers
    (names in lower case), and the answer it got when recorded from a real exchange."""

    platform: str
    method: str
    path: str
    query: dict[str, str]
    content_type: str
    body: bytes
    url: str
    headers: dict[str, str] = field(default_factory=dict)
    answer: Answer | None = None

    def form(self) -> dict[str, Any]:
        if "x-www-form-urlencoded" in self.content_type:
            return dict(parse_qsl(self.body.decode(), keep_blank_values=True))
        if "multipart/form-data" in self.content_type:
            return multipart_fields(self)
        return {}

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


def multipart_fields(seen: Seen) -> dict[str, Any]:
    """Field name → text value, or `FILE` for a part that carries a file name."""
    boundary = seen.content_type.split("boundary=", 1)[1].strip().strip('"').encode()
    fields: dict[str, Any] = {}
    for part in seen.body.split(b"--" + boundary):
        head, _, value = part.partition(b"\r\n\r\n")
        if b"content-disposition" not in head.lower():
            continue
        disposition = next(line for line in head.split(b"\r\n") if line.lower().startswith(b"content-disposition"))
        name = disposition.split(b'name="', 1)[1].split(b'"', 1)[0].decode()
        fields[name] = FILE if b"filename=" in disposition else value.removesuffix(b"\r\n").decode(errors="replace")
    return fields


FILE = object()


def seen_from(platform: str, request: httpx2.Request) -> Seen | None:
    """The request relative to its platform's base: in the sandbox `/sandbox/{platform}`, else the
    platform's own host. None for a request the checks do not concern (a media file read)."""
    url = str(request.url)
    parts = urlsplit(url)
    path = parts.path
    marker = f"/sandbox/{platform}"
    if marker in path:
        path = path.split(marker, 1)[1] or "/"
    body = request.read()  # a multipart stream becomes bytes, which the send then uses
    headers = {key.lower(): value for key, value in request.headers.multi_items()}
    return Seen(platform, request.method, path, dict(parse_qsl(parts.query, keep_blank_values=True)),
                request.headers.get("content-type", ""), body, url, headers)


def _checkers() -> dict[str, Callable[[Seen], list[str]]]:
    from tests.support.platform_specs import graph, linkedin, telegram, tiktok, whatsapp, x, youtube

    return {
        "youtube": youtube.check,
        "x": x.check,
        "telegram": telegram.check,
        "facebook": graph.check,
        "instagram": graph.check,
        "meta_ads": graph.check,
        "whatsapp": whatsapp.check,
        "tiktok": tiktok.check,
        "linkedin": linkedin.check,
    }


def check(seen: Seen) -> list[str]:
    """The problems of one request (and of its answer, when it has one), per the platform's description."""
    checker = _checkers().get(seen.platform)
    return checker(seen) if checker else []  # not one of the nine (the HTTP layer's own tests)


# Requests the check saw in this process, by platform: the session's summary (`tally.py`) adds them up.
SEEN_BY_PLATFORM: Counter[str] = Counter()
_local = threading.local()


def _answer_of(response: httpx2.Response) -> Answer | None:
    try:
        body = response.content
    except httpx2.ResponseNotRead:  # a streamed download: its bytes are a file, not an answer to check
        return None
    return Answer(response.status_code, response.headers.get("content-type", ""), body)


@contextlib.contextmanager
def recording() -> Iterator[list[Seen]]:
    """Collect each adapter request sent meanwhile (from any thread) through the observer hook of
    `platforms.http`, each with the answer it got (read where `PlatformHTTP.request` returns it or
    hands it to the adapter's classifier of failures)."""
    from platforms import http

    seen: list[Seen] = []
    lock = threading.Lock()

    def observe(platform: str, request: httpx2.Request) -> None:
        try:
            found = seen_from(platform, request)
        except Exception as error:  # never let the check break the request itself
            found = Seen(platform, request.method, f"<unreadable: {type(error).__name__}>", {}, "", b"", "")
        if found is not None:
            with lock:
                seen.append(found)
                _local.index = (seen, len(seen) - 1)

    def attach(response: httpx2.Response) -> None:
        where = getattr(_local, "index", None)
        _local.index = None
        if where is None or where[0] is not seen:
            return
        answer = _answer_of(response)
        if answer is not None:
            with lock:
                seen[where[1]] = replace(seen[where[1]], answer=answer)

    original = http.PlatformHTTP.request

    def request(self: Any, method: str, url: str, *, classify: Any, **kwargs: Any) -> httpx2.Response:
        _local.index = None

        def classify_seen(response: httpx2.Response, secrets: list[str]) -> Any:
            attach(response)
            return classify(response, secrets)

        response = original(self, method, url, classify=classify_seen, **kwargs)
        attach(response)
        return response

    http.request_observers.append(observe)
    http.PlatformHTTP.request = request  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        http.PlatformHTTP.request = original  # type: ignore[method-assign]
        http.request_observers.remove(observe)


def problems(seen: list[Seen]) -> list[str]:
    """Every problem of the requests recorded, once each, but those `known_defects` lists."""
    from tests.support.platform_specs.known_defects import known

    found: list[str] = []
    checked = _checkers()
    for each in list(seen):
        if each.platform in checked:
            SEEN_BY_PLATFORM[each.platform] += 1
        for problem in check(each):
            line = f"{each.platform} {each.method} {each.path}: {problem}"
            if line not in found and known(each.platform, line) is None:
                found.append(line)
    return found
