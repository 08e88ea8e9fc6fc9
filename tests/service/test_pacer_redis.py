"""The Redis pace's reservation on a thread's own connection: the same slots as the script called
through the client, and the client's call when that connection or the script is gone."""

from __future__ import annotations

import threading
import uuid
from typing import Any

import pytest

from service.inbox.pacer import RedisPacer
from tests.conftest import QUEUE_URL

pytestmark = pytest.mark.skipif(not (QUEUE_URL or "").startswith("redis"), reason="the Redis pace needs Redis")


def _pacer() -> tuple[RedisPacer, list[Any]]:
    """A pacer, and the reservations that went through the client's script call."""
    assert QUEUE_URL is not None
    pacer = RedisPacer(QUEUE_URL)
    calls: list[Any] = []
    usual = pacer._reserve

    class Counted:
        @property
        def sha(self) -> str:
            return usual.sha

        def __call__(self, **kwargs: Any) -> Any:
            calls.append(kwargs)
            return usual(**kwargs)

    pacer._reserve = Counted()  # type: ignore[assignment]
    return pacer, calls


def test_slots_follow_the_pace_on_the_threads_own_connection():
    pacer, calls = _pacer()
    account = f"acc_{uuid.uuid4().hex}"
    first = pacer.reserve(account, 10.0, 1.0)
    second = pacer.reserve(account, 10.0, 1.0)  # 10 s on: further than this caller waits
    third = pacer.reserve(account, 10.0, 30.0)  # within 30 s: reserved, 10 s off
    assert first.granted and first.wait == 0.0
    assert not second.granted and 9.0 < second.wait <= 10.0
    assert third.granted and 9.0 < third.wait <= 10.0
    assert len(calls) <= 1  # at most the first, to load the script, went through the client


def test_a_lost_connection_falls_back_to_the_client_and_then_reconnects():
    pacer, calls = _pacer()
    account = f"acc_{uuid.uuid4().hex}"
    assert pacer.reserve(account, 0.0, 1.0).granted
    before = len(calls)
    held = pacer._held.connection
    held.send_command("CLIENT", "ID")
    pacer.client.execute_command("CLIENT", "KILL", "ID", held.read_response())
    assert pacer.reserve(account, 0.0, 1.0).granted
    assert len(calls) == before + 1
    assert pacer.reserve(account, 0.0, 1.0).granted
    assert len(calls) == before + 1  # the thread's connection, connected again


def test_a_script_the_server_does_not_know_goes_through_the_client(monkeypatch):
    pacer, calls = _pacer()
    account = f"acc_{uuid.uuid4().hex}"
    # The thread's connection asks for a script the server never saw (NOSCRIPT, as after a
    # restart or SCRIPT FLUSH): the client's call, which loads the script when it must, answers.
    monkeypatch.setattr(type(pacer._reserve), "sha", property(lambda self: "0" * 40))
    assert pacer.reserve(account, 0.0, 1.0).granted
    assert pacer.reserve(account, 0.0, 1.0).granted
    assert len(calls) == 2


def test_each_thread_holds_its_own_connection():
    pacer, _ = _pacer()
    account = f"acc_{uuid.uuid4().hex}"
    held: list[Any] = []

    def reserve() -> None:
        pacer.reserve(account, 0.0, 1.0)
        held.append(pacer._held.connection)

    threads = [threading.Thread(target=reserve) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(connection) for connection in held}) == 4
