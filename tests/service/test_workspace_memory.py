"""Workspaces remembered per process under the workspace epoch, read by any of its threads with the
key epoch: whatever was read before a request came in, a change committed before then holds for it."""

from __future__ import annotations

import threading
import time

from service.identity.auth import authenticate_api_key
from service.identity.workspaces import list_workspaces
from storage.db import connection, db


def _rename_elsewhere(workspace_id: str, name: str) -> None:
    # As another process would: its own statement, committed, through no function of the service.
    with connection(), db.atomic():
        db.execute_sql(f"UPDATE workspace SET name = {db.param} WHERE id = {db.param}", (name, workspace_id))


def _name(actor, arrived: float) -> str:  # type: ignore[no-untyped-def]
    return list_workspaces(actor=actor, arrived=arrived).data[0].name


def test_a_workspace_read_before_a_rename_is_not_served_after_it(service, tenant):
    with connection():
        actor = authenticate_api_key(f"Bearer {tenant['apiKey']}", arrived=time.monotonic())
        before = _name(actor, time.monotonic())
        assert _name(actor, time.monotonic()) == before  # remembered
        _rename_elsewhere(tenant["workspaceId"], "Renamed")
        assert _name(actor, time.monotonic()) == "Renamed"


def test_an_epoch_read_on_another_thread_before_a_rename_does_not_serve_a_request_after_it(service, tenant):
    with connection():
        actor = authenticate_api_key(f"Bearer {tenant['apiKey']}", arrived=time.monotonic())
        _name(actor, time.monotonic())

    def read_now() -> None:
        with connection():
            _name(actor, time.monotonic())

    thread = threading.Thread(target=read_now)
    thread.start()
    thread.join()
    _rename_elsewhere(tenant["workspaceId"], "Renamed")
    arrived = time.monotonic()  # after the rename: the other thread's read shows nothing of it
    with connection():
        assert _name(actor, arrived) == "Renamed"


def test_a_request_that_arrived_before_an_epoch_read_is_served_by_it(service, tenant):
    with connection():
        actor = authenticate_api_key(f"Bearer {tenant['apiKey']}", arrived=time.monotonic())
        _name(actor, time.monotonic())
        _rename_elsewhere(tenant["workspaceId"], "Renamed")
        arrived = time.monotonic()
        assert _name(actor, time.monotonic()) == "Renamed"  # this read began after `arrived`
        assert _name(actor, arrived) == "Renamed"
