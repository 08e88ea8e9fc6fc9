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


def test_during_a_key_rotation_a_bot_set_with_the_older_key_is_still_heard():
    before = adapters_with(telegram_secret_seed=b"old")["telegram"]
    during = adapters_with(telegram_secret_seed=b"new", telegram_older_secret_seeds=(b"old",))["telegram"]
    after = adapters_with(telegram_secret_seed=b"new")["telegram"]
    set_before = {"X-Telegram-Bot-Api-Secret-Token": before.config.telegram_secret("42")}
    set_again = {"X-Telegram-Bot-Api-Secret-Token": after.config.telegram_secret("42")}
    assert during.verify_webhook(set_before, b"{}", {"bot": "42"})
    assert during.verify_webhook(set_again, b"{}", {"bot": "42"})
    assert not after.verify_webhook(set_before, b"{}", {"bot": "42"})  # the older key dropped
    assert not during.verify_webhook(set_before, b"{}", {"bot": "43"})
