"""The shared inbox in the dashboard, driven as a browser without JavaScript would: search, the
Mine and Resolved views, Assign to me, Resolve, a note kept for the team, a saved reply picked in
the reply box; a new message opens a resolved conversation again; each row shows a preview and a
relative time."""

from __future__ import annotations

import re

import pytest

from tests.conftest import bearer
from tests.support.oauth_flow import hidden
from tests.support.sandbox import connect_account

pytestmark = pytest.mark.shared_service


def _dm(client, bot, contact, text, name):
    client.post("/sandbox/telegram/inbound-message", json={"accountId": bot["id"], "from": {
        "id": contact, "handle": name.split()[0].lower(), "name": name}, "text": text}).raise_for_status()


def _form(browser, page_text, path, **fields):
    return browser.post(path, data={"csrf_token": hidden(page_text, "csrf_token"), **fields})


def test_the_shared_inbox_journey(browser, client, tenant):
    bot = connect_account(client, tenant, "telegram")
    _dm(client, bot, "9001", "My parcel never arrived", "Lena Ortiz")
    _dm(client, bot, "9002", "Do you have gift cards?", "Omar Said")
    ws = tenant["workspaceId"]
    found = browser.get("/dashboard/inbox", params={"workspace": ws, "q": "parcel"})
    assert "Lena Ortiz" in found.text and "Omar Said" not in found.text
    assert "My parcel never arrived" in found.text and re.search(r"(just now|min ago)", found.text)
    conversation_id = re.search(r'id="conversation-(conv_[^"]+)"', found.text).group(1)  # type: ignore[union-attr]
    thread = browser.get(f"/dashboard/inbox/{conversation_id}", params={"workspace": ws})
    assigned = _form(browser, thread.text, f"/dashboard/inbox/{conversation_id}/share", workspaceId=ws,
                     action="assign_me")
    assert assigned.status_code == 303
    mine = browser.get("/dashboard/inbox", params={"workspace": ws, "show": "mine"}).text
    assert "Lena Ortiz" in mine and "Omar Said" not in mine
    noted = _form(browser, thread.text, f"/dashboard/inbox/{conversation_id}/notes", workspaceId=ws,
                  note="Courier says Thursday")
    assert noted.status_code == 303
    resolved = _form(browser, thread.text, f"/dashboard/inbox/{conversation_id}/share", workspaceId=ws,
                     action="resolve")
    assert resolved.status_code == 303
    page = browser.get(f"/dashboard/inbox/{conversation_id}", params={"workspace": ws}).text
    assert "Courier says Thursday" in page and "not sent to the contact" in page and "Status: resolved" in page
    assert "Lena Ortiz" in browser.get("/dashboard/inbox", params={"workspace": ws, "show": "resolved"}).text
    sent = client.get("/sandbox/telegram/sent", params={"accountId": bot["id"]}).json()["data"]
    assert all("Courier" not in (item.get("text") or "") for item in sent)
    _dm(client, bot, "9001", "Any news?", "Lena Ortiz")
    assert "Lena Ortiz" not in browser.get("/dashboard/inbox", params={"workspace": ws, "show": "resolved"}).text
    assert "Status: open" in browser.get(f"/dashboard/inbox/{conversation_id}", params={"workspace": ws}).text


def test_a_saved_reply_is_picked_in_the_reply_box(browser, client, tenant):
    bot = connect_account(client, tenant, "telegram")
    _dm(client, bot, "9101", "Hello", "Ada Byron")
    reply = client.post("/v1/saved-replies", headers=bearer(tenant["apiKey"]),
                        json={"name": "Welcome", "text": "Welcome, {{contact.name}}!"}).json()
    ws = tenant["workspaceId"]
    listing = browser.get("/dashboard/inbox", params={"workspace": ws}).text
    conversation_id = re.search(r'id="conversation-(conv_[^"]+)"', listing).group(1)  # type: ignore[union-attr]
    thread = browser.get(f"/dashboard/inbox/{conversation_id}", params={"workspace": ws})
    assert "Welcome" in thread.text
    key = re.search(r'name="idempotencyKey" value="([^"]+)"', thread.text).group(1)  # type: ignore[union-attr]
    sent = _form(browser, thread.text, f"/dashboard/inbox/{conversation_id}/reply", workspaceId=ws,
                 idempotencyKey=key, savedReplyId=reply["id"], text="")
    assert sent.status_code == 303
    received = client.get("/sandbox/telegram/sent", params={"accountId": bot["id"]}).json()["data"]
    assert [item["text"] for item in received] == ["Welcome, Ada Byron!"]
