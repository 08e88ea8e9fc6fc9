"""A request never goes out on a kept-alive connection that its server is closing as idle.

A server closes a connection that sat idle for its own time (2 s by default in gunicorn, 5 s in
uvicorn, Node and Apache); a request sent on it at that moment crosses the close on the wire and
gets no answer. For a platform call no answer is `Indeterminate`: the message or the post becomes
`unknown` and is never sent again, though the platform never read it (the sandbox, served by
uvicorn, answered 4 of 40 DMs sent after about 5 s of idleness that way). A webhook delivery waits
for its retry.

The server here closes a connection, as such a server does, when a request comes on it after its
idle time, read by a clock of the test's that the client's connection pool reads too: a spell of
idleness takes no time and the crossing happens every time.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import BinaryIO

import httpx2
import pytest
from httpcore2._sync import http11

from kit import net
from platforms.http import PlatformHTTP, build_client, generic_failure

ANSWER = b'{"ok":true}'


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class IdleClosingServer:
    """HTTP/1.1 on a loopback port; a connection idle `idle_seconds` (by `clock`) is closed unanswered
    when its next request comes."""

    def __init__(self, idle_seconds: float, clock: Callable[[], float]) -> None:
        self.idle_seconds, self.clock = idle_seconds, clock
        self.connections = 0
        self.closed_unanswered = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}/send"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self._listener.accept()
            except OSError:  # closed at the end of the test
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        answered_at: float | None = None
        with connection, connection.makefile("rb") as reader:
            while (head := self._head(reader)) is not None:
                reader.read(int(head.get("content-length", "0")))
                if answered_at is not None and self.clock() - answered_at >= self.idle_seconds:
                    self.closed_unanswered += 1
                    return  # its idle time is over: the connection closes, the request unread
                answered_at = self.clock()  # before the answer: the test moves the clock once it has it
                connection.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                                   b"content-length: %d\r\n\r\n%s" % (len(ANSWER), ANSWER))

    @staticmethod
    def _head(reader: BinaryIO) -> dict[str, str] | None:
        """A request's header fields (None: the client closed the connection)."""
        lines = []
        while (line := reader.readline()) not in (b"\r\n", b"\n"):
            if not line:
                return None
            lines.append(line.decode("latin-1"))
        fields = (line.partition(":") for line in lines[1:])
        return {name.strip().lower(): value.strip() for name, _, value in fields}

    def close(self) -> None:
        self._listener.close()


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """The test's clock, which the client's connections read for their idle time too."""
    clock = Clock()
    monkeypatch.setattr(http11, "time", SimpleNamespace(monotonic=clock))
    return clock


def _platform_call(url: str) -> tuple[Callable[[], bytes], httpx2.Client]:
    client = build_client()
    door = PlatformHTTP(client, platform="test")
    return lambda: door.request("POST", url, classify=generic_failure, json={"text": "hello"}).content, client


def _webhook_attempt(url: str) -> tuple[Callable[[], bytes], httpx2.Client]:
    client = httpx2.Client(transport=net.guarded_transport(allow_private=True))
    return lambda: client.post(url, content=b'{"type": "message.sent"}').content, client


DOORS = {"a platform call": _platform_call, "a webhook attempt": _webhook_attempt}
# Servers' default idle times: gunicorn's; uvicorn's, Node's and Apache's.
IDLE_TIMES = {"idle 2 s": 2.0, "idle 5 s": 5.0}


@pytest.fixture
def server(request: pytest.FixtureRequest, clock: Clock) -> Iterator[IdleClosingServer]:
    served = IdleClosingServer(request.param, clock)
    yield served
    served.close()


@pytest.fixture(params=DOORS.values(), ids=DOORS.keys())
def send(request: pytest.FixtureRequest, server: IdleClosingServer) -> Iterator[Callable[[], bytes]]:
    """One request through the door to the server, on the door's kept-alive connection when it has one."""
    sending, client = request.param(server.url)
    yield sending
    client.close()


@pytest.mark.parametrize("server", IDLE_TIMES.values(), ids=IDLE_TIMES.keys(), indirect=True)
def test_a_request_after_the_servers_idle_time_is_answered(server, clock, send):
    assert send() == ANSWER
    clock.now += server.idle_seconds  # idle as long as the server keeps it: its close and the request cross
    assert send() == ANSWER  # not Indeterminate: a message would have been `unknown`, never sent again
    assert server.closed_unanswered == 0


@pytest.mark.parametrize("server", [5.0], indirect=True)
def test_a_sender_busier_than_the_idle_time_keeps_its_connection(server, clock, send):
    for _ in range(3):
        assert send() == ANSWER
        clock.now += 0.5
    assert server.connections == 1
