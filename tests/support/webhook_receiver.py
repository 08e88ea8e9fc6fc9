"""A real HTTPS webhook receiver on loopback, with certificates from a throwaway CA (trustme).

Each request is recorded (arrival time, path, headers, raw body); what it answers is decided by a
`behaviour(n, path)` function of the request's number (1-based) and path, returning an `Answer`.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import trustme
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tests.support.live_server import live_server


@dataclass(frozen=True)
class Tls:
    ca_path: str  # what SWITCHBOARD_WEBHOOK_CA_BUNDLE points at
    cert_path: str  # server key and certificate chain, one PEM file
    hostnames: tuple[str, ...]


def make_tls(directory: Path, *hostnames: str) -> Tls:
    ca = trustme.CA()
    names = hostnames or ("localhost", "127.0.0.1")
    cert = ca.issue_cert(*names)
    ca_path = directory / "ca.pem"
    cert_path = directory / "server.pem"
    ca.cert_pem.write_to_path(str(ca_path))
    cert.private_key_and_cert_chain_pem.write_to_path(str(cert_path))
    return Tls(str(ca_path), str(cert_path), tuple(names))


@dataclass(frozen=True)
class Answer:
    status: int = 200
    hang_seconds: float = 0.0  # wait this long before answering
    until: threading.Event | None = None  # or wait until this is set (at most 60 s)
    location: str | None = None  # a redirect target


@dataclass
class Hit:
    at: float  # time.monotonic() on arrival
    path: str
    headers: dict[str, str]
    body: bytes


Behaviour = Callable[[int, str], Answer]


def always(status: int = 200) -> Behaviour:
    return lambda n, path: Answer(status)


@dataclass
class Receiver:
    url: str  # https://localhost:<port>
    behaviour: Behaviour
    hits: list[Hit] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    arrived: threading.Event = field(default_factory=threading.Event)

    def snapshot(self) -> list[Hit]:
        with self.lock:
            return list(self.hits)


def _app(receiver: Receiver) -> Starlette:
    async def handle(request: Request) -> Response:
        body = await request.body()
        with receiver.lock:
            receiver.hits.append(Hit(time.monotonic(), request.url.path, dict(request.headers), body))
            n = len(receiver.hits)
        receiver.arrived.set()
        answer = receiver.behaviour(n, request.url.path)
        if answer.hang_seconds:
            await asyncio.sleep(answer.hang_seconds)
        if answer.until is not None:
            deadline = time.monotonic() + 60
            while not answer.until.is_set() and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
        headers = {"location": answer.location} if answer.location else None
        return Response(b"ok", status_code=answer.status, headers=headers)

    return Starlette(routes=[Route("/{path:path}", handle, methods=["GET", "POST"])])


@contextlib.contextmanager
def running_receiver(tls: Tls, behaviour: Behaviour | None = None, host: str = "localhost") -> Iterator[Receiver]:
    receiver = Receiver(url="", behaviour=behaviour or always(200))
    # The service keeps its connection to the receiver alive, and uvicorn waits out the graceful
    # timeout for it on stopping: short, so a test does not wait a second for an idle connection.
    with live_server(_app(receiver), ssl_certfile=tls.cert_path, timeout_graceful_shutdown=0.2,
                     timeout_keep_alive=30) as base:
        receiver.url = base.replace("http://127.0.0.1", f"https://{host}")
        yield receiver


def wait_for(condition: Callable[[], object], *, timeout: float = 30, interval: float = 0.05) -> object:
    """Poll until `condition()` is truthy and return its value; fail the test at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(interval)
