"""A key rotation and Telegram's webhooks: each bot's `secret_token` derives from the service's key.
While the older key is listed, a bot set with it is still heard; `renew()` (run by `switchboard
secrets rotate`) sets each bot's webhook again with the newest key's secret, after which the older
key can go and every bot is still heard."""

from __future__ import annotations

import pytest

from service.accounts import adapters, webhook_secrets
from tests.conftest import bearer
from tests.support.sandbox import connect_account

pytestmark = pytest.mark.shared_service


def _heard(client, tenant, bot: dict, text: str) -> bool:
    sent = client.post("/sandbox/telegram/inbound-message",
                       json={"accountId": bot["id"], "from": {"id": "5001", "name": "Ada"}, "text": text})
    sent.raise_for_status()
    conversations = client.get("/v1/conversations", headers=bearer(tenant["apiKey"]),
                               params={"accountId": bot["id"]}).json()["data"]
    if not conversations:
        return False
    messages = client.get(f"/v1/conversations/{conversations[0]['id']}/messages",
                          headers=bearer(tenant["apiKey"])).json()["data"]
    return any(message["text"] == text for message in messages)


def test_bots_are_heard_through_a_rotation_and_after_the_older_key_goes(client, tenant, monkeypatch):
    bot = connect_account(client, tenant, "telegram")
    config = adapters.config()
    older = config.telegram_secret_seed
    # Every process restarted with a new key first, the older one still listed.
    monkeypatch.setattr(config, "telegram_secret_seed", b"the newest key's seed")
    monkeypatch.setattr(config, "telegram_older_secret_seeds", (older,))
    assert _heard(client, tenant, bot, "during the rotation")

    renewed = webhook_secrets.renew()
    assert renewed.renewed >= 1 and renewed.failed == []
    monkeypatch.setattr(config, "telegram_older_secret_seeds", ())  # the older key dropped
    assert _heard(client, tenant, bot, "after the older key went")


def test_without_the_renewal_dropping_the_older_key_leaves_the_bot_unheard(client, tenant, monkeypatch):
    """What `renew()` is for: the same rotation, the older key dropped with the webhook not set again."""
    bot = connect_account(client, tenant, "telegram")
    config = adapters.config()
    monkeypatch.setattr(config, "telegram_secret_seed", b"the newest key's seed")
    monkeypatch.setattr(config, "telegram_older_secret_seeds", ())
    assert not _heard(client, tenant, bot, "lost")
