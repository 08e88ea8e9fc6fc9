"""Serve an ASGI app over real HTTP on a loopback port, in a background thread.

Tests talk to the service the way a user does: over a socket, through uvicorn.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import uvicorn

from kit import clock


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def live_server(app: Any, *, port: int | None = None, **config: Any) -> Iterator[str]:
    """Run `app` with uvicorn on 127.0.0.1 and yield its base URL; stop it on exit."""
    port = port or free_port()
    # The server keeps an idle connection longer than the tests' clients do (httpx2: 5 s, uvicorn's
    # default too): with equal times, a request sent on a connection the server was just closing
    # met a reset (seen once on a loaded machine, a client idle while a browser test clicked on).
    config.setdefault("timeout_keep_alive", 30)
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on", **config)
    )
    thread = threading.Thread(target=server.run, name=f"live-server-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)


def clock_to_fresh_minute() -> None:
    """For services in this process: move the service's clock to the start of the next minute, so a
    burst runs in one rate-limit window without waiting for it (`clock.advance`; reset after each test)."""
    clock.advance(60 - clock.epoch() % 60 + 0.05)


def start_of_fresh_minute(margin: float = 10.0) -> None:
    """Rate-limit windows are wall-clock minutes: don't start a short burst just before one ends."""
    into_minute = time.time() % 60
    if into_minute > 60 - margin:
        time.sleep(60 - into_minute + 0.05)
