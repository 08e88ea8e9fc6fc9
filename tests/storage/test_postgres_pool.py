"""The PostgreSQL pool hands out a connection given back moments ago without a round trip, and still
never hands out one the server has closed."""

from __future__ import annotations

import time
from collections.abc import Iterator

import psycopg2
import pytest

from storage import hot
from storage.db import PostgresPool, db, give_back, kept_connection, open_database
from storage.threads import BatchingThreads


@pytest.fixture
def pool(pg_database_url: str | None) -> Iterator[PostgresPool]:
    if pg_database_url is None:
        pytest.skip("the PostgreSQL pool exists on the scale-out setup only")
    opened = open_database(pg_database_url)
    assert isinstance(opened, PostgresPool)
    yield opened
    if not opened.is_closed():
        opened.close()
    opened.close_all()


@pytest.fixture
def admin(pg_database_url: str | None) -> Iterator[psycopg2.extensions.connection]:
    assert pg_database_url is not None
    connection = psycopg2.connect(pg_database_url)
    connection.autocommit = True
    yield connection
    connection.close()


def _last_statement(admin: psycopg2.extensions.connection, pid: int) -> str:
    with admin.cursor() as cursor:
        cursor.execute("SELECT query FROM pg_stat_activity WHERE pid = %s", (pid,))
        return str(cursor.fetchone()[0])


def _backend(pool: PostgresPool) -> int:
    return int(pool.execute_sql("SELECT pg_backend_pid()").fetchone()[0])


def _backend_without_query(pool: PostgresPool) -> int:
    # The driver knows its backend's pid without asking the server.
    return int(pool.connection().info.backend_pid)


def _terminate(admin: psycopg2.extensions.connection, pid: int) -> None:
    with admin.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", (pid,))
    _await_gone(admin, pid)


def _await_gone(admin: psycopg2.extensions.connection, pid: int) -> None:
    """Until the backend has exited (its farewell and the socket's end are then on their way)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with admin.cursor() as cursor:
            cursor.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (pid,))
            if cursor.fetchone() is None:
                return
        time.sleep(0.01)
    raise AssertionError(f"backend {pid} is still there")


def test_a_connection_given_back_moments_ago_is_handed_out_without_a_ping(pool, admin):
    pool.connect()
    pid = _backend(pool)
    pool.execute_sql("SELECT 'the last thing this connection ran'")
    pool.close()

    pool.connect()
    assert _backend_without_query(pool) == pid
    assert _last_statement(admin, pid) == "SELECT 'the last thing this connection ran'"
    pool.close()


def test_a_connection_idle_for_a_while_is_checked_and_a_dead_one_replaced(pool, admin):
    pool.PING_AFTER = 0.0  # every connection in the pool counts as idle for long
    pool.connect()
    pid = _backend(pool)
    pool.close()
    _terminate(admin, pid)

    pool.connect()
    assert _backend(pool) != pid  # the pool pinged, found it dead and opened another
    pool.close()


def test_a_connection_the_server_closed_a_moment_ago_is_not_handed_out(pool, admin):
    # A restart or an administrator's termination, seconds after the connection went back: the
    # server's farewell waits on the socket, so the pool checks the connection and replaces it.
    pool.connect()
    pid = _backend(pool)
    pool.close()
    _terminate(admin, pid)

    pool.connect()
    assert pool.execute_sql("SELECT 1").fetchone() == (1,)
    assert _backend(pool) != pid
    pool.close()


# -- a storage thread keeps its connection while jobs keep coming ------------------------------------


@pytest.fixture
def serving(pool: PostgresPool) -> Iterator[PostgresPool]:
    """`pool` as the service's database, as `storage.requests` sees it."""
    before = db.obj
    db.initialize(pool)
    try:
        yield pool
    finally:
        give_back()
        db.initialize(before)


def test_a_kept_connection_serves_the_next_job_and_goes_back_to_the_pool_when_given_back(serving):
    with kept_connection():
        pid = _backend(serving)
    with kept_connection():
        assert _backend(serving) == pid
    assert len(serving._in_use) == 1  # still this thread's, between its jobs
    give_back()
    assert serving._in_use == {}
    assert serving.is_closed()


def test_a_kept_connection_the_server_closed_is_replaced_before_the_next_job(serving, admin):
    with kept_connection():
        pid = _backend(serving)
    _terminate(admin, pid)
    with kept_connection():
        assert serving.execute_sql("SELECT 1").fetchone() == (1,)
        assert _backend(serving) != pid
    give_back()
    assert serving._in_use == {}


def test_a_kept_connection_goes_back_to_its_own_pool_once_the_service_opens_another_database(serving,
                                                                                          pg_database_url):
    with kept_connection():
        _backend(serving)
    other = open_database(pg_database_url)
    db.initialize(other)  # as `prepare` does again (a test, a restart of the app in process)
    try:
        other.connect()  # this thread is connected to the new database too
        with kept_connection():
            assert other.execute_sql("SELECT 1").fetchone() == (1,)
        assert serving._in_use == {}
        assert len(other._in_use) == 1
        give_back()
        assert other._in_use == {}
    finally:
        db.initialize(serving)
        other.close_all()


def test_a_storage_thread_with_no_job_waiting_gives_its_connection_back(serving):
    import asyncio

    threads = BatchingThreads(1, "test-storage", idle=give_back)

    def job() -> int:
        with kept_connection():
            return _backend(serving)

    async def two_jobs() -> tuple[int, int]:
        return await threads.run(job), await threads.run(job)

    first, second = asyncio.run(two_jobs())
    assert first == second
    deadline = time.monotonic() + 5
    while serving._in_use and time.monotonic() < deadline:  # the thread goes idle after its answer
        time.sleep(0.01)
    assert serving._in_use == {}


# -- statements the server prepares once per connection ------------------------------------------

QUERY = "SELECT ?::text || '-' || ?::text"


def _prepared_here(pool: PostgresPool) -> list[str]:
    return [row[0] for row in pool.execute_sql("SELECT statement FROM pg_prepared_statements").fetchall()]


def test_a_fixed_statement_is_prepared_once_per_connection_and_answers_as_the_plain_one(pool):
    pool.connect()
    first = pool.execute_prepared(QUERY, ("a", "b")).fetchall()
    second = pool.execute_prepared(QUERY, ("c", "d")).fetchall()
    assert (first, second) == ([("a-b",)], [("c-d",)])
    assert _prepared_here(pool) == ["PREPARE sb_" + _name_of(QUERY) + " AS SELECT $1::text || '-' || $2::text"]
    pool.close()


def test_a_new_connection_prepares_the_statement_again(pool, admin):
    pool.connect()
    pid = _backend(pool)
    pool.execute_prepared(QUERY, ("a", "b"))
    pool.close()
    _terminate(admin, pid)
    pool.PING_AFTER = 0.0  # the pool finds the dead connection and opens another

    pool.connect()
    assert _backend(pool) != pid
    assert pool.execute_prepared(QUERY, ("e", "f")).fetchall() == [("e-f",)]
    pool.close()


def test_prepared_statements_can_be_turned_off_for_a_pooler_in_transaction_mode(pg_database_url):
    if pg_database_url is None:
        pytest.skip("the PostgreSQL pool exists on the scale-out setup only")
    pool = open_database(pg_database_url + "?prepared_statements=off")
    assert isinstance(pool, PostgresPool)
    serving = db.obj
    db.initialize(pool)  # as the service runs with such a URL
    try:
        pool.connect()
        assert hot.run_fixed(QUERY, ("a", "b")).fetchall() == [("a-b",)]
        assert _prepared_here(pool) == []
        pool.close()
    finally:
        db.initialize(serving)
        pool.close_all()


@pytest.mark.parametrize("prepared", ["on", "off"])
def test_a_statement_may_commit_without_waiting_for_the_disk_and_the_next_one_waits_again(pg_database_url,
                                                                                          prepared):
    if pg_database_url is None:
        pytest.skip("the PostgreSQL pool exists on the scale-out setup only")
    pool = open_database(f"{pg_database_url}?prepared_statements={prepared}")
    serving = db.obj
    db.initialize(pool)
    setting = "SELECT current_setting('synchronous_commit')"
    try:
        pool.connect()
        assert hot.run_fixed(setting, (), wait_for_flush=False).fetchall() == [("off",)]
        assert hot.run_fixed(setting, ()).fetchall() == [("on",)]  # same connection, its own statement
        with db.atomic():  # in a transaction: the whole transaction's commit
            assert hot.run_fixed(setting, (), wait_for_flush=False).fetchall() == [("off",)]
            assert hot.run_fixed(setting, ()).fetchall() == [("off",)]
        assert hot.run_fixed(setting, ()).fetchall() == [("on",)]
        pool.close()
    finally:
        db.initialize(serving)
        pool.close_all()


def _name_of(template: str) -> str:
    import hashlib

    return hashlib.sha256(template.encode()).hexdigest()[:16]
