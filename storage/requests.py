"""Running a front door's storage work: on the event loop when it only reads, else on a thread.

Every front door runs its storage work through `run`: `/v1`'s operations, MCP's tools and its
token check, the dashboard's pages. The edge owns the transaction (DESIGN rule 3), and where the
work runs is decided here once:

- work that waits on another host (`waits`: a platform call, a media import, a metadata document)
  runs on the outbound pool (`kit.bulkhead`: its own threads, a share per workspace), so a slow
  peer holds neither the few storage threads nor the shared pool where sign-in hashes passwords,
  and without a transaction around it: it writes in short transactions of its own (nothing waits
  inside a write);
- work that blocks without calling out (`blocks`: a password hash) runs on Starlette's shared pool,
  also without a transaction around it;
- a read on SQLite runs first on the event loop, in a snapshot that never waits
  (`storage.db.read_on_loop`): a key lookup and a page of rows cost tens of microseconds there,
  less than the hand-over to a thread. Should it need a write that could wait, nothing was
  written and it runs again on a storage thread (`work` is told where it runs);
- everything else runs on the storage threads (`storage.threads`), in its transaction.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal, TypeVar, cast

import psycopg2
import psycopg2.errors
from peewee import InterfaceError, OperationalError
from starlette.concurrency import run_in_threadpool

from kit import bulkhead
from kit.errors import Unavailable
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
log = logging.getLogger("switchboard.storage")
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


# SQLite's answers when the disk under the data dir is full or failing, or the file cannot be had.
_SQLITE_UNAVAILABLE = ("database or disk is full", "disk i/o error", "unable to open database file",
                       "database is locked")
RETRY_AFTER_SECONDS = 5
# What storage raises when it cannot be reached: through peewee, or from the driver itself (a
# cursor asked of a connection the server closed).
STORAGE_ERRORS = (OperationalError, InterfaceError, psycopg2.OperationalError, psycopg2.InterfaceError)


def storage_unavailable(error: BaseException) -> str | None:
    """What is wrong with storage when `error` says it cannot be reached or written (a refused or
    lost PostgreSQL connection, a server shutting down, a full disk), else None (a fault of ours)."""
    if isinstance(error, (InterfaceError, psycopg2.InterfaceError)):  # "connection already closed"
        return "unreachable"
    if isinstance(error, psycopg2.OperationalError):  # raised by the driver itself, not through peewee
        return None if isinstance(error, psycopg2.errors.TransactionRollbackError) else "unreachable"
    if not isinstance(error, OperationalError) or lost_a_deadlock(error):
        return None
    original = error.args[0] if error.args and isinstance(error.args[0], BaseException) else error.__context__
    if isinstance(original, psycopg2.OperationalError):  # refused, lost, shutting down, out of connections
        return "unreachable"
    # On a full disk SQLite rolls the transaction back itself, and peewee's own rollback then fails
    # with "no transaction is active": the cause is the error before it.
    seen: BaseException | None = error
    for _ in range(4):
        if seen is None:
            break
        text = str(seen).lower()
        if "full" in text or "i/o" in text:
            return "full"
        if any(part in text for part in _SQLITE_UNAVAILABLE):
            return "unreachable"
        seen = seen.__cause__ or seen.__context__
    return None


# How long a worker keeps trying to write the outcome of a platform call it made while storage is
# away (a PostgreSQL restart takes seconds): well inside the shortest lease (60 s), after which the
# row would be `unknown` though the worker knows what happened.
OUTCOME_RETRY_SECONDS = 40.0


def outcome_written(write: Callable[[], T], *, seconds: float = OUTCOME_RETRY_SECONDS) -> T:
    """Run `write` (the record of a side effect already made); while storage cannot be reached, run
    it again for up to `seconds`, each time on a thread of its own with a fresh connection (this
    thread's connection died with the server, and peewee keeps it in the thread's state). Only for
    writes that are safe to repeat and need no transaction of the caller: an outcome conditional on
    the claim it finishes."""
    try:
        return write()
    except STORAGE_ERRORS as error:
        if storage_unavailable(error) is None:
            raise
    give_up = time.monotonic() + seconds
    pause = 0.25
    while True:
        log.warning("storage is unreachable; the outcome is written again in %.2g s", pause)
        time.sleep(pause)
        pause = min(pause * 2, 4.0)
        try:
            with ThreadPoolExecutor(1, thread_name_prefix="outcome") as single:
                return single.submit(_connected, write).result()
        except STORAGE_ERRORS as error:
            if storage_unavailable(error) is None or time.monotonic() + pause > give_up:
                raise


def _connected(write: Callable[[], T]) -> T:
    with connection():
        return write()


def unavailable(error: BaseException) -> Unavailable | None:
    """The 503 a caller gets for storage that cannot be reached or written: nothing it did, and
    gone once the storage is back (`Retry-After`)."""
    what = storage_unavailable(error)
    if what is None:
        return None
    message = ("Storage is full; nothing of this request was saved. Try again shortly." if what == "full"
               else "Storage cannot be reached right now. Try again shortly.")
    return Unavailable(message, headers={"Retry-After": str(RETRY_AFTER_SECONDS)})


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
              blocks: bool = False, bucket: str | None = None, connect: bool = True) -> T:
    """Run `work` with a connection and its transaction where it costs least (see the module's text).

    `on_loop`: the work only reads (or can tell `WriteNeeded`), so it may try the event loop first.
    `connect=False`: the work connects itself, if at all (the health check must answer when the
    database does not). `bucket`: whose share of the outbound pool `waits` work takes (a workspace).
    """
    try:
        return await _run(work, transaction=transaction, on_loop=on_loop, waits=waits, blocks=blocks, bucket=bucket,
                          connect=connect)
    except STORAGE_ERRORS as error:
        refusal = unavailable(error)
        if refusal is None:
            raise
        raise refusal from None


async def _run(work: Work[T], *, transaction: Transaction, on_loop: bool, waits: bool, blocks: bool,
               bucket: str | None, connect: bool) -> T:
    if not connect:
        return cast(T, await storage_threads().run(_unconnected, work))
    if waits:
        return await bulkhead.run(_on_thread, work, "none", bucket=bucket)
    if blocks:
        return await run_in_threadpool(_on_thread, work, "none")
    if on_loop and reads_on_loop():
        try:
            with read_on_loop():
                return work(True)
        except WriteNeeded:
            pass
    return cast(T, await storage_threads().run(_on_storage_thread, work, transaction))
