"""Running a front door's storage work: on the event loop when it only reads, else on a thread.

Every front door runs its storage work through `run`: `/v1`'s operations, MCP's tools and its
token check, the dashboard's pages. The edge owns the transaction (DESIGN rule 3), and where the
work runs is decided here once:

- work that waits on the network (`waits`: a platform call, a metadata document) runs on
  Starlette's larger pool, so a slow peer cannot hold the few storage threads, and without a
  transaction around it: it writes in short transactions of its own (nothing waits inside a write);
- a read on SQLite runs first on the event loop, in a snapshot that never waits
  (`storage.db.read_on_loop`): a key lookup and a page of rows cost tens of microseconds there,
  less than the hand-over to a thread. Should it need a write that could wait, nothing was
  written and it runs again on a storage thread (`work` is told where it runs);
- everything else runs on the storage threads (`storage.threads`), in its transaction.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import Any, Literal, TypeVar, cast

import psycopg2.errors
from peewee import OperationalError
from starlette.concurrency import run_in_threadpool

from storage.db import (
    WriteNeeded,
    connection,
    db,
    give_back,
    is_postgres,
    kept_connection,
    read_on_loop,
    reading,
    reads_on_loop,
)
from storage.threads import BatchingThreads

T = TypeVar("T")
# "own": the work runs short transactions itself (it calls the network in between), as "none".
Transaction = Literal["read", "write", "own", "none"]
Work = Callable[[bool], T]  # called with True when it runs on the event loop


def transaction(kind: str) -> Any:
    """The block a piece of work runs in: one snapshot of reads, one write transaction, or none
    (the work opens its own). `kind` is a `Transaction`."""
    if kind == "read":
        return reading()
    if kind == "write":
        return db.atomic()
    return contextlib.nullcontext()


@functools.cache
def storage_threads() -> BatchingThreads:
    """The few threads that do the front doors' storage work, off the event loop.

    Few, because fewer runnable threads fight less over the GIL (measured on /v1: 4 serve more
    requests than 32).
    """
    return BatchingThreads(4, "storage", idle=give_back)


def lost_a_deadlock(error: BaseException) -> bool:
    """Whether PostgreSQL rolled the transaction back to break a deadlock or a serialisation
    conflict: nothing of it was written, and the same work may simply run again."""
    cause = error.__cause__ or error.__context__
    return is_postgres() and isinstance(cause, psycopg2.errors.TransactionRollbackError)


def in_transaction(kind: str, work: Callable[[], T], *, attempts: int = 3) -> T:
    """`work` in its transaction (`kind` a `Transaction`), run again (a few times at most) when
    PostgreSQL chose it as a deadlock's victim: it wrote nothing, and work in one "read" or "write"
    transaction calls no one (DESIGN rule 15). Work that runs its own transactions ("own", "none")
    runs once: it may have called a platform in between."""
    if kind not in ("read", "write"):
        attempts = 1
    for attempt in range(1, attempts + 1):
        try:
            with transaction(kind):
                return work()
        except OperationalError as error:
            if attempt == attempts or not lost_a_deadlock(error):
                raise
    raise AssertionError("unreachable")


def _on_thread(work: Work[T], kind: Transaction) -> T:
    with connection(), transaction(kind):
        return work(False)


def _on_storage_thread(work: Work[T], kind: Transaction) -> T:
    # The thread keeps its connection while jobs keep coming (`give_back` when none waits).
    with kept_connection(), transaction(kind):
        return work(False)


def _unconnected(work: Work[T]) -> T:
    return work(False)


async def run(work: Work[T], *, transaction: Transaction, on_loop: bool = False, waits: bool = False,
              connect: bool = True) -> T:
    """Run `work` with a connection and its transaction where it costs least (see the module's text).

    `on_loop`: the work only reads (or can tell `WriteNeeded`), so it may try the event loop first.
    `connect=False`: the work connects itself, if at all (the health check must answer when the
    database does not).
    """
    if not connect:
        return cast(T, await storage_threads().run(_unconnected, work))
    if waits:
        return await run_in_threadpool(_on_thread, work, "none")
    if on_loop and reads_on_loop():
        try:
            with read_on_loop():
                return work(True)
        except WriteNeeded:
            pass
    return cast(T, await storage_threads().run(_on_storage_thread, work, transaction))
