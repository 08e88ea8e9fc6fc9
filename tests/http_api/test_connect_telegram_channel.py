"""A Telegram account is a bot and the channel it posts to (CONTRACT section 3, `POST /v1/connect/telegram`
with `channel`): the bot's rights checked at connect, posts going there by default, the channel's
members as the account's followers. Over real HTTP to the sandbox."""

import secrets

import pytest

from service.analytics import ops as analytics
from tests.conftest import bearer
from tests.support.posts import sent_posts, wait_settled

pytestmark = pytest.mark.shared_service


def _bot_token() -> str:
    return f"6{secrets.randbelow(10**9):09d}:AA{secrets.token_hex(17)[:33]}"


def _connect(client, tenant, **body):
    return client.post("/v1/connect/telegram", headers=bearer(tenant["apiKey"]),
                       json={"profileId": tenant["profileId"], "botToken": _bot_token(), **body})


def test_a_channel_the_bot_administers_takes_its_posts_and_gives_its_followers(client, tenant):
    h = bearer(tenant["apiKey"])
    connected = _connect(client, tenant, channel="@switchboard_news")
    assert connected.status_code == 201, connected.text
    bot = connected.json()

    options = client.get(f"/v1/accounts/{bot['id']}/publish-options", headers=h).json()
    assert options["required"] == [] and options["chatId"].startswith("-100")

    post = client.post("/v1/posts", headers=h, json={
        "content": "To the channel", "publishNow": True, "targets": [{"accountId": bot["id"]}]})
    assert post.status_code == 201, post.text
    published = wait_settled(client, tenant, post.json()["id"])
    assert published["status"] == "published", published
    [sent] = sent_posts(client, "telegram", bot["id"])
    assert sent["text"] == "To the channel"
    assert str(sent["payload"]["chat_id"]).startswith("-100")  # the channel's id, read at connect

    # A target's own chatId still wins.
    elsewhere = client.post("/v1/posts", headers=h, json={
        "content": "Elsewhere", "publishNow": True,
        "targets": [{"accountId": bot["id"], "options": {"chatId": "@other_channel"}}]})
    assert wait_settled(client, tenant, elsewhere.json()["id"])["status"] == "published"
    assert sent_posts(client, "telegram", bot["id"])[-1]["payload"]["chat_id"] == "@other_channel"

    assert client.post("/sandbox/telegram/followers",
                       json={"accountId": bot["id"], "followers": 4321}).status_code == 200
    [snapshot] = analytics.take_now(account_ids=[bot["id"]])
    assert (snapshot.outcome, snapshot.followers) == ("taken", 4321)
    series = client.get("/v1/analytics/followers", headers=h, params={"accountId": bot["id"]}).json()
    assert [point["followers"] for point in series["accounts"][0]["series"] if point["followers"]] == [4321]


def test_a_channel_where_the_bot_is_no_administrator_is_refused(client, tenant):
    refused = _connect(client, tenant, channel="@notadmin_news")
    assert refused.status_code == 422
    error = refused.json()["error"]
    assert error["code"] == "validation_failed"
    assert error["details"][0]["field"] == "channel"
    assert "not an administrator" in error["details"][0]["message"]
    malformed = _connect(client, tenant, channel="news")
    assert malformed.status_code == 422
    assert malformed.json()["error"]["details"][0]["field"] == "channel"
    assert client.get("/v1/accounts", headers=bearer(tenant["apiKey"])).json()["data"] == []


def test_without_a_channel_a_post_still_needs_its_chat(client, tenant):
    bot = _connect(client, tenant).json()
    post = client.post("/v1/posts", headers=bearer(tenant["apiKey"]), json={
        "content": "Nowhere", "publishNow": True, "targets": [{"accountId": bot["id"]}]})
    assert post.status_code == 422
    assert post.json()["error"]["details"][0]["field"] == "targets[0].options.chatId"
