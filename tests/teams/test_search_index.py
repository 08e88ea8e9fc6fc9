"""The inbox search's index follows the conversations: a new message is found at once, an edited one
by its new words only, one the contact deleted no more, a renamed contact by the new name; the words
of a search may be anywhere in a conversation; and a search stays inside the workspace and a member's
profiles, with its pages in the list's order however many it finds."""

from __future__ import annotations

import json

import pytest

from platforms.graph.inbound import meta_signature
from service.accounts import adapters
from storage import hot_inbox
from storage.db import connection, db, is_postgres
from storage.migrations import m0032_conversation_search, m0038_search_appended
from tests.conftest import bearer
from tests.support.factories import add_account, add_profile
from tests.support.oauth_flow import call_tool_raw
from tests.support.sandbox import connect_account
from tests.teams.people import join, mcp_token

pytestmark = pytest.mark.shared_service


def _dm(client, account, contact_id, text, **sender):
    answer = client.post("/sandbox/telegram/inbound-message",
                         json={"accountId": account["id"], "from": {"id": contact_id, **sender}, "text": text})
    assert answer.status_code == 200, answer.text


def _found(client, tenant, q, **params) -> list[str]:
    answer = client.get("/v1/conversations", headers=bearer(tenant["apiKey"]), params={"q": q, **params})
    assert answer.status_code == 200, answer.text
    return [c["contactName"] for c in answer.json()["data"]]


def _whatsapp(client, account, message: dict) -> None:
    """A WhatsApp delivery to the account, signed as Meta signs it."""
    body = {"object": "whatsapp_business_account", "entry": [{"id": "waba", "changes": [{"field": "messages", "value": {
        "messaging_product": "whatsapp", "metadata": {"phone_number_id": account["platformAccountId"]},
        "contacts": [{"profile": {"name": "Ines Moreau"}, "wa_id": "33612345678"}],
        "messages": [{"from": "33612345678", "timestamp": "1700000000", **message}]}}]}]}
    raw = json.dumps(body).encode()
    answer = client.post("/hooks/whatsapp", content=raw, headers={
        "Content-Type": "application/json",
        "X-Hub-Signature-256": meta_signature(adapters.config().meta_app_secret, raw)})
    assert answer.status_code == 200, answer.text


def test_the_last_word_is_read_as_begun_from_its_second_character(client, tenant):
    bot = connect_account(client, tenant, "telegram")
    _dm(client, bot, "7111", "Question 3 about my order", name="Ana Lima")
    _dm(client, bot, "7112", "Question 31 about a refund", name="Bea Costa")
    assert sorted(_found(client, tenant, "question 31")) == ["Bea Costa"]
    assert sorted(_found(client, tenant, "question 3")) == ["Ana Lima"]  # one character: the word 3
    assert sorted(_found(client, tenant, "question ab")) == ["Ana Lima", "Bea Costa"]
    assert sorted(_found(client, tenant, "3 ab")) == ["Ana Lima"]
    assert sorted(_found(client, tenant, "about refu")) == ["Bea Costa"]
    assert sorted(_found(client, tenant, "qu")) == ["Ana Lima", "Bea Costa"]
    assert _found(client, tenant, "q") == []


def test_a_new_message_is_found_at_once(client, tenant):
    bot = connect_account(client, tenant, "telegram")
    _dm(client, bot, "7101", "Hello there", name="Zoë Kowalski")
    assert _found(client, tenant, "tracking") == []
    _dm(client, bot, "7101", "My tracking number is 88213", name="Zoë Kowalski")
    assert _found(client, tenant, "tracking") == ["Zoë Kowalski"]
    assert _found(client, tenant, "88213") == ["Zoë Kowalski"]
    assert _found(client, tenant, "hello") == ["Zoë Kowalski"]  # the first message still counts


def test_an_edited_message_is_found_by_its_new_words_only(client, tenant):
    account = connect_account(client, tenant, "whatsapp")
    _whatsapp(client, account, {"id": "wamid.first", "type": "text", "text": {"body": "Please send the blue scarf"}})
    assert _found(client, tenant, "blue") == ["Ines Moreau"]
    _whatsapp(client, account, {"id": "wamid.edit", "type": "edit", "edit": {
        "original_message_id": "wamid.first", "message": {"type": "text", "text": {"body": "Please send the red scarf"}}}})
    assert _found(client, tenant, "blue") == []
    assert _found(client, tenant, "red scarf") == ["Ines Moreau"]


def test_a_message_the_contact_deleted_is_found_no_more(client, tenant):
    account = connect_account(client, tenant, "whatsapp")
    _whatsapp(client, account, {"id": "wamid.kept", "type": "text", "text": {"body": "Is the shop open on Sunday?"}})
    _whatsapp(client, account, {"id": "wamid.gone", "type": "text", "text": {"body": "My card ends in 4417"}})
    assert _found(client, tenant, "4417") == ["Ines Moreau"]
    _whatsapp(client, account, {"id": "wamid.revoke", "type": "revoke",
                                "revoke": {"original_message_id": "wamid.gone"}})
    assert _found(client, tenant, "4417") == []
    assert _found(client, tenant, "sunday") == ["Ines Moreau"]


def test_a_renamed_contact_is_found_by_the_new_name(client, tenant):
    bot = connect_account(client, tenant, "telegram")
    _dm(client, bot, "7102", "About my parcel", name="Ana Beatriz")
    _dm(client, bot, "7102", "Any news?", name="Ana Souza")
    assert _found(client, tenant, "beatriz") == []
    assert _found(client, tenant, "souza") == ["Ana Souza"]
    assert _found(client, tenant, "souza parcel") == ["Ana Souza"]


def test_the_words_of_a_search_may_be_anywhere_in_the_conversation(client, tenant):
    bot = connect_account(client, tenant, "telegram")
    _dm(client, bot, "7103", "Where is my parcel?", name="Zoë Kowalski")
    _dm(client, bot, "7103", "It was sent to Lisbon", name="Zoë Kowalski")
    _dm(client, bot, "7104", "My parcel arrived, thanks", name="Ana Beatriz")
    assert _found(client, tenant, "parcel lisbon") == ["Zoë Kowalski"]  # two messages
    assert _found(client, tenant, "zoe parcel") == ["Zoë Kowalski"]  # the name and a message
    assert _found(client, tenant, "parcel") == ["Ana Beatriz", "Zoë Kowalski"]  # newest first
    assert _found(client, tenant, "parcel madrid") == []


def test_a_search_stays_inside_the_workspace_and_a_members_profiles(client, live, tenant, other_tenant):
    bot = connect_account(client, tenant, "telegram")
    _dm(client, bot, "7105", "Refund for order 3310", name="Zoë Kowalski")
    elsewhere = connect_account(client, other_tenant, "telegram")
    _dm(client, elsewhere, "7106", "Refund for order 3310", name="Omar Haddad")
    assert _found(client, tenant, "refund") == ["Zoë Kowalski"]
    assert _found(client, other_tenant, "refund") == ["Omar Haddad"]
    second = add_profile(tenant["workspaceId"])
    add_account(tenant["workspaceId"], second)
    limited = join(client, tenant, "member", profileIds=[second])
    token = mcp_token(live.url, limited, tenant["workspaceId"])
    answer = call_tool_raw(client, token, "list_conversations", {"q": "refund"})
    assert answer.status_code == 200, answer.text
    assert answer.json()["result"]["structuredContent"]["data"] == []
    assert answer.json()["result"]["structuredContent"]["pagination"]["total"] == 0


@pytest.mark.parametrize(("sort_up_to", "dense_from"), [(1000, 100), (2, 100), (1000, 2)],
                         ids=["few-hits-sorted", "many-hits-walked", "dense-hits-walked"])
def test_a_search_pages_in_the_lists_order(client, tenant, monkeypatch, sort_up_to, dense_from):
    monkeypatch.setattr(hot_inbox, "SORT_UP_TO", sort_up_to)
    monkeypatch.setattr(hot_inbox, "_DENSE_FROM", dense_from)
    bot = connect_account(client, tenant, "telegram")
    for n in range(5):
        _dm(client, bot, f"72{n:02d}", f"Question {n} about the warranty", name=f"Contact {n}")
    _dm(client, bot, "7299", "Unrelated", name="Someone Else")
    auth = bearer(tenant["apiKey"])
    listed = [c["id"] for c in client.get("/v1/conversations", headers=auth).json()["data"]]
    pages = [client.get("/v1/conversations", headers=auth, params={"q": "warranty", "limit": 2, "page": page}).json()
             for page in (1, 2, 3, 4)]
    assert [page["pagination"]["total"] for page in pages] == [5, 5, 5, 5]
    assert [c["id"] for page in pages for c in page["data"]] == [c for c in listed if c != listed[0]]
    assert pages[3]["data"] == []


def test_a_conversation_keeps_its_words_however_many_messages_added_them(client, tenant):
    """The platform's name and an id's pieces in a message are words like any other: the
    conversation stays found by its platform, and by its older messages' words after newer ones."""
    bot = connect_account(client, tenant, "telegram")
    _dm(client, bot, "7501", "Found you on Telegram, order_7788", name="Ines Moreau")
    _dm(client, bot, "7501", "Any news about the scarf?", name="Ines Moreau")
    _dm(client, bot, "7501", f"Still here {tenant['workspaceId']}", name="Ines Moreau")
    for q in ("telegram", "order 7788", "scarf", "ines scarf 7788"):
        assert _found(client, tenant, q, platform="TELEGRAM") == ["Ines Moreau"]
        assert _found(client, tenant, q, accountId=bot["id"]) == ["Ines Moreau"]
    assert _found(client, tenant, "order_7788") == ["Ines Moreau"]
    assert _found(client, tenant, "scarf", platform="INSTAGRAM") == []


def _without_the_index() -> None:
    """The database as it was before the index: no table, no triggers."""
    if is_postgres():
        for table, trigger in (("conversation", "conversation_search_started"),
                               ("conversation", "conversation_search_renamed"),
                               ("message", "conversation_search_messages_added"),
                               ("message", "conversation_search_messages_removed"),
                               ("message", "conversation_search_message_changed")):
            db.execute_sql(f"DROP TRIGGER {trigger} ON {table}")
    else:
        for trigger in ("started", "ended", "renamed", "message_added", "message_removed", "message_changed"):
            db.execute_sql(f"DROP TRIGGER conversation_search_{trigger}")
    db.execute_sql("DROP TABLE conversation_search")


def test_the_upgrade_indexes_the_conversations_already_there(client, tenant):
    bot = connect_account(client, tenant, "telegram")
    _dm(client, bot, "7301", "Invoice 5530 please", name="Lea Martin")
    with connection(), db.atomic():
        _without_the_index()
        m0032_conversation_search.apply(db.obj)
        m0038_search_appended.apply(db.obj)
    assert _found(client, tenant, "invoice") == ["Lea Martin"]
    assert _found(client, tenant, "lea") == ["Lea Martin"]
    _dm(client, bot, "7301", "And the receipt", name="Lea Martin")
    assert _found(client, tenant, "receipt 5530") == ["Lea Martin"]


@pytest.mark.parametrize("q", ['"', 'scope : "ws"', "parcel* OR NOT -x", "NEAR(parcel lisbon)", "𞤀𞤁 parcel",
                               "x" * 200, "ǅ", "parcel\u0301"])
def test_any_text_is_a_search(client, tenant, q):
    bot = connect_account(client, tenant, "telegram")
    _dm(client, bot, "7401", "Where is my parcel?", name="Zoë Kowalski")
    answer = client.get("/v1/conversations", headers=bearer(tenant["apiKey"]), params={"q": q})
    assert answer.status_code == 200, answer.text
    assert answer.json()["pagination"]["total"] == len(answer.json()["data"])
