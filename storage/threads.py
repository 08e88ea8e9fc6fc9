"""The threads that do the front doors' storage work, handing results back to the event loop in batches.

A thread-pool executor wakes the event loop once per finished request (a self-pipe write and a
GIL hand-over each). Under load these hand-overs, not the queries, were the cost of a request
(bench/workspaces.py). Here each thread takes every waiting job it finds, runs them, and wakes
the loop once for the whole batch.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger("switchboard.storage")
Job = tuple[asyncio.AbstractEventLoop, asyncio.Future[Any], Callable[..., Any], tuple[Any, ...]]


class BatchingThreads:
    """`idle`, when given, runs on a thread that finds no job waiting, before it sleeps: what a
    thread keeps between jobs while busy (a database connection) it gives back there."""

    def __init__(self, threads: int, name: str, *, idle: Callable[[], None] | None = None) -> None:
        self._jobs: queue.SimpleQueue[Job] = queue.SimpleQueue()
        self._idle = idle
        for number in range(threads):
            threading.Thread(target=self._work, name=f"{name}-{number}", daemon=True).start()

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        # In a copy of the caller's context: what a request's log lines say of it (its id, its
        # workspace: `kit.log_context`) holds in the thread that does its work.
        self._jobs.put((loop, future, contextvars.copy_context().run, (fn, *args)))
        return await future

    def _work(self) -> None:
        while True:
            try:
                batch = [self._jobs.get_nowait()]
            except queue.Empty:
                if self._idle is not None:
                    try:
                        self._idle()
                    except Exception:  # the thread must live on to take the next job
                        log.exception("giving back an idle storage thread's resources failed")
                batch = [self._jobs.get()]
            while len(batch) < 32:
                try:
                    batch.append(self._jobs.get_nowait())
                except queue.Empty:
                    break
            done: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Any], bool, Any]]] = {}
            for loop, future, fn, args in batch:
                try:
                    outcome = (future, True, fn(*args))
                except BaseException as error:  # handed to the awaiting request, which re-raises it
                    outcome = (future, False, error)
                done.setdefault(loop, []).append(outcome)
            for loop, outcomes in done.items():
                loop.call_soon_threadsafe(_settle, outcomes)


def _settle(outcomes: list[tuple[asyncio.Future[Any], bool, Any]]) -> None:
    for future, ok, value in outcomes:
        if future.cancelled():
            continue
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)
