"""SQLite's WAL is folded into the database by a thread of its own, not by the commit that crosses
SQLite's mark while it holds the process's writer lock (every other writer would wait for it)."""

from __future__ import annotations

from pathlib import Path

from storage.db import SerialisedSqliteDatabase, WalCheckpoints, open_database
from tests.support.webhook_receiver import wait_for

PAGE = 4096


def _pages_in_file(path: Path) -> int:
    return path.stat().st_size // PAGE


def _fill(database: SerialisedSqliteDatabase, pages: int) -> None:
    database.connect()
    database.execute_sql("CREATE TABLE filler (body BLOB)")
    with database.atomic():
        for _ in range(pages):
            database.execute_sql("INSERT INTO filler VALUES (randomblob(4000))")


def test_a_commit_leaves_the_wal_to_the_background_checkpoints(tmp_path):
    path = tmp_path / "service.db"
    database = open_database(f"sqlite:///{path}")
    assert isinstance(database, SerialisedSqliteDatabase)
    _fill(database, 1_500)  # past SQLite's own mark of 1,000 pages; the connection stays open (the
    assert _pages_in_file(path) < 10  # last one's close would fold the WAL in): the commit folded nothing

    checkpoints = WalCheckpoints(str(path), interval=0.05).start()
    try:
        wait_for(lambda: _pages_in_file(path) >= 1_500)
    finally:
        checkpoints.stop()
        database.close()
