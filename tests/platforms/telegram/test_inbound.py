"""Telegram's updates: the bot's secret token, checked by its adapter."""

from __future__ import annotations

from tests.platforms.conftest import adapters_with


def test_telegram_secret_good_bad_missing():
    adapter = adapters_with(telegram_secret_seed=b"seed")["telegram"]
    header = {"X-Telegram-Bot-Api-Secret-Token": adapter.config.telegram_secret("42")}
    assert adapter.verify_webhook(header, b"{}", {"bot": "42"})
    assert not adapter.verify_webhook({"X-Telegram-Bot-Api-Secret-Token": "nope"}, b"{}", {"bot": "42"})
    assert not adapter.verify_webhook({}, b"{}", {"bot": "42"})
    assert not adapter.verify_webhook(header, b"{}", {"bot": "43"})
    assert not adapter.verify_webhook(header, b"{}", {})
