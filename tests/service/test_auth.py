"""Keys remembered per process and per thread: whatever a thread read before a request came in, a
change committed before then holds for that request."""

from __future__ import annotations

import time

import pytest

from service.identity.auth import authenticate_api_key
from service.kit.errors import Unauthorized
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
