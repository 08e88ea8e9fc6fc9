"""DESIGN rule 15 as a check on every test: nothing waits on the network or a password hash while
its thread holds a database transaction.

On SQLite one such wait stops every writer of the service (six anonymous requests for slow client
metadata documents once held all writes for 30 s). Rather than a test per code path, the waits
themselves are watched: httpx2's transports (every request the service makes: platform calls,
webhook deliveries, metadata documents) and Argon2's hash and verify. Each records, with the
stack, any call made while the calling thread's connection is inside a transaction; the autouse
fixture in tests/conftest.py fails the test that made one. The service runs in the test process
(uvicorn in a thread), so its threads are watched too.
"""

from __future__ import annotations

import functools
import threading
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx2
from argon2 import PasswordHasher

from storage.db import db

_found: list[str] = []
_lock = threading.Lock()


def _in_transaction() -> bool:
    if db.obj is None:
        return False
    try:
        return bool(db.in_transaction())
    except Exception:  # no connection state on this thread yet: no transaction either
        return False


def _note(what: str) -> None:
    if _in_transaction():
        stack = "".join(traceback.format_stack(limit=14)[:-2])
        with _lock:
            _found.append(f"{what} inside a transaction (thread {threading.current_thread().name}):\n{stack}")


def _watched(what: str, function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        _note(what)
        return function(*args, **kwargs)

    return wrapper


def _watched_async(what: str, function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        _note(what)
        return await function(*args, **kwargs)

    return wrapper


def install() -> None:
    """Watch the waits for the rest of the session (idempotent)."""
    if getattr(httpx2.HTTPTransport.handle_request, "_watched", False):
        return
    targets: list[tuple[Any, str, str, bool]] = [
        (httpx2.HTTPTransport, "handle_request", "an HTTP request", False),
        (httpx2.AsyncHTTPTransport, "handle_async_request", "an HTTP request", True),
        (PasswordHasher, "hash", "a password hash", False),
        (PasswordHasher, "verify", "a password check", False),
    ]
    for owner, name, what, is_async in targets:
        original = getattr(owner, name)
        wrapped = (_watched_async if is_async else _watched)(what, original)
        wrapped._watched = True  # type: ignore[attr-defined]
        setattr(owner, name, wrapped)


def take() -> list[str]:
    with _lock:
        found = list(_found)
        _found.clear()
    return found


@contextmanager
def forbidden_waits() -> Iterator[None]:
    """Fail the block if anything in it waited inside a transaction."""
    take()
    yield
    found = take()
    assert not found, "waited on the network or a password hash inside a transaction:\n" + "\n".join(found)
