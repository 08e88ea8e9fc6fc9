"""An assistant that asks before it reaches people: with a client that declares elicitation, a tool that
messages or publishes to people first asks the person, in plain words from the service's data; a
"no" leaves everything as it was and the tool says so. A client without elicitation is not asked,
nor is anyone in a workspace that turned the setting off."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from mcp_types import ElicitResult

from tests.conftest import bearer
from tests.support.oauth_flow import mcp_client, structured
from tests.support.sandbox import connect_account
from tests.support.webhook_receiver import wait_for

pytestmark = pytest.mark.shared_service


class Person:
    """The person behind the client: answers each question with `action`, and remembers it."""

    def __init__(self, action: str) -> None:
        self.action = action
        self.asked: list[str] = []

    async def __call__(self, context: Any, params: Any) -> ElicitResult:
        self.asked.append(params.message)
        return ElicitResult(action=self.action)  # type: ignore[arg-type]


def _inbound(client, account_id: str, number: int) -> None:
    answer = client.post("/sandbox/telegram/inbound-message", json={
        "accountId": account_id, "from": {"id": str(900 + number), "handle": f"fan{number}", "name": f"Fan {number}"},
        "text": "hi"})
    assert answer.status_code in (200, 201, 202), answer.text


def _sent(client, account_id: str) -> list[dict[str, Any]]:
    return client.get("/sandbox/telegram/sent", params={"accountId": account_id}).json()["data"]


def _contact_wrote(client, tenant, number: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """A Telegram account and the conversation its contact number `number` started."""
    bot = connect_account(client, tenant, "telegram")
    _inbound(client, bot["id"], number)
    conversations = wait_for(lambda: client.get("/v1/conversations", headers=bearer(tenant["apiKey"])).json()["data"])
    return bot, conversations[0]


def _call(server_url: str, key: str, tool: str, arguments: dict[str, Any], person: Person | None) -> Any:
    async def scenario() -> Any:
        options = {"elicitation_callback": person} if person is not None else {}
        async with mcp_client(server_url, options=options, Authorization=f"Bearer {key}") as session:
            return await session.call_tool(tool, arguments)

    return asyncio.run(scenario())


@pytest.fixture
def audience(client, tenant):
    bot = connect_account(client, tenant, "telegram")
    for number in range(3):
        _inbound(client, bot["id"], number)
    wait_for(lambda: client.get("/v1/conversations", headers=bearer(tenant["apiKey"])).json()["pagination"]["total"]
                == 3)
    made = client.post("/v1/broadcasts", headers=bearer(tenant["apiKey"]),
                       json={"accountId": bot["id"], "name": "Spring sale", "text": "20% off this weekend"})
    assert made.status_code == 201, made.text
    return bot, made.json()


def test_a_declined_broadcast_is_not_sent_and_the_tool_says_so(server_url, client, tenant, audience):
    bot, broadcast = audience
    person = Person("decline")
    result = _call(server_url, tenant["apiKey"], "send_broadcast_now", {"broadcastId": broadcast["id"]}, person)
    assert person.asked == ["Send 'Spring sale' to 3 Telegram contacts now? It cannot be unsent."]
    assert result.is_error is True
    assert structured(result)["error"]["code"] == "declined"
    assert "declined" in structured(result)["error"]["message"]
    after = client.get(f"/v1/broadcasts/{broadcast['id']}", headers=bearer(tenant["apiKey"])).json()
    assert after["status"] == "draft"
    assert _sent(client, bot["id"]) == []


def test_an_accepted_broadcast_is_sent(server_url, client, tenant, audience):
    bot, broadcast = audience
    person = Person("accept")
    result = _call(server_url, tenant["apiKey"], "send_broadcast_now", {"broadcastId": broadcast["id"]}, person)
    assert len(person.asked) == 1
    assert result.is_error is False, result
    assert structured(result)["id"] == broadcast["id"]
    wait_for(lambda: len(_sent(client, bot["id"])) == 3, timeout=20)


def test_a_direct_message_names_the_contact_and_a_dismissed_question_sends_nothing(server_url, client, tenant):
    bot, conversation = _contact_wrote(client, tenant, 7)
    person = Person("cancel")
    result = _call(server_url, tenant["apiKey"], "send_message",
                   {"conversationId": conversation["id"], "text": "See you on Friday"}, person)
    assert person.asked == ["Send 'See you on Friday' to Fan 7 on Telegram now? It cannot be unsent."]
    assert structured(result)["error"]["code"] == "declined"
    assert _sent(client, bot["id"]) == []


def test_a_client_without_elicitation_is_not_asked(server_url, client, tenant):
    bot, conversation = _contact_wrote(client, tenant, 1)
    result = _call(server_url, tenant["apiKey"], "send_message",
                   {"conversationId": conversation["id"], "text": "Thanks!"}, None)
    assert result.is_error is False, result
    assert [m["text"] for m in _sent(client, bot["id"])] == ["Thanks!"]


def test_the_workspace_setting_turns_the_question_off(server_url, client, tenant):
    settings = f"/v1/workspaces/{tenant['workspaceId']}/settings"
    assert client.get(settings, headers=bearer(tenant["apiKey"])).json() == {"confirmBeforeReachingPeople": True, "postApproval": False}
    turned = client.patch(settings, headers=bearer(tenant["apiKey"]), json={"confirmBeforeReachingPeople": False})
    assert turned.status_code == 200, turned.text
    assert turned.json() == {"confirmBeforeReachingPeople": False, "postApproval": False}
    bot, conversation = _contact_wrote(client, tenant, 2)
    person = Person("decline")
    result = _call(server_url, tenant["apiKey"], "send_message",
                   {"conversationId": conversation["id"], "text": "No questions asked"}, person)
    assert person.asked == []
    assert result.is_error is False, result
    assert [m["text"] for m in _sent(client, bot["id"])] == ["No questions asked"]


def test_a_read_key_cannot_turn_the_setting_off(client, tenant):
    key = client.post("/v1/api-keys", headers=bearer(tenant["apiKey"]),
                      json={"name": "reader", "permission": "read"}).json()["key"]
    refused = client.patch(f"/v1/workspaces/{tenant['workspaceId']}/settings", headers=bearer(key),
                           json={"confirmBeforeReachingPeople": False})
    assert refused.status_code == 403


def test_a_post_published_now_to_several_accounts_is_asked_for_and_a_draft_is_not(server_url, client, tenant):
    first = connect_account(client, tenant, "telegram")
    second = connect_account(client, tenant, "linkedin")
    person = Person("decline")
    targets = [{"accountId": first["id"], "options": {"chatId": "@springnews"}}, {"accountId": second["id"]}]
    refused = _call(server_url, tenant["apiKey"], "create_post",
                    {"content": "Our spring collection is here", "targets": targets, "publishNow": True}, person)
    assert structured(refused)["error"]["code"] == "declined"
    assert len(person.asked) == 1
    assert person.asked[0].startswith("Publish 'Our spring collection is here' now to 2 accounts (Telegram")
    assert client.get("/v1/posts", headers=bearer(tenant["apiKey"])).json()["data"] == []

    draft = _call(server_url, tenant["apiKey"], "create_post",
                  {"content": "Later, maybe", "targets": targets}, person)
    assert draft.is_error is False, draft
    assert len(person.asked) == 1  # a draft reaches nobody: not asked
