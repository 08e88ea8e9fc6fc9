"""The outbound pool: the threads that wait on another host on a caller's behalf.

A media import, a CSV row's `mediaUrls`, a webhook endpoint's address check, a message sent or a
post published from a request, a client's metadata document: each waits on a host that someone
else runs, for as long as that host makes it (up to `kit.net`'s deadline). They used to wait on
Starlette's shared thread pool, where sign-in's password hash and the dashboard's pages also run:
45 slow imports from one key took it all, and sign-in waited a minute. So they run here instead:

- a pool of its own (`THREADS`), so however many wait, the shared pool and the storage threads
  stay free for everyone else;
- at most `PER_WORKSPACE` of them for one workspace at a time (`run`'s `bucket`: the workspace, or
  the credential until its workspace is known): the others of that workspace wait their turn on the
  event loop, holding no thread, and are answered 429 after `QUEUE_SECONDS`; so one workspace
  cannot fill the pool for the others either.

Both bounds are per process: N API processes give N pools.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from kit.errors import RateLimited

T = TypeVar("T")

THREADS = 32
PER_WORKSPACE = 8
QUEUE_SECONDS = 30.0
_POLL_SECONDS = 0.02

_lock = threading.Lock()
_in_flight: dict[str, int] = {}


@functools.cache
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=THREADS, thread_name_prefix="outbound")


def in_flight(bucket: str) -> int:
    with _lock:
        return _in_flight.get(bucket, 0)


def _take(bucket: str) -> bool:
    with _lock:
        if _in_flight.get(bucket, 0) >= PER_WORKSPACE:
            return False
        _in_flight[bucket] = _in_flight.get(bucket, 0) + 1
        return True


def _give_back(bucket: str) -> None:
    with _lock:
        left = _in_flight[bucket] - 1
        if left:
            _in_flight[bucket] = left
        else:
            del _in_flight[bucket]


async def run(fn: Callable[..., T], *args: Any, bucket: str | None = None) -> T:
    """Run `fn(*args)` on the outbound pool (with the caller's context variables) and await it,
    once `bucket` (a workspace) has fewer than `PER_WORKSPACE` calls there; `RateLimited` when it
    waited `QUEUE_SECONDS` for that."""
    if bucket is not None and not _take(bucket):
        # Polled rather than awaited on a loop-bound primitive: the event loop of each test app differs,
        # and a full bucket is the exception, not the rule.
        give_up = time.monotonic() + QUEUE_SECONDS
        while not _take(bucket):
            if time.monotonic() >= give_up:
                raise RateLimited(
                    f"This workspace already has {PER_WORKSPACE} requests waiting on other hosts (media "
                    "imports, platform calls); try again when one has finished.",
                    headers={"Retry-After": "5"})
            await asyncio.sleep(_POLL_SECONDS)
    context = contextvars.copy_context()

    def call() -> T:
        try:
            return context.run(fn, *args)
        finally:  # when the thread is done, not when its caller stops waiting (a client that went away)
            if bucket is not None:
                _give_back(bucket)

    future = _pool().submit(call)
    try:
        return await asyncio.wrap_future(future)
    finally:
        if future.cancelled() and bucket is not None:  # it never started: `call` gives nothing back
            _give_back(bucket)
