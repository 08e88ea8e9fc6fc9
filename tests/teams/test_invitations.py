"""Invitations: e-mailed through the operator's SMTP server (a real one here, aiosmtpd), single-use,
valid 7 days, revocable; accepted by a new person with a password or by an existing user."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from kit import clock
from kit.errors import Conflict
from service.identity import invitations
from storage.db import connection, db
from storage.models import Invitation
from tests.conftest import bearer
from tests.support.mailbox import Mailbox, mailbox
from tests.teams.people import invite

pytestmark = pytest.mark.shared_service


@pytest.fixture(scope="module")
def smtp() -> Iterator[Mailbox]:
    with mailbox() as box:
        yield box


@pytest.fixture(scope="module")
def live_overrides(smtp: Mailbox) -> dict[str, Any]:
    return {"smtp_url": smtp.url, "mail_from": "Switchboard <team@example.com>"}


def _token(made: dict) -> str:
    return made["url"].rsplit("/", 1)[1]


def test_an_invitation_is_mailed_with_its_link(client, tenant, smtp):
    made = invite(client, tenant, "member")
    assert made["emailed"] is True
    [message] = smtp.to(made["email"])
    assert message["From"] == "Switchboard <team@example.com>"
    assert "as member" in message.get_content() and made["url"] in message.get_content()


def test_a_link_works_once(client, tenant):
    made = invite(client, tenant, "viewer")
    with connection():
        invitations.accept_as_new_user(_token(made), password="first password")
        with pytest.raises(Conflict, match="used already"):
            invitations.accept_as_new_user(_token(made), password="second password")
    roles = {m["email"]: m["role"] for m in client.get("/v1/members", headers=bearer(tenant["apiKey"])).json()["data"]}
    assert roles[made["email"]] == "viewer"


def test_a_revoked_or_expired_link_lets_no_one_in(client, tenant):
    revoked = invite(client, tenant, "member")
    answer = client.delete(f"/v1/invitations/{revoked['id']}", headers=bearer(tenant["apiKey"]))
    assert answer.json()["status"] == "revoked"
    expired = invite(client, tenant, "member")
    with connection(), db.atomic():
        Invitation.update(expires_at=clock.now() - timedelta(seconds=1)).where(Invitation.id == expired["id"]).execute()
    with connection():
        with pytest.raises(Conflict, match="withdrawn"):
            invitations.accept_as_new_user(_token(revoked), password="a password")
        with pytest.raises(Conflict, match="expired"):
            invitations.accept_as_new_user(_token(expired), password="a password")
    emails = [m["email"] for m in client.get("/v1/members", headers=bearer(tenant["apiKey"])).json()["data"]]
    assert revoked["email"] not in emails and expired["email"] not in emails


def test_an_existing_user_joins_a_second_workspace_and_only_as_themselves(client, tenant, other_tenant):
    from tests.support.oauth_flow import email_of

    theirs = email_of(other_tenant["userId"])
    made = invite(client, tenant, "admin", email=theirs)
    stranger = invite(client, tenant, "admin")
    with connection(), db.atomic(), pytest.raises(Conflict, match="another e-mail"):
        invitations.accept(_token(stranger), user_id=other_tenant["userId"])
    with connection(), db.atomic():
        assert invitations.accept(_token(made), user_id=other_tenant["userId"]) == tenant["workspaceId"]
    roles = {m["userId"]: m["role"] for m in client.get("/v1/members", headers=bearer(tenant["apiKey"])).json()["data"]}
    assert roles[other_tenant["userId"]] == "admin"


def test_inviting_a_member_twice_is_a_conflict_and_a_bad_address_a_422(client, tenant):
    from tests.support.oauth_flow import email_of

    owner = client.post("/v1/invitations", json={"email": email_of(tenant["userId"]), "role": "member"},
                        headers=bearer(tenant["apiKey"]))
    assert owner.status_code == 409
    bad = client.post("/v1/invitations", json={"email": "not an address", "role": "member"},
                      headers=bearer(tenant["apiKey"]))
    assert bad.status_code == 422 and bad.json()["error"]["details"][0]["field"] == "email"
