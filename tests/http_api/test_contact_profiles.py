"""Contacts that Instagram and Facebook name only by a scoped id get their name from the platform's
User Profile API after their first message, read off the webhook's path, and again when they write
after a long silence. Over real HTTP to the sandbox."""

import pytest

from kit import clock
from storage.db import connection
from storage.models import ContactLookup, Conversation
from tests.conftest import bearer
from tests.support.sandbox import connect_account
from tests.support.webhook_receiver import wait_for

pytestmark = pytest.mark.shared_service


def _write(client, platform, account, sender, text):
    answer = client.post(f"/sandbox/{platform}/inbound-message",
                         json={"accountId": account["id"], "from": sender, "text": text})
    assert answer.status_code == 200, answer.text
    assert answer.json()["delivered"] is True


def _conversation(client, tenant, account):
    listed = client.get("/v1/conversations", headers=bearer(tenant["apiKey"]),
                        params={"accountId": account["id"]}).json()["data"]
    assert len(listed) == 1
    return listed[0]


def _named(client, tenant, account, name):
    return wait_for(lambda: (c := _conversation(client, tenant, account))["contactName"] == name and c, timeout=15)


@pytest.mark.parametrize(("platform", "handle"), [("instagram", "gia_g"), ("facebook", None)])
def test_a_new_contact_gets_their_name_after_the_first_message(client, tenant, platform, handle):
    account = connect_account(client, tenant, platform)
    _write(client, platform, account, {"id": "4100", "handle": "Gia_G", "name": "Gia Gold"}, "Hello!")
    conversation = _named(client, tenant, account, "Gia Gold")
    assert conversation["contactHandle"] == handle  # Instagram has usernames; Messenger shows none
    assert conversation["externalConversationId"] == "4100"
    assert conversation["unreadCount"] == 1


def test_the_name_is_read_again_only_after_a_long_silence(client, tenant):
    account = connect_account(client, tenant, "instagram")
    _write(client, "instagram", account, {"id": "4200", "handle": "hal", "name": "Hal Hope"}, "one")
    _named(client, tenant, account, "Hal Hope")

    # Renamed on the platform, writing again the next day: the name read last week still stands.
    clock.advance(24 * 3600)
    _write(client, "instagram", account, {"id": "4200", "handle": "hal", "name": "Hal Hopper"}, "two")
    messages = wait_for(lambda: len(m := client.get(
        f"/v1/conversations/{_conversation(client, tenant, account)['id']}/messages",
        headers=bearer(tenant["apiKey"])).json()["data"]) == 2 and m)
    assert [m["text"] for m in messages] == ["one", "two"]
    assert _conversation(client, tenant, account)["contactName"] == "Hal Hope"

    # After more than seven days of silence, the next message brings the new name.
    clock.advance(8 * 24 * 3600)
    _write(client, "instagram", account, {"id": "4200", "handle": "hal", "name": "Hal Hopper"}, "three")
    assert _named(client, tenant, account, "Hal Hopper")["contactHandle"] == "hal"


def test_a_refused_lookup_leaves_the_contact_as_it_was(client, tenant):
    account = connect_account(client, tenant, "facebook")
    faults = client.post("/sandbox/facebook/faults", json={"accountId": account["id"], "failNext": 1, "status": 400,
                                                           "path": "4300"})
    assert faults.status_code == 200
    _write(client, "facebook", account, {"id": "4300", "name": "Ivy Ink"}, "Hi")
    # The refused lookup spent the fault; the contact keeps its id only, and its messages still arrive.
    wait_for(lambda: _lookup_settled(account))
    conversation = _conversation(client, tenant, account)
    assert conversation["contactName"] is None
    assert conversation["externalConversationId"] == "4300"
    _write(client, "facebook", account, {"id": "4300", "name": "Ivy Ink"}, "Hello?")
    reply = client.post(f"/v1/conversations/{conversation['id']}/messages", headers=bearer(tenant["apiKey"]),
                        json={"text": "Hello Ivy"})
    assert reply.status_code == 201, reply.text
    assert _conversation(client, tenant, account)["contactName"] is None  # not tried again before a week


def _lookup_settled(account):
    """The contact's lookup ran and is back to idle, its time noted (so it waits for the next silence)."""
    with connection():
        rows = (ContactLookup.select(ContactLookup.status, Conversation.contact_profile_at)
                .join(Conversation).where(Conversation.account == account["id"]).dicts())
        return [(r["status"], r["contact_profile_at"] is not None) for r in rows] == [("idle", True)]
