"""Keys remembered per process, the key epoch read by any of its threads: whatever was read before a
request came in, a change committed before then holds for that request."""

from __future__ import annotations

import threading
import time

import pytest

from kit.errors import Unauthorized
from service.identity.auth import authenticate_api_key
from storage.db import connection, db
from storage.models import ApiKey


def _revoke_elsewhere(key_id: str) -> None:
    # As another process would: its own statement, committed, through no function of the service.
    with connection(), db.atomic():
        db.execute_sql(f"UPDATE api_key SET revoked_at = updated_at WHERE id = {db.param}", (key_id,))


def test_a_thread_that_read_the_epoch_before_a_revocation_refuses_the_key_after_it(service, tenant):
    bearer = f"Bearer {tenant['apiKey']}"
    with connection():
        actor = authenticate_api_key(bearer, arrived=time.monotonic())  # the key and the epoch, remembered
        assert authenticate_api_key(bearer, arrived=time.monotonic()).credential_id == actor.credential_id
        _revoke_elsewhere(actor.credential_id)
        with pytest.raises(Unauthorized, match="revoked"):
            authenticate_api_key(bearer, arrived=time.monotonic())
        assert ApiKey.get_by_id(actor.credential_id).revoked_at is not None


def _on_another_thread(work) -> None:  # type: ignore[no-untyped-def]
    def run() -> None:
        with connection():
            work()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()


def test_an_epoch_read_on_another_thread_before_a_request_came_in_does_not_serve_it(service, tenant):
    bearer = f"Bearer {tenant['apiKey']}"
    with connection():
        actor = authenticate_api_key(bearer, arrived=time.monotonic())
    _on_another_thread(lambda: authenticate_api_key(bearer, arrived=time.monotonic()))  # reads it now
    _revoke_elsewhere(actor.credential_id)
    arrived = time.monotonic()  # after the revocation: the read above shows nothing of it
    with connection(), pytest.raises(Unauthorized, match="revoked"):
        authenticate_api_key(bearer, arrived=arrived)


def test_an_epoch_read_on_another_thread_after_a_revocation_serves_the_requests_that_waited(service, tenant):
    bearer = f"Bearer {tenant['apiKey']}"
    with connection():
        actor = authenticate_api_key(bearer, arrived=time.monotonic())
    _revoke_elsewhere(actor.credential_id)
    arrived = time.monotonic()
    refused: list[Exception] = []

    def read_after_arrival() -> None:
        try:
            authenticate_api_key(bearer, arrived=time.monotonic())
        except Unauthorized as error:
            refused.append(error)

    _on_another_thread(read_after_arrival)
    assert len(refused) == 1
    # The other thread's read, begun after this request arrived, showed the revocation: it holds here.
    with connection(), pytest.raises(Unauthorized, match="revoked"):
        authenticate_api_key(bearer, arrived=arrived)
