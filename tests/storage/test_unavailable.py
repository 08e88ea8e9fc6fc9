"""Storage that cannot be reached or written is a 503 `unavailable` with `Retry-After` for the
caller, never a 500: a PostgreSQL server that refuses or drops the connection (a restart), a disk
that is full under SQLite. A fault of ours stays a fault (500)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from peewee import OperationalError, PostgresqlDatabase, SqliteDatabase

from kit.errors import Unavailable
from storage import requests
from tests.support.live_server import free_port


def _raising(error: BaseException) -> Unavailable | BaseException:
    def work(_on_loop: bool) -> None:
        raise error

    try:
        asyncio.run(requests.run(work, transaction="none", connect=False))
    except BaseException as raised:
        return raised
    raise AssertionError("the work did not raise")


def _refused_connection() -> OperationalError:
    database = PostgresqlDatabase("switchboard", host="127.0.0.1", port=free_port(), user="nobody",
                                  connect_timeout=2)
    with pytest.raises(OperationalError) as refused:
        database.connect()
    return refused.value


def _full_disk(path: Path) -> OperationalError:
    database = SqliteDatabase(str(path))
    database.execute_sql("CREATE TABLE t (v TEXT)")
    pages = database.execute_sql("PRAGMA page_count").fetchone()[0]
    database.execute_sql(f"PRAGMA max_page_count = {pages}")  # the file may not grow: as a full disk
    with pytest.raises(OperationalError) as full:
        database.execute_sql("INSERT INTO t VALUES (?)", ("x" * 100_000,))
    database.close()
    return full.value


def test_a_refused_postgresql_connection_is_a_503_with_retry_after():
    raised = _raising(_refused_connection())
    assert isinstance(raised, Unavailable)
    assert (raised.status, raised.code, raised.headers["Retry-After"]) == (503, "unavailable", "5")
    assert raised.message == "Storage cannot be reached right now. Try again shortly."


def test_a_full_disk_under_sqlite_is_a_503_that_says_nothing_was_saved(tmp_path):
    raised = _raising(_full_disk(tmp_path / "full.db"))
    assert isinstance(raised, Unavailable)
    assert raised.status == 503 and "Storage is full" in raised.message


def test_a_full_disk_found_by_the_commit_is_a_503_too(tmp_path):
    """SQLite rolls back by itself on a full disk; peewee's rollback after it fails with "no
    transaction is active", and that is the error raised: its cause is what counts."""
    database = SqliteDatabase(str(tmp_path / "full.db"), pragmas={"journal_mode": "wal"})
    database.execute_sql("CREATE TABLE t (v TEXT)")
    pages = database.execute_sql("PRAGMA page_count").fetchone()[0]
    database.execute_sql(f"PRAGMA max_page_count = {pages}")
    with pytest.raises(OperationalError) as failed, database.atomic():
        database.execute_sql("INSERT INTO t VALUES (?)", ("x" * 100_000,))
    raised = _raising(failed.value)
    assert isinstance(raised, Unavailable) and "Storage is full" in raised.message


def test_a_fault_of_ours_is_not_disguised_as_unavailable(tmp_path):
    database = SqliteDatabase(str(tmp_path / "x.db"))
    with pytest.raises(OperationalError) as missing:
        database.execute_sql("SELECT * FROM no_such_table")
    assert isinstance(_raising(missing.value), OperationalError)
