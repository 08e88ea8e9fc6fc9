"""The one database handle: a proxy initialised from `SWITCHBOARD_DATABASE_URL` at start-up.

SQLite (embedded default) runs in WAL mode with `BEGIN IMMEDIATE` transactions: a read-then-write
transaction otherwise fails with "database is locked" under concurrency instead of waiting.
PostgreSQL (scale-out) uses a connection pool. Connections are per thread: open them in the
thread that does the work (`with connection():`). The event loop's own connection serves only
`read_on_loop()` (SQLite reads, which never wait on a writer in WAL mode); nothing else touches
storage on the event loop.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import re
import select
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast
from urllib.parse import parse_qsl, urlsplit

from peewee import Database, DatabaseProxy, OperationalError, SqliteDatabase, _transaction
from peewee import __exception_wrapper__ as _peewee_errors  # type: ignore[attr-defined]  # untyped in its stubs
from playhouse.pool import PooledPostgresqlDatabase

from kit import files

db = DatabaseProxy()
log = logging.getLogger("switchboard.storage")

SQLITE_PRAGMAS = {
    "journal_mode": "wal",
    "busy_timeout": 10_000,
    "foreign_keys": 1,
    "synchronous": "normal",
    "cache_size": -32_000,
    # A long-running process folds the WAL into the database on a thread of its own
    # (`WalCheckpoints`): SQLite's own checkpoint, every 1,000 pages, ran in the commit that crossed
    # the mark, with the disk's flush, while that writer held the process's writer lock, so every
    # writer waited (one commit in 73 took 2-19 ms). A commit still checkpoints past 10,000 pages
    # (40 MB): a process with no such thread (a command) keeps the WAL bounded by itself.
    "wal_autocheckpoint": 10_000,
}


class _Holding(threading.local):
    """What this thread holds of the database: every attribute has its default, so reading one
    never raises (an AttributeError behind `getattr(..., default)` costs ~2,000 instructions, and
    each statement read two or three)."""

    lock = False  # the process's writer lock
    snapshot = False  # inside `read_on_loop()`
    impatient: Any = None  # the connection `read_on_loop()` left with busy_timeout 0


class SerialisedSqliteDatabase(SqliteDatabase):
    """SQLite whose writers in one process take turns on a Python lock before `BEGIN IMMEDIATE`.

    SQLite's own busy handler sleeps 1, 2, 5, 10... ms between retries, which caps a contended
    process at a few hundred write transactions a second; a lock wakes the next writer at once.
    Other processes on the same file still meet at SQLite's lock (busy_timeout). Deferred (read)
    transactions never take the lock: in WAL mode readers do not block writers.
    """

    # peewee's own, untyped in its stubs: the thread's connection state and the commit hooks.
    _state: Any
    _run_commit_callbacks: Callable[[], None]
    _clear_commit_callbacks: Callable[[], None]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._writer = threading.Lock()
        self._holding = _Holding()

    def begin(self, lock_type: str | None = None) -> None:
        lock_type = lock_type or getattr(self, "_lock_type", None)
        if lock_type in ("IMMEDIATE", "EXCLUSIVE"):
            self._writer.acquire()
            self._holding.lock = True
        try:
            super().begin(lock_type)
        except BaseException:
            self._release()
            raise

    def commit(self) -> None:
        try:
            super().commit()
        finally:
            self._release()

    def rollback(self) -> None:
        try:
            super().rollback()
        finally:
            self._release()

    def cursor(self, named_cursor: Any = None) -> Any:
        holding = self._holding
        if getattr(holding, "impatient", None) is not None and not getattr(holding, "snapshot", False):
            # The last `read_on_loop()` left this connection impatient; anything else waits its turn.
            if holding.impatient is self._state.conn:
                holding.impatient.execute(f"PRAGMA busy_timeout = {SQLITE_PRAGMAS['busy_timeout']}")
            holding.impatient = None
        return super().cursor(named_cursor)  # type: ignore[no-untyped-call]

    def _release(self) -> None:
        if getattr(self._holding, "lock", False):
            self._holding.lock = False
            self._writer.release()


class PostgresPool(PooledPostgresqlDatabase):  # type: ignore[misc]  # playhouse has no annotations
    """peewee's PostgreSQL pool without a round trip on every check-out.

    The pool pings each connection it hands out (`SELECT 1`) while holding the database's lock and
    the pool's, so the threads of a process queue behind each other's ping (in process, 4 threads
    checking a key and reading a workspace: 2,600 a second with the ping, 3,900 without). A
    connection given back moments ago is as alive as the server; only one idle for longer than
    `PING_AFTER` seconds is pinged. One the server closed in that moment (a restart, an
    administrator ending its session) is still seen without a round trip: the server's farewell
    or the socket's end waits on it to be read, where an idle connection has nothing to read
    (`_has_input`), and such a connection is pinged, found dead and replaced. Only a connection
    cut silently in between (a network that drops packets) fails the request that takes it, and
    it is dropped on its return.
    """

    PING_AFTER = 5.0

    def __init__(self, *args: Any, prepares: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._returned: dict[int, float] = {}  # connection key -> when it came back to the pool
        self.prepares = prepares
        # The statements prepared on each connection, forgotten with the connection itself.
        self._prepared: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()
        self._prepared_lock = threading.Lock()
        self._last_prepared = threading.local()

    def execute_prepared(self, template: str, params: tuple[Any, ...], *, wait_for_flush: bool = True) -> Any:
        """Run `template` (`?` placeholders) as a statement the server prepared once for this
        connection (`PREPARE`, then `EXECUTE`): it is parsed and planned once, not on every run.
        Measured on the workspace read: 160 → 84 µs of the backend's CPU a run, 230 → 145 µs of
        wall time. For the few fixed statements every request runs; a statement built anew each
        time (a list of ids, say) would pile up on the connection.

        Callers check `prepares` first: it is off (`?prepared_statements=off` in the URL) behind a
        pooler that hands one client's statements to several server sessions (PgBouncer in
        transaction mode). `wait_for_flush=False`: see `NO_FLUSH_WAIT`.
        """
        conn = self.connection()
        name = _statement_name(template)
        last = self._last_prepared  # this thread's connection and its set, without a weak reference made
        if getattr(last, "conn", None) is conn:
            done = last.done
        else:
            with self._prepared_lock:
                done = self._prepared.setdefault(conn, set())
            last.conn, last.done = conn, done
        if name not in done:
            numbered = iter(range(1, template.count("?") + 1))
            self.execute_sql(f"PREPARE {name} AS " + re.sub(r"\?", lambda _: f"${next(numbered)}", template))
            done.add(name)  # outlives a rollback, as the prepared statement itself does
        # Straight on the open connection's cursor (peewee's `execute_sql` checks the connection and
        # logs first), with peewee's error types.
        cursor = conn.cursor()
        with _peewee_errors:
            cursor.execute(_execute_text(name, len(params), wait_for_flush), params)
        return cursor

    def _is_closed(self, conn: Any) -> bool:
        returned = self._returned.get(self.conn_key(conn))
        if (returned is not None and time.monotonic() - returned < self.PING_AFTER and not conn.closed
                and self._adapter.txn_status(conn) == self._adapter.txn_idle and not _has_input(conn)):
            return False
        return bool(super()._is_closed(conn))

    def _close(self, conn: Any, close_conn: bool = False) -> None:
        self._returned[self.conn_key(conn)] = time.monotonic()
        super()._close(conn, close_conn)

    def _close_raw(self, conn: Any) -> None:
        self._returned.pop(self.conn_key(conn), None)
        super()._close_raw(conn)


def _has_input(conn: Any) -> bool:
    """Whether an idle connection has bytes waiting: the server said something unasked, which on a
    pooled connection (no LISTEN, no COPY) is that it is closing it, or the socket reached its end."""
    try:
        poller = select.poll()
        poller.register(conn.fileno(), select.POLLIN)
        return bool(poller.poll(0))
    except (OSError, ValueError):  # no socket any more
        return True


# Put before a statement on PostgreSQL, in the same query: its transaction (the statement alone,
# in autocommit; else the open transaction) commits without waiting for the WAL to reach the disk.
# On a machine whose flush takes milliseconds that wait, not the work, is most of a short write. A
# server crash may then lose the last fraction of a second of such commits, so it is only for a
# change whose loss the service already survives: a sent message's outcome (the claim before the
# call always waits; a lost outcome leaves the row `sending` until its lease makes it `unknown`, and
# it is never sent again). SQLite's WAL at `synchronous=normal` waits for no disk at commit at all.
NO_FLUSH_WAIT = "SET LOCAL synchronous_commit TO off; "


@functools.lru_cache(maxsize=512)
def _execute_text(name: str, count: int, wait_for_flush: bool = True) -> str:
    """`EXECUTE name(%s, ...)`: the same few texts on every run, built once."""
    text = f"EXECUTE {name}(" + ", ".join(["%s"] * count) + ")" if count else f"EXECUTE {name}"
    return text if wait_for_flush else NO_FLUSH_WAIT + text


@functools.lru_cache(maxsize=512)
def _statement_name(template: str) -> str:
    return "sb_" + hashlib.sha256(template.encode()).hexdigest()[:16]


class WalCheckpoints:
    """Folds a SQLite database's WAL into its file every `interval` seconds, on a thread with its
    own connection, as SQLite's passive checkpoint does: as far as no reader still needs, never
    waiting for a reader or a writer (see `SQLITE_PRAGMAS`). Several processes may each run one on
    the same file: a checkpoint already under way elsewhere makes this one a no-op."""

    def __init__(self, path: str, interval: float = 0.5) -> None:
        self.path = path
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="wal-checkpoints", daemon=True)

    def start(self) -> WalCheckpoints:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        try:
            connection = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        except sqlite3.Error:  # a commit past 10,000 pages checkpoints by itself (`SQLITE_PRAGMAS`)
            log.warning("the WAL's checkpoints could not open the database; commits will fold it in")
            return
        try:
            while not self._stop.wait(self.interval):
                try:
                    connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                except sqlite3.Error:  # the file went away (a test's) or is unreadable: try again later
                    continue
        finally:
            connection.close()


def background_checkpoints() -> WalCheckpoints | None:
    """The open database's `WalCheckpoints`, started (SQLite only; None on PostgreSQL)."""
    database = db.obj
    if isinstance(database, SerialisedSqliteDatabase):
        return WalCheckpoints(database.database).start()
    return None


def open_database(url: str) -> Database:
    parts = urlsplit(url)
    if parts.scheme == "sqlite":
        path = parts.path[1:] if parts.path.startswith("//") else parts.path
        if not path or path == "/:memory:":
            raise ValueError("an in-memory database cannot be shared between threads; give a file path")
        files.private_file(Path(path))
        return SerialisedSqliteDatabase(
            path, pragmas=SQLITE_PRAGMAS, lock_type="IMMEDIATE", check_same_thread=False
        )
    if parts.scheme in {"postgres", "postgresql", "postgresql+pool"}:
        options = dict(parse_qsl(parts.query))
        return PostgresPool(
            (parts.path or "/").lstrip("/"),
            user=parts.username,
            password=parts.password,
            host=parts.hostname or "127.0.0.1",
            port=parts.port or 5432,
            max_connections=int(options.pop("max_connections", 48)),
            prepares=options.pop("prepared_statements", "on").lower() not in {"off", "false", "0", "no"},
            stale_timeout=300,
            timeout=10,
            **options,
        )
    raise ValueError(f"unsupported database URL scheme: {parts.scheme!r}")


def initialise(url: str) -> Database:
    database = open_database(url)
    db.initialize(database)
    return database


def is_postgres() -> bool:
    return isinstance(db.obj, PooledPostgresqlDatabase)


def connection() -> contextlib.AbstractContextManager[Any]:
    """Make sure this thread has a connection for the block.

    SQLite connections are cheap to keep and costly to reopen (pragmas), so a worker thread keeps
    its own, opened here the first time; PostgreSQL connections go back to the pool when the
    outermost block ends. (A plain function rather than a generator's context manager: on SQLite
    there is nothing to do once the thread is connected, and the generator cost 6 µs a block, most
    of what the snapshot inside it costs.)
    """
    database = db.obj
    if isinstance(database, SqliteDatabase):
        if database.is_closed():
            database.connect()
        return contextlib.nullcontext()
    return cast(contextlib.AbstractContextManager[Any], database.connection_context())


_kept = threading.local()  # `kept_connection`'s: the connection context a storage thread holds


def kept_connection() -> contextlib.AbstractContextManager[Any]:
    """`connection()` for a storage thread's job: on PostgreSQL the connection stays with the thread
    after the job, for its next one, until `give_back()` (called when no job waits).

    A check-out from peewee's pool and the return (its lock, heap, checks) cost some 15 µs of the
    thread's CPU, as much as a round trip, on every request (`bench/workspaces.py`); a thread that
    always finds more work waiting now checks out once per busy stretch. Before each job the kept
    connection passes the pool's own test without a round trip (`PostgresPool._is_closed`): still
    open, no transaction left open, no farewell from the server waiting to be read; else it goes
    back to the pool, which drops it, and the job takes another.
    """
    database = db.obj
    if not isinstance(database, PostgresPool):
        return connection()
    context = getattr(_kept, "context", None)
    if context is not None:
        conn = database._state.conn
        if (context.db is not database or database._state.closed or conn.closed or database.in_transaction()
                or database._adapter.txn_status(conn) != database._adapter.txn_idle or _has_input(conn)):
            give_back()  # to the pool it came from: the service may have opened another database since
            context = None
    if context is None:
        context = database.connection_context()
        context.__enter__()
        _kept.context = context
    return contextlib.nullcontext()


def give_back() -> None:
    """Return the connection `kept_connection` kept on this thread to the pool."""
    context = getattr(_kept, "context", None)
    if context is not None:
        _kept.context = None
        context.__exit__(None, None, None)


def reading() -> Any:
    """Reads that belong together.

    SQLite: one DEFERRED transaction, a single consistent snapshot without the write lock.
    PostgreSQL: no transaction at all. At its READ COMMITTED level each statement takes its own
    snapshot inside a transaction too, so BEGIN and COMMIT would add two round trips to every read
    and no consistency.
    """
    if isinstance(db.obj, SqliteDatabase):
        return db.atomic("DEFERRED")
    return contextlib.nullcontext()


class WriteNeeded(Exception):
    """A block run under `read_on_loop()` needs a write that could wait; nothing was written. Run it
    again where writes may wait (a storage thread)."""


def reads_on_loop() -> bool:
    """Whether reads may run on the event loop: SQLite only, where a read in WAL mode costs
    microseconds and never waits on a writer. PostgreSQL is a network round trip: a thread's job."""
    return isinstance(db.obj, SqliteDatabase)


def read_on_loop() -> contextlib.AbstractContextManager[None]:
    """One snapshot on this thread's connection that never waits for a lock (SQLite only).

    For the event loop: with SQLite's busy timeout at zero, a statement that would wait (a write
    while another connection writes, a snapshot that can no longer be upgraded) fails at once and
    `WriteNeeded` is raised after the snapshot is rolled back, so the caller can run the work on a
    thread instead. Transactions nested in the block (`db.atomic()`) are its savepoints: none of
    them reaches `SerialisedSqliteDatabase`'s writer lock.
    """
    database = db.obj
    assert isinstance(database, SerialisedSqliteDatabase), "reads run on the loop on SQLite only"
    return _Snapshot(database)


class _Snapshot:
    """`read_on_loop()`'s block, written against the sqlite3 connection: it runs on every read
    request, and peewee's `atomic()` plus two pragma statements cost 14 µs where this costs 1.5.

    The zero busy timeout stays on the connection after the block (the loop's connection serves
    these blocks almost only); `SerialisedSqliteDatabase.cursor` puts the patient one back before
    any other statement on that connection. (`PRAGMA query_only` would refuse writes outright, but
    toggling it expires every prepared statement of the connection.)
    """

    __slots__ = ("connection", "database", "marker")

    def __init__(self, database: SerialisedSqliteDatabase) -> None:
        self.database = database

    def __enter__(self) -> None:
        database = self.database
        if database.is_closed():
            database.connect()
        self.connection = connection = database._state.conn
        local = database._holding
        if getattr(local, "impatient", None) is not connection:
            connection.execute("PRAGMA busy_timeout = 0")
            local.impatient = connection
        local.snapshot = True
        connection.execute("BEGIN DEFERRED")
        # On peewee's stack, so that `db.atomic()` inside the block makes a savepoint, not a BEGIN.
        self.marker = _transaction(database)
        database.push_transaction(self.marker)

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: object) -> None:
        database = self.database
        database.pop_transaction()  # type: ignore[no-untyped-call]
        database._holding.snapshot = False
        if kind is None:
            try:
                self.connection.execute("COMMIT")
            except sqlite3.OperationalError as failure:
                self._roll_back()
                raise (WriteNeeded() if _would_wait(failure) else failure) from None
            database._run_commit_callbacks()
            return
        self._roll_back()
        if error is not None and _would_wait(error):
            raise WriteNeeded() from None

    def _roll_back(self) -> None:
        if self.connection.in_transaction:  # SQLite ends it by itself on some errors
            self.connection.execute("ROLLBACK")
        self.database._clear_commit_callbacks()


def execute(sql: str, params: Any = ()) -> Any:
    """`db.execute_sql`, straight on the sqlite3 connection inside `read_on_loop()`: the snapshot
    is already open and patience already set, so peewee's cursor bookkeeping (a third of a
    primary-key read) has nothing to do there."""
    database = db.obj
    if type(database) is SerialisedSqliteDatabase:
        state = database._state
        if getattr(database._holding, "snapshot", False):
            return state.conn.execute(sql, params)
        if state.transactions:
            # Inside a transaction the connection is open and its patience already set by BEGIN's
            # cursor: only peewee's error types are still wanted from `execute_sql` (callers catch
            # its IntegrityError). Measured: ~12,000 instructions a statement, five a sent message.
            with _peewee_errors:
                return state.conn.execute(sql, params)
    return database.execute_sql(sql, params)


def _would_wait(error: BaseException) -> bool:
    return isinstance(error, (OperationalError, sqlite3.OperationalError)) and (
        "locked" in str(error) or "busy" in str(error)
    )


def ping() -> bool:
    """True when the database answers a trivial query."""
    try:
        with connection():
            db.execute_sql("SELECT 1").fetchone()
        return True
    except Exception:
        return False

