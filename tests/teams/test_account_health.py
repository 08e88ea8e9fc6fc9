"""Account health: an account to reconnect (or whose token lapses within 7 days) is listed for the
dashboard's first page and mailed to the workspace's owners and admins once."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import replace

import pytest

from kit import clock, settings
from service.accounts import health
from service.identity.auth import Actor
from storage.db import connection, db
from storage.models import Account
from tests.support.factories import add_account
from tests.support.mailbox import Mailbox, mailbox
from tests.support.oauth_flow import email_of
from tests.teams.people import join

pytestmark = pytest.mark.shared_service


@pytest.fixture
def smtp() -> Iterator[Mailbox]:
    with mailbox() as box:
        before = settings.current()
        settings.configure(replace(before, smtp_url=box.url))
        try:
            yield box
        finally:
            settings.configure(before)


def test_accounts_to_reconnect_are_listed_and_mailed_once_to_owners_and_admins(client, tenant, smtp, monkeypatch):
    monkeypatch.setattr(health, "LOOK_EVERY_SECONDS", float("inf"))  # the service's own job waits: the test looks
    admin = join(client, tenant, "admin")
    member = join(client, tenant, "member")
    broken = add_account(tenant["workspaceId"], tenant["profileId"], platform="instagram", display_name="Shop IG")
    lapsing = add_account(tenant["workspaceId"], tenant["profileId"], platform="facebook", display_name="Shop FB")
    add_account(tenant["workspaceId"], tenant["profileId"], platform="telegram", display_name="Fine")
    with connection(), db.atomic():
        Account.update(needs_reauth=True).where(Account.id == broken).execute()
        Account.update(credentials_expire_at=clock.now() + dt.timedelta(days=3, hours=1)).where(
            Account.id == lapsing).execute()
    actor = Actor(workspace_id=tenant["workspaceId"], permission="read", profile_ids=None, credential_id="t")
    with connection():
        listed = health.needing_attention(actor=actor)
        assert [(item["name"], item["needsReauth"]) for item in listed] == [("Shop IG", True), ("Shop FB", False)]
        assert "within 3 days" in listed[1]["reason"]
        assert health.notify() >= 2
        assert health.notify() == 0  # once
    name = _workspace_name(tenant)
    expected = [f"Reconnect Shop FB (facebook) in {name}", f"Reconnect Shop IG (instagram) in {name}"]
    for person in (email_of(tenant["userId"]), admin["email"]):
        assert _reconnects(smtp, person) == expected
    assert _reconnects(smtp, member["email"]) == []


def _reconnects(smtp: Mailbox, address: str) -> list[str]:
    return sorted(m["Subject"] for m in smtp.to(address) if m["Subject"].startswith("Reconnect"))


def _workspace_name(tenant) -> str:
    from storage.models import Workspace

    with connection():
        return str(Workspace.get_by_id(tenant["workspaceId"]).name)
