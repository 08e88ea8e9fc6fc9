"""The epochs: counters that triggers move in the very transaction of every change to what processes
keep in memory (API keys, migration 15; workspaces and their profiles, migration 23), read together
in one statement (`storage.hot.epochs`).

A process trusts what it remembers only while the epoch it was read under still reads as it did:
a change holds at once in every process, for the price of one small read a request instead of the
rows and their conversions. The epoch is read before the rows it guards, so a change committed
between the two reads leaves an entry that is read again at its next use rather than one that
outlives the change (PostgreSQL reads each statement at its own moment).

`arrived` (`time.monotonic()` when the request came in): the epochs this process read last, on any
thread, may serve it when that read was begun after the request arrived, since it then shows every
change committed before the request was sent. A storage thread taking a batch of waiting requests
reads the epochs once for the batch, and a request that waited while another thread read them needs
no read of its own (on PostgreSQL, one round trip saved each); within one request, what it reads
second (its workspace after its key) needs no second read.
"""

from __future__ import annotations

import threading
import time

from storage import hot
from storage.db import db, is_postgres
from storage.hot import Epochs

__all__ = ["Epochs", "read"]

# The process's latest read (see `read`): (when it was begun, database, value).
_last_read: tuple[float, int, Epochs] | None = None
# The read under way that began last, if any (see `read`).
_reading: _Read | None = None


def read(arrived: float | None) -> Epochs:
    """The epochs as they stand for a request that arrived at `arrived` (None: read them now)."""
    global _last_read, _reading
    database = id(db.obj)
    last = _last_read  # one read of the global: the tuple is never changed in place
    if arrived is not None and last is not None and last[0] >= arrived and last[1] == database:
        return last[2]
    pending = _reading
    if arrived is not None and pending is not None and pending.began >= arrived and pending.database == database:
        # Another thread's read, begun after this request arrived, is under way: its answer serves
        # this request as a finished one would, for a wait on the thread instead of a round trip of
        # our own (PostgreSQL only: see `_Read`).
        pending.done.wait()
        if pending.value is not None:
            return pending.value
    made = time.monotonic()  # before the read: it shows at least what was committed by then
    mine = _Read(made, database) if is_postgres() else None
    if mine is not None:
        _reading = mine
    try:
        value = hot.epochs()
        if mine is not None:
            mine.value = value
    finally:
        if mine is not None:
            mine.done.set()  # a failed read leaves `value` None: its waiters read for themselves
            if _reading is mine:
                _reading = None
    last = _last_read
    # Threads race to record their reads: the one begun last is kept (each pair is true alone).
    if last is None or made >= last[0] or last[1] != database:
        _last_read = (made, database, value)
    return value


class _Read:
    """A read of the epochs under way on some thread, which threads serving requests that arrived
    before it began wait for instead of reading too. On PostgreSQL only: there a read is a round
    trip whose wait releases the GIL; SQLite's reads (on the event loop, which must never wait on a
    thread) cost less than the hand-over."""

    __slots__ = ("began", "database", "done", "value")

    def __init__(self, began: float, database: int) -> None:
        self.began = began
        self.database = database
        self.done = threading.Event()
        self.value: Epochs | None = None
