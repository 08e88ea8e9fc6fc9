"""Resources and prompts with the official Python client: the inbox and a conversation's transcript as
resources (templates listed), a subscription to the inbox told when a message arrives (and not when
one arrives in another workspace), and the prompts people pick from a menu."""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
import pytest

from tests.conftest import bearer
from tests.support.oauth_flow import mcp_client
from tests.support.sandbox import connect_account
from tests.support.webhook_receiver import wait_for

pytestmark = pytest.mark.shared_service


def _inbound(client, account_id: str, text: str, who: str = "ana") -> None:
    # Telegram's chat and user ids are integers (the Bot API's types, which the platform check reads).
    user_id = str(sum(ord(letter) for letter in who) + 10_000)
    answer = client.post("/sandbox/telegram/inbound-message", json={
        "accountId": account_id, "from": {"id": user_id, "handle": who, "name": who.title()}, "text": text})
    assert answer.status_code in (200, 201, 202), answer.text


def _conversations(client, tenant) -> list[dict[str, Any]]:
    return client.get("/v1/conversations", headers=bearer(tenant["apiKey"])).json()["data"]


def _text(result: Any) -> str:
    return "".join(getattr(content, "text", "") for content in result.contents)


def test_a_conversation_reads_as_its_transcript(server_url, client, tenant, other_tenant):
    bot = connect_account(client, tenant, "telegram")
    _inbound(client, bot["id"], "Is the blue one in stock?")
    conversation = wait_for(lambda: _conversations(client, tenant))[0]
    sent = client.post(f"/v1/conversations/{conversation['id']}/messages", headers=bearer(tenant["apiKey"]),
                       json={"text": "Yes, in every size."})
    assert sent.status_code == 201, sent.text
    theirs = connect_account(client, other_tenant, "telegram")
    _inbound(client, theirs["id"], "secret of theirs", who="zed")
    foreign = wait_for(lambda: _conversations(client, other_tenant))[0]

    async def scenario() -> None:
        async with mcp_client(server_url, Authorization=f"Bearer {tenant['apiKey']}") as session:
            templates = {t.uri_template for t in (await session.list_resource_templates()).resource_templates}
            assert templates == {"switchboard://conversations/{conversation_id}", "switchboard://posts/{post_id}"}
            assert "switchboard://inbox" in {str(r.uri) for r in (await session.list_resources()).resources}

            transcript = _text(await session.read_resource(f"switchboard://conversations/{conversation['id']}"))
            assert "with Ana (@ana) on Telegram" in transcript
            lines = transcript.splitlines()
            assert lines[-2].endswith("] Ana: Is the blue one in stock?")
            assert lines[-1].endswith("] You: Yes, in every size.")

            inbox = _text(await session.read_resource("switchboard://inbox"))
            assert f"switchboard://conversations/{conversation['id']}" in inbox
            assert foreign["id"] not in inbox

            with pytest.raises(Exception) as refused:
                await session.read_resource(f"switchboard://conversations/{foreign['id']}")
            assert "secret of theirs" not in str(refused.value)
            assert "No conversation with that id" in str(refused.value)

    asyncio.run(scenario())


def test_a_subscription_to_the_inbox_is_told_when_a_message_arrives(server_url, client, tenant, other_tenant):
    bot = connect_account(client, tenant, "telegram")
    theirs = connect_account(client, other_tenant, "telegram")

    async def scenario() -> None:
        async with mcp_client(server_url, Authorization=f"Bearer {tenant['apiKey']}") as session:
            async with session.listen(resource_subscriptions=["switchboard://inbox"]) as subscription:
                assert subscription.honored.resource_subscriptions == ["switchboard://inbox"]
                # Another workspace's message tells this subscription nothing...
                await anyio.to_thread.run_sync(lambda: _inbound(client, theirs["id"], "not yours", who="zed"))
                await anyio.to_thread.run_sync(lambda: wait_for(lambda: _conversations(client, other_tenant)))
                with anyio.move_on_after(2.5) as quiet:
                    async for event in subscription:
                        raise AssertionError(f"told of another workspace's message: {event}")
                assert quiet.cancelled_caught
                # ...this workspace's does.
                await anyio.to_thread.run_sync(lambda: _inbound(client, bot["id"], "Hello there"))
                with anyio.fail_after(15):
                    event = await subscription.__anext__()
                assert event.uri == "switchboard://inbox"
            inbox = _text(await session.read_resource("switchboard://inbox"))
            assert "Ana" in inbox and "unread 1" in inbox

    asyncio.run(scenario())


def test_the_prompts_people_ask_for(server_url, client, tenant):
    bot = connect_account(client, tenant, "telegram")
    _inbound(client, bot["id"], "Where is my order?")
    wait_for(lambda: _conversations(client, tenant))

    async def scenario() -> None:
        async with mcp_client(server_url, Authorization=f"Bearer {tenant['apiKey']}") as session:
            prompts = {p.name: p for p in (await session.list_prompts()).prompts}
            assert set(prompts) == {"triage_inbox", "draft_replies", "plan_week_of_posts", "weekly_analytics_summary"}
            assert [a.name for a in prompts["plan_week_of_posts"].arguments if a.required] == ["brief"]

            triage = await session.get_prompt("triage_inbox")
            text = triage.messages[0].content.text
            assert "Do not send anything" in text
            assert "Ana" in text and "unread 1" in text  # the inbox as it is now

            drafts = await session.get_prompt("draft_replies", {"tone": "warm"})
            assert "warm tone" in drafts.messages[0].content.text

            plan = await session.get_prompt("plan_week_of_posts", {"brief": "Spring sale, 20% off", "startDate":
                                                                   "2026-12-07"})
            assert "Spring sale, 20% off" in plan.messages[0].content.text
            assert "starting 2026-12-07" in plan.messages[0].content.text

            summary = await session.get_prompt("weekly_analytics_summary")
            assert "get_follower_analytics" in summary.messages[0].content.text

    asyncio.run(scenario())
