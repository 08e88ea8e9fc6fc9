"""The event loop's reads on SQLite: a snapshot that never waits, a write in it handed back rather
than waited for, the connection patient again for anything else; and prepared queries whose row
reader is kept from one run to the next."""

from __future__ import annotations

import datetime as dt
import sqlite3
import threading
import time

import pytest

from service.identity import workspaces
from service.identity.auth import authenticate_api_key
from storage.db import WriteNeeded, connection, db, read_on_loop
from storage.hot import Prepared
from storage.models import ApiKey, Profile, Workspace
from tests.conftest import PG_BASE

pytestmark = pytest.mark.skipif(bool(PG_BASE), reason="reads run on the event loop on SQLite only")


class _WriterHoldingTheLock:
    """Another connection to the same file holding the write lock until released."""

    def __init__(self, path: str) -> None:
        self.connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)

    def __enter__(self) -> _WriterHoldingTheLock:
        self.connection.execute("BEGIN IMMEDIATE")
        return self

    def release(self) -> None:
        if self.connection.in_transaction:
            self.connection.execute("COMMIT")

    def __exit__(self, *exc: object) -> None:
        self.release()
        self.connection.close()


def _database_path() -> str:
    return str(db.obj.database)


def test_a_read_on_the_loop_answers_while_another_process_writes(service, tenant):
    with _WriterHoldingTheLock(_database_path()):
        started = time.monotonic()
        with read_on_loop():
            name = Workspace.get_by_id(tenant["workspaceId"]).name
        assert time.monotonic() - started < 0.5
    assert name


def test_a_write_on_the_loop_that_would_wait_is_handed_back_unwritten(service, tenant):
    with _WriterHoldingTheLock(_database_path()):
        started = time.monotonic()
        with pytest.raises(WriteNeeded), read_on_loop(), db.atomic():
            Workspace.update(name="renamed").where(Workspace.id == tenant["workspaceId"]).execute()
        assert time.monotonic() - started < 0.5  # at once: the loop never waits on a writer
    with connection():
        assert Workspace.get_by_id(tenant["workspaceId"]).name != "renamed"


def test_after_a_read_on_the_loop_other_work_on_that_connection_waits_its_turn(service, tenant):
    with read_on_loop():
        Workspace.get_by_id(tenant["workspaceId"])
    with _WriterHoldingTheLock(_database_path()) as writer:
        threading.Timer(0.3, writer.release).start()
        # Not "database is locked": the busy timeout the snapshot set to zero is back.
        with connection(), db.atomic():
            Workspace.update(name="renamed").where(Workspace.id == tenant["workspaceId"]).execute()
    with connection():
        assert Workspace.get_by_id(tenant["workspaceId"]).name == "renamed"


def test_a_prepared_query_reads_its_rows_the_same_on_every_run(service, tenant):
    names = Prepared(
        lambda workspace: Profile.select(Profile.name, Profile.created_at)
        .where(Profile.workspace == workspace)
        .order_by(Profile.name)
        .dicts(),
        "workspace",
    )
    with connection():
        assert names(workspace="ws_none") == []  # an empty first answer sets nothing up
        workspaces.create_profile_row(workspace_id=tenant["workspaceId"], name="Zeta")
        first = names(workspace=tenant["workspaceId"])
        workspaces.create_profile_row(workspace_id=tenant["workspaceId"], name="Alpha")
        second = names(workspace=tenant["workspaceId"])
    assert first[-1]["name"] == "Zeta"
    assert second[0]["name"] == "Alpha"
    assert len(second) == len(first) + 1
    assert all(isinstance(row["created_at"], dt.datetime) for row in first + second)


def test_a_first_use_handed_back_from_the_loop_still_records_last_used_at(service, tenant):
    # Checking a key not used yet writes its `lastUsedAt` in the loop's snapshot; when the request
    # is then handed to a thread (here: the rate limit must lease tokens, a write), that snapshot
    # is rolled back, and the thread that checks the key again must not find it remembered as used.
    with pytest.raises(WriteNeeded), read_on_loop():
        authenticate_api_key(f"Bearer {tenant['apiKey']}")
        raise WriteNeeded()
    with connection():
        authenticate_api_key(f"Bearer {tenant['apiKey']}")
        assert ApiKey.get(ApiKey.workspace == tenant["workspaceId"]).last_used_at is not None
