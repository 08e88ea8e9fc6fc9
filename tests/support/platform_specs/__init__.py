"""Each request an adapter sends, checked against the platform's own published description.

`check(platform, request)` answers the problems found (an endpoint the description does not have,
an unknown parameter, a missing required one, a value of the wrong type), or nothing. The
descriptions come from maintained packages that carry the platforms' machine-readable documents,
installed as test dependencies only (pyproject's `test` extra):

- YouTube: the Data API v3 discovery document shipped in `google-api-python-client` (`youtube.py`);
- X: the API v2 OpenAPI document as generated into `xdk`'s clients and models (`x.py`);
- Telegram: the Bot API's methods and types as `aiogram`'s pydantic models (`telegram.py`);
- Graph (Facebook, Instagram, WhatsApp, Meta Ads): the per-endpoint parameters of
  `facebook-business`'s generated objects (`graph.py`).

TikTok and LinkedIn have no such package: their rules are the emulator's, written from the
documentation pages that `platforms/README.md` cites. Each description is loaded once per process.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx2


@dataclass(frozen=True)
class Seen:
    """One adapter request, decoded: its path under the platform's base, query and body."""

    platform: str
    method: str
    path: str
    query: dict[str, str]
    content_type: str
    body: bytes
    url: str

    def form(self) -> dict[str, Any]:
        if "x-www-form-urlencoded" in self.content_type:
            return dict(parse_qsl(self.body.decode(), keep_blank_values=True))
        if "multipart/form-data" in self.content_type:
            return multipart_fields(self)
        return {}


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
    return Seen(platform, request.method, path, dict(parse_qsl(parts.query, keep_blank_values=True)),
                request.headers.get("content-type", ""), body, url)


def check(seen: Seen) -> list[str]:
    from tests.support.platform_specs import graph, telegram, x, youtube

    checkers = {
        "youtube": youtube.check,
        "x": x.check,
        "telegram": telegram.check,
        "facebook": graph.check,
        "instagram": graph.check,
        "whatsapp": graph.check,
        "meta_ads": graph.check,
    }
    checker = checkers.get(seen.platform)
    return checker(seen) if checker else []


@contextlib.contextmanager
def recording() -> Iterator[list[Seen]]:
    """Collect each adapter request sent meanwhile (from any thread) through the observer hook of
    `platforms.http`."""
    from platforms import http

    seen: list[Seen] = []

    def observe(platform: str, request: httpx2.Request) -> None:
        try:
            found = seen_from(platform, request)
        except Exception as error:  # never let the check break the request itself
            found = Seen(platform, request.method, f"<unreadable: {type(error).__name__}>", {}, "", b"", "")
        if found is not None:
            seen.append(found)

    http.request_observers.append(observe)
    try:
        yield seen
    finally:
        http.request_observers.remove(observe)


def problems(seen: list[Seen]) -> list[str]:
    found: list[str] = []
    for each in list(seen):
        for problem in check(each):
            line = f"{each.platform} {each.method} {each.path}: {problem}"
            if line not in found:
                found.append(line)
    return found
