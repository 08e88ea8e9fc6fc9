"""Telegram's post rules: a caption with media is held to 1,024 characters, a text to 4,096, and a
post goes to a channel the bot administers."""

from __future__ import annotations

from platforms.registry import declared
from tests.platforms.rule_checks import IMAGE, problems


def test_a_caption_with_media_is_held_to_1024_characters_and_a_text_to_4096():
    channel = {"chatId": "@news"}
    assert "1024" in problems("telegram", "b" * 1025, (IMAGE,), channel)["targets[0].content"]
    assert problems("telegram", "b" * 1025, (), channel) == {}
    assert "4096" in problems("telegram", "b" * 4097, (), channel)["targets[0].content"]


def test_a_post_needs_a_channel_given_or_connected():
    assert "chatId" in problems("telegram")["targets[0].options.chatId"]
    rules = declared("telegram").post_rules
    connected = rules.options_from_credentials({"botToken": "1:AA", "channelId": "-1001"})
    assert problems("telegram", live_options=connected) == {}
