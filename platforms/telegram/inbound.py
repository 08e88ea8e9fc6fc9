"""Telegram's updates at `/hooks/telegram?bot=<bot id>`: `X-Telegram-Bot-Api-Secret-Token` equal to
the `secret_token` given to `setWebhook` (the URL names the bot, and so its secret, before parsing);
a contact's message (media, voice, stickers, locations and contacts kept as attachments), its edit,
a reaction to a message, a post made in a channel the bot administers, an inline button's callback.
Service messages (members joining or leaving, a pinned message) are no message."""

from __future__ import annotations

import datetime as dt
import hmac
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from platforms.inbound import InboundEvent, attachment, from_seconds, header, shown_text


def verify(headers: Mapping[str, str], query: Mapping[str, str],
           secrets_for: Callable[[str], Sequence[str]]) -> bool:
    """True only for an update carrying one of its bot's secret tokens (each compared in constant time)."""
    bot = query.get("bot")
    given = header(headers, "X-Telegram-Bot-Api-Secret-Token")
    if not bot or not given:
        return False
    matches = [hmac.compare_digest(given.encode(), expected.encode()) for expected in secrets_for(bot) if expected]
    return any(matches)


# A message's content fields (https://core.telegram.org/bots/api#message) and the attachment each is.
_FILES = {"photo": "image", "video": "video", "animation": "animation", "audio": "audio", "voice": "voice",
          "video_note": "video_note", "document": "file", "sticker": "sticker"}


def _attachments(message: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    out = []
    for field, kind in _FILES.items():
        body = message.get(field)
        if isinstance(body, list) and body:  # a photo comes in several sizes: the largest
            body = body[-1]
        if isinstance(body, dict):
            out.append(attachment(kind, file_id=body.get("file_id"), mime_type=body.get("mime_type"),
                                  filename=body.get("file_name"), emoji=body.get("emoji")))
    location = message.get("venue", {}).get("location") if isinstance(message.get("venue"), dict) else None
    location = location or message.get("location")
    if isinstance(location, dict):
        out.append(attachment("location", latitude=location.get("latitude"), longitude=location.get("longitude")))
    contact = message.get("contact")
    if isinstance(contact, dict):
        name = " ".join(p for p in (contact.get("first_name"), contact.get("last_name")) if p) or None
        out.append(attachment("contact", name=name, phones=[contact["phone_number"]] if contact.get("phone_number")
                              else None))
    for field in ("poll", "dice", "game", "story"):
        if isinstance(message.get(field), dict):
            out.append(attachment(field))
    return tuple(out)


def _from_contact(message: dict[str, Any], bot: str, key: str, edited: bool) -> InboundEvent | None:
    user = message.get("from") or {}
    chat = message.get("chat") or {}
    name = " ".join(p for p in (user.get("first_name"), user.get("last_name")) if p) or None
    attachments = _attachments(message)
    text = shown_text(message.get("text") or message.get("caption"), attachments)
    if text is None:
        return None  # a service message: someone joined or left, a message was pinned, ...
    mid = str(message.get("message_id", ""))
    return InboundEvent(
        "telegram",
        "edit" if edited else "message",
        bot,
        key,
        from_seconds(message.get("edit_date") if edited else message.get("date")),
        contact_id=str(chat.get("id", user.get("id", ""))),
        contact_handle=user.get("username"),
        contact_name=name,
        text=text,
        platform_message_id=None if edited else mid,
        attachments=attachments,
        target_message_id=mid if edited else None,
    )


def parse(update: dict[str, Any], bot: str) -> list[InboundEvent]:
    update_id = update.get("update_id")
    key = f"telegram:{bot}:{update_id}"
    for field in ("message", "edited_message"):
        message = update.get(field)
        if isinstance(message, dict):
            event = _from_contact(message, bot, key, edited=field == "edited_message")
            return [event] if event is not None else []
    reaction = update.get("message_reaction")
    if isinstance(reaction, dict):
        chat = reaction.get("chat") or {}
        emoji = next((str(r.get("emoji")) for r in reaction.get("new_reaction") or []
                      if isinstance(r, dict) and r.get("type") == "emoji"), "")
        return [InboundEvent("telegram", "reaction", bot, key, from_seconds(reaction.get("date")),
                             contact_id=str(chat.get("id", "")) or None,
                             target_message_id=str(reaction.get("message_id", "")) or None, reaction=emoji)]
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
