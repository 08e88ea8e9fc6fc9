"""`PlatformHTTP`'s direct path to the client's connection pool: what it sends and answers must be
what `client.build_request` + `client.send` would send and answer, and whatever that path skips
goes through the client."""

from __future__ import annotations

import asyncio
import gzip
import itertools
import json
import random
import threading
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from platforms import http
from platforms.base import Indeterminate, Rejected, RetryLater
from platforms.http import PlatformHTTP, build_client, generic_failure
from tests.support.live_server import live_server


async def _echo(request: Request) -> Response:
    body = await request.body()
    return JSONResponse({
        "method": request.method, "target": request.url.path + ("?" + request.url.query if request.url.query else ""),
        "headers": [[key.decode(), value.decode()] for key, value in request.headers.raw],
        "body": body.decode(),
    })


async def _gzipped(request: Request) -> Response:
    return Response(gzip.compress(b'{"ok": true, "packed": "yes"}'), media_type="application/json",
                    headers={"Content-Encoding": "gzip"})


async def _cookie(request: Request) -> Response:
    answer = JSONResponse({"sent": request.headers.get("cookie")})
    answer.set_cookie("session", "abc123")
    return answer


async def _slow(request: Request) -> Response:
    await asyncio.sleep(1.0)
    return JSONResponse({})


async def _peer(request: Request) -> Response:
    assert request.client is not None
    return JSONResponse({"port": request.client.port})


async def _refuse(request: Request) -> Response:
    return JSONResponse({"error": "no"}, status_code=400)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    app = Starlette(routes=[
        Route("/echo/{rest:path}", _echo, methods=["GET", "POST", "PUT", "DELETE"]),
        Route("/gzipped", _gzipped), Route("/cookie", _cookie), Route("/slow", _slow),
        Route("/refuse", _refuse, methods=["POST"]), Route("/peer", _peer),
    ])
    with live_server(app) as url:
        yield url


@pytest.fixture
def client() -> Iterator[httpx2.Client]:
    client = build_client()
    yield client
    client.close()


def _not_through_the_client(client: httpx2.Client, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the request went through the client")

    monkeypatch.setattr(client, "send", refuse)


CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("POST", "/echo/bot123456:AAsecret-_x/sendMessage", {"json": {"chat_id": 9, "text": "héllo ✓", "n": [1.5, None]}}),
    ("POST", "/echo/v19.0/me/messages?access_token=abc%2Fdef&x=1/2?3", {"json": {"a": "b"}}),
    ("POST", "/echo/upload", {"content": b"\x00\x01raw bytes"}),
    ("POST", "/echo/empty", {}),
    ("PUT", "/echo/empty", {"content": b""}),
    ("GET", "/echo/", {}),
    ("GET", "/echo/with?query=only", {}),
    ("DELETE", "/echo/thing", {"headers": {"Authorization": "Bearer tok", "X-Extra": "1"}}),
    ("post", "/echo/lower", {"json": [], "headers": {"Linkedin-Version": "202401"}}),
    ("GET", "/echo/youtube/v3/commentThreads", {"params": {"part": "snippet,replies", "maxResults": 50,
                                                           "pageToken": "a b/c+d=é&", "mine": True, "none": None}}),
    ("POST", "/echo/comments", {"params": {"part": "snippet"}, "json": {"a": 1}}),
    ("GET", "/echo/no-params", {"params": {}}),
]


@pytest.mark.parametrize(("method", "path", "kwargs"), CASES)
def test_the_direct_path_sends_what_the_client_would(server, client, monkeypatch, method, path, kwargs):
    url = server + path
    expected = client.build_request(method, url, **kwargs)
    through_client = client.send(expected).json()
    seen: list[httpx2.Request] = []
    monkeypatch.setattr(http, "request_observers", [lambda platform, request: seen.append(request)])
    _not_through_the_client(client, monkeypatch)
    response = PlatformHTTP(client, platform="test").request(method, url, classify=generic_failure, **kwargs)
    assert response.json() == through_client  # the server saw the same request line, headers and body
    assert response.status_code == 200 and response.headers["content-type"] == "application/json"
    (observed,) = seen  # the observers see the request as it is sent
    assert observed.method == expected.method and observed.url == expected.url
    assert observed.headers.raw == expected.headers.raw
    assert observed.read() == expected.read()


def test_the_direct_url_parts_are_httpx2s(client):
    plain, odd = "aZ09-._~!$&'()*+,;=:@/?%2fF", " #\"<>[]é\\^|{}`"
    chance = random.Random(35)
    direct = 0
    bases = ("http://127.0.0.1:8080", "https://api.telegram.org", "http://LOCALHOST:80", "https://h.io:443",
             "http://999.1.1.1", "http://user@h.io", "https://h.io/a/./b", "https://h.io/a/../b", "http://h.io")
    for alphabet, base in itertools.product((plain, plain + odd), bases):
        for _ in range(150):
            url = base + "/" * chance.randint(0, 1) + "".join(chance.choice(alphabet)
                                                              for _ in range(chance.randint(0, 12)))
            try:
                parsed = httpx2.URL(url)
            except httpx2.InvalidURL:
                parsed = None
            parts = http._direct_url(url)
            if parts is None:
                continue
            direct += 1
            assert parsed is not None, url
            scheme, host, port, target, netloc = parts
            assert (scheme, host, port, target, netloc) == (
                parsed.raw_scheme, parsed.raw_host, parsed.port, parsed.raw_path, parsed.netloc), url
    assert direct > 300


@pytest.mark.parametrize("url", [
    "http://h.io/a b", "http://h.io/a/./b", "http://h.io/%zz", "http://H.io/", "http://h.io/#frag",
    "http://u:p@h.io/", "http://999.1.1.1/", "http://h.io/é", "ftp://h.io/",
])
def test_a_url_httpx2_would_rewrite_goes_through_the_client(url):
    assert http._direct_url(url) is None


def test_what_the_direct_path_skips_goes_through_the_client(server, client):
    sent: list[httpx2.Request] = []
    original = client.send

    def counting(request: httpx2.Request, **kwargs: Any) -> httpx2.Response:
        sent.append(request)
        return original(request, **kwargs)

    client.send = counting  # type: ignore[method-assign]
    door = PlatformHTTP(client, platform="test")
    door.request("POST", server + "/echo/x", classify=generic_failure, json={})
    assert sent == []
    door.request("POST", server + "/echo/x", classify=generic_failure, data={"a": "b"})
    door.request("GET", server + "/echo/x?y=1", classify=generic_failure, params={"a": "b"})
    door.request("POST", server + "/echo/x", classify=generic_failure, json={}, headers={"content-type": "text/plain"})
    door.request("POST", server + "/echo/x", classify=generic_failure, json={}, auth=("u", "p"))
    door.request("GET", server + "/echo/a/./b", classify=generic_failure)
    assert len(sent) == 5


def test_a_compressed_answer_is_decoded(server, client):
    response = PlatformHTTP(client, platform="test").request("GET", server + "/gzipped", classify=generic_failure)
    assert response.json() == {"ok": True, "packed": "yes"}


def test_cookies_are_kept_and_sent_as_the_client_does(server, client):
    door = PlatformHTTP(client, platform="test")
    assert door.request("GET", server + "/cookie", classify=generic_failure).json() == {"sent": None}
    assert client.cookies.get("session") == "abc123"
    assert door.request("GET", server + "/cookie", classify=generic_failure).json() == {"sent": "session=abc123"}


def test_a_refusal_is_classified_with_its_request(server, client):
    seen: list[httpx2.Response] = []

    def classify(response: httpx2.Response, secrets: list[str]) -> Rejected:
        seen.append(response)
        return Rejected(f"refused {response.request.url} {json.dumps(response.json())} {secrets[0]}", "400")

    with pytest.raises(Rejected) as refused:
        PlatformHTTP(client, platform="test").request("POST", server + "/refuse", classify=classify,
                                                      secrets=["hush-hush"], json={})
    assert refused.value.message == f'refused {server}/refuse {{"error": "no"}} [REDACTED]'
    assert seen[0].status_code == 400


def test_transport_failures_map_as_through_the_client(server):
    quick = build_client(timeout=0.2)
    door = PlatformHTTP(quick, platform="test")
    with pytest.raises(Indeterminate):  # the request went out; no answer in time
        door.request("GET", server + "/slow", classify=generic_failure)
    with pytest.raises(RetryLater):  # nothing listens there: nothing was sent
        door.request("GET", "http://127.0.0.1:9/", classify=generic_failure)
    quick.close()
    with pytest.raises(RuntimeError):  # a closed client refuses, as `client.send` does
        door.request("GET", server + "/echo/x", classify=generic_failure)


def test_each_thread_sends_on_a_connection_of_its_own(server, client):
    # One pool shared by a worker's threads is a lock every request takes twice (see
    # `ThreadPoolsTransport`): each thread has its own, by both paths. The threads take turns here, so
    # that with one pool the second would be handed the first one's idle connection.
    platform = PlatformHTTP(client, platform="test")
    ports: dict[str, list[int]] = {}
    first_sent, second_done = threading.Event(), threading.Event()

    def send(name: str) -> None:
        direct = [platform.request("GET", server + "/peer", classify=generic_failure).json()["port"]
                  for _ in range(2)]
        ports[name] = [*direct, client.get(server + "/peer").json()["port"]]
        if name == "first":
            first_sent.set()
            second_done.wait(10)  # alive, its pool open, while the second sends

    first = threading.Thread(target=send, args=("first",))
    first.start()
    assert first_sent.wait(10)
    second = threading.Thread(target=send, args=("second",))
    second.start()
    second.join()
    second_done.set()
    first.join()
    assert len(set(ports["first"])) == 1 and len(set(ports["second"])) == 1  # kept alive, reused
    assert ports["first"][0] != ports["second"][0]
