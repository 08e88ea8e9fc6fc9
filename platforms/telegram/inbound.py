"""Telegram's updates at `/hooks/telegram?bot=<bot id>`: `X-Telegram-Bot-Api-Secret-Token` equal to
the `secret_token` given to `setWebhook` (the URL names the bot, and so its secret, before parsing);
a contact's message, a post made in a channel the bot administers, an inline button's callback."""

from __future__ import annotations

import datetime as dt
import hmac
from collections.abc import Callable, Mapping
from typing import Any

from platforms.inbound import InboundEvent, from_seconds, header


def verify(headers: Mapping[str, str], query: Mapping[str, str], secret_for: Callable[[str], str | None]) -> bool:
    """True only for an update carrying its bot's secret token (constant-time)."""
    bot = query.get("bot")
    given = header(headers, "X-Telegram-Bot-Api-Secret-Token")
    if not bot or not given:
        return False
    expected = secret_for(bot)
    if not expected:
        return False
    return hmac.compare_digest(given.encode(), expected.encode())


def parse(update: dict[str, Any], bot: str) -> list[InboundEvent]:
    update_id = update.get("update_id")
    key = f"telegram:{bot}:{update_id}"
    message = update.get("message")
    if isinstance(message, dict):
        user = message.get("from") or {}
        chat = message.get("chat") or {}
        name = " ".join(p for p in (user.get("first_name"), user.get("last_name")) if p) or None
        return [
            InboundEvent(
                "telegram",
                "message",
                bot,
                key,
                from_seconds(message.get("date")),
                contact_id=str(chat.get("id", user.get("id", ""))),
                contact_handle=user.get("username"),
                contact_name=name,
                text=message.get("text") or message.get("caption"),
                platform_message_id=str(message.get("message_id", "")),
            )
        ]
    post = update.get("channel_post")
    if isinstance(post, dict):
        # A post in a channel the bot administers, made by a person in Telegram itself.
        chat = post.get("chat") or {}
        # Kept as the adapter names a channel post: `@username:message_id` (public channels), else the id.
        chat_key = f"@{chat['username']}" if chat.get("username") else str(chat.get("id", ""))
        return [
            InboundEvent(
                "telegram",
                "post",
                bot,
                key,
                from_seconds(post.get("date")),
                text=post.get("text") or post.get("caption"),
                platform_message_id=f"{chat_key}:{post.get('message_id', '')}",
            )
        ]
    callback = update.get("callback_query")
    if isinstance(callback, dict):
        user = callback.get("from") or {}
        name = " ".join(p for p in (user.get("first_name"), user.get("last_name")) if p) or None
        return [
            InboundEvent(
                "telegram",
                "postback",
                bot,
                key,
                dt.datetime.now(dt.UTC),
                contact_id=str(user.get("id", "")),
                contact_handle=user.get("username"),
                contact_name=name,
                text=callback.get("data"),
                postback_payload=callback.get("data"),
                platform_message_id=str(callback.get("id", "")),
            )
        ]
    return []
