"""`switchboard secrets rotate`: with a new key put first in SWITCHBOARD_SECRET_KEY, every stored
secret is encrypted again with it while the service keeps writing, and nothing becomes unreadable
once the old key is gone."""

from __future__ import annotations

import subprocess
import uuid
from dataclasses import replace

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from kit import clock, crypto, settings
from kit.session_cookies import SessionMiddleware
from service.common import idempotency
from service.common.key_rotation import SEALED
from service.identity import bootstrap
from service.webhooks.signing import new_secret, seal
from storage.db import connection, db
from storage.models import IdempotencyRecord, WebhookEndpoint
from tests.operations.load import Writer
from tests.support.processes import service_env, switchboard


def _sealed_values() -> list[tuple[str, bytes]]:
    with connection():
        found = []
        for model, column in SEALED:
            field = model._meta.fields[column]
            for (value,) in model.select(field).where(field.is_null(False)).tuples():
                raw = value.encode("ascii") if isinstance(value, str) else bytes(value)
                found.append((f"{model._meta.table_name}.{column}", raw))
        return found


def _unreadable(values: list[tuple[str, bytes]]) -> list[str]:
    out = []
    for where, raw in values:
        try:
            crypto.decrypt_json(raw)
        except ValueError:
            out.append(where)
    return out


def test_rotation_under_writes_leaves_nothing_only_the_old_key_opens(service):
    old_key, new_key = service.secret_key, "new-secret-key-" + uuid.uuid4().hex
    with connection():
        tenant = bootstrap.bootstrap(email="owner@example.com", password="long enough password")
    with connection(), db.atomic():
        for n in range(3):
            WebhookEndpoint.create(id=f"wh_rot{n}", workspace=tenant["workspaceId"], url="https://example.com/h",
                                   secret=seal(new_secret()), previous_secrets=seal([{"secret": new_secret(),
                                                                                     "expiresAt": "2999-01-01"}]))
            IdempotencyRecord.create(key_id="key_rot", idempotency_key=f"k{n}", request_hash="0" * 64, status=201,
                                     body=idempotency._seal({"secret": "shown-once"}), created_at=clock.now())
    with Writer(tenant["workspaceId"], tenant["profileId"]) as writer:
        writer.wait_turns(5)  # accounts with credentials under the old key

        # Every process restarted with the new key first; the old one still reads.
        both = replace(service, secret_key=new_key, secret_keys=(new_key, old_key))
        settings.configure(both)
        writer.wait_turns(2)
        rotated = subprocess.run(switchboard("secrets", "rotate"), capture_output=True, text=True, timeout=120,
                                 env=service_env(service, SWITCHBOARD_SECRET_KEY=f"{new_key},{old_key}"))
        writer.wait_turns(2)  # the service went on writing during and after
    assert rotated.returncode == 0, rotated.stderr
    assert "Rewritten:" in rotated.stdout
    assert old_key not in rotated.stdout + rotated.stderr and new_key not in rotated.stdout + rotated.stderr

    values = _sealed_values()
    kinds = {where for where, _ in values}
    assert {"account.credentials", "webhook_endpoint.secret", "webhook_endpoint.previous_secrets",
            "idempotency_record.body"} <= kinds
    # The old key dropped: everything still opens.
    settings.configure(replace(service, secret_key=new_key, secret_keys=(new_key,)))
    assert _unreadable(values) == []
    with connection():
        assert idempotency._unseal(IdempotencyRecord.get(IdempotencyRecord.idempotency_key == "k0").body) == {
            "secret": "shown-once"}
    # And with the old key alone, nothing does: it was all rewritten.
    settings.configure(replace(service, secret_key=old_key, secret_keys=(old_key,)))
    assert len(_unreadable(values)) == len(values)
    settings.configure(service)


def test_rotation_names_what_no_key_opens(service):
    with connection():
        tenant = bootstrap.bootstrap(email="owner@example.com", password="long enough password")
    with Writer(tenant["workspaceId"], tenant["profileId"]) as writer:
        writer.wait_turns(1)
    unrelated = "some-other-key-" + uuid.uuid4().hex
    rotated = subprocess.run(switchboard("secrets", "rotate"), capture_output=True, text=True, timeout=120,
                             env=service_env(service, SWITCHBOARD_SECRET_KEY=unrelated))
    assert rotated.returncode == 1
    assert "no key opens" in rotated.stderr
    assert "account.credentials" in rotated.stderr
    settings.configure(service)
    assert _unreadable(_sealed_values()) == []  # left as they were


@pytest.mark.parametrize("signed_with", ["old", "new"])
def test_a_session_signed_with_either_key_stays_signed_in(signed_with):
    old_key, new_key = "old-" + uuid.uuid4().hex, "new-" + uuid.uuid4().hex

    async def sign_in(request: Request) -> JSONResponse:
        request.session["user"] = "usr_1"
        return JSONResponse({})

    async def who(request: Request) -> JSONResponse:
        return JSONResponse({"user": request.session.get("user")})

    def app(keys: tuple[str, ...]) -> Starlette:
        built = Starlette(routes=[Route("/in", sign_in), Route("/who", who)])
        built.add_middleware(SessionMiddleware, secret_keys=keys, session_cookie="s")
        return built

    keys_then = (old_key,) if signed_with == "old" else (new_key, old_key)
    with TestClient(app(keys_then)) as before:
        before.get("/in")
        cookie = before.cookies["s"]
    with TestClient(app((new_key, old_key)), cookies={"s": cookie}) as after:
        assert after.get("/who").json() == {"user": "usr_1"}
    with TestClient(app(("unrelated-key",)), cookies={"s": cookie}) as elsewhere:
        assert elsewhere.get("/who").json() == {"user": None}
