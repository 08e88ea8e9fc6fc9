"""Peers that hold a request open: one that accepts connections and never says a word, and an
HTTPS server that sends its answer a byte at a time."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import AsyncIterator, Iterator

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

from tests.support.live_server import live_server
from tests.support.posts import JPEG
from tests.support.webhook_receiver import Tls


@contextlib.contextmanager
def silent_peer() -> Iterator[tuple[int, list[socket.socket]]]:
    """A TCP port that accepts connections and never says a word (no TLS handshake, no answer)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            with contextlib.suppress(TimeoutError, OSError):
                accepted.append(listener.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1], accepted
    finally:
        stop.set()
        thread.join(timeout=5)
        for connection in accepted:
            connection.close()
        listener.close()


@contextlib.contextmanager
def trickling_server(tls: Tls, *, seconds_per_byte: float) -> Iterator[str]:
    """An HTTPS server whose `/photo.jpg` is a JPEG sent one byte every `seconds_per_byte`: each read
    gets its byte in time, the whole answer takes minutes. Yields the base URL."""
    async def trickle() -> AsyncIterator[bytes]:
        for byte in JPEG:
            yield bytes([byte])
            await asyncio.sleep(seconds_per_byte)

    async def serve(request: Request) -> StreamingResponse:
        return StreamingResponse(trickle(), media_type="image/jpeg", headers={"content-length": str(len(JPEG))})

    with live_server(Starlette(routes=[Route("/photo.jpg", serve)]), ssl_certfile=tls.cert_path) as base:
        yield base.replace("http://127.0.0.1", "https://localhost")
