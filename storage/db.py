"""The one database handle: a proxy initialised from `SWITCHBOARD_DATABASE_URL` at start-up.

SQLite (embedded default) runs in WAL mode with `BEGIN IMMEDIATE` transactions: a read-then-write
transaction otherwise fails with "database is locked" under concurrency instead of waiting.
PostgreSQL (scale-out) uses a connection pool. Connections are per thread: open them in the
thread that does the work (`with db.connection_context():`), never on the event loop.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

from peewee import Database, DatabaseProxy, SqliteDatabase
from playhouse.pool import PooledPostgresqlDatabase

db = DatabaseProxy()

SQLITE_PRAGMAS = {
    "journal_mode": "wal",
    "busy_timeout": 10_000,
    "foreign_keys": 1,
    "synchronous": "normal",
    "cache_size": -32_000,
}


def open_database(url: str) -> Database:
    parts = urlsplit(url)
    if parts.scheme == "sqlite":
        path = parts.path[1:] if parts.path.startswith("//") else parts.path
        if not path or path == "/:memory:":
            raise ValueError("an in-memory database cannot be shared between threads; give a file path")
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        return SqliteDatabase(path, pragmas=SQLITE_PRAGMAS, lock_type="IMMEDIATE", check_same_thread=False)
    if parts.scheme in {"postgres", "postgresql", "postgresql+pool"}:
        options = dict(parse_qsl(parts.query))
        return PooledPostgresqlDatabase(
            (parts.path or "/").lstrip("/"),
            user=parts.username,
            password=parts.password,
            host=parts.hostname or "127.0.0.1",
            port=parts.port or 5432,
            max_connections=int(options.pop("max_connections", 48)),
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


@contextlib.contextmanager
def connection() -> Iterator[None]:
    """Make sure this thread has a connection for the block.

    SQLite connections are cheap to keep and costly to reopen (pragmas), so a worker thread keeps
    its own; PostgreSQL connections go back to the pool when the outermost block ends.
    """
    if isinstance(db.obj, SqliteDatabase):
        db.connect(reuse_if_open=True)
        yield
    else:
        with db.connection_context():
            yield


def ping() -> bool:
    """True when the database answers a trivial query."""
    try:
        with connection():
            db.execute_sql("SELECT 1").fetchone()
        return True
    except Exception:
        return False
