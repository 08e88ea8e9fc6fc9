"""X's Account Activity webhooks and DM pages. GET `?crc_token=..` is answered by `crc_response`
(`sha256=` + base64 HMAC-SHA256 of the token keyed with the app's consumer secret); POSTs are signed
the same way over the raw body in `x-twitter-webhooks-signature`. An account without the webhook is
polled (`GET /2/dm_events`, `parse_dm_events`), giving the same events with the same dedupe keys."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import html
from collections.abc import Mapping
from typing import Any

from platforms.inbound import InboundEvent, attachment, from_iso, from_millis, header, mapping, shown_text


def x_signature(consumer_secret: str, message: bytes) -> str:
    """X's signature of a webhook body, and its CRC `response_token` of a `crc_token`: `sha256=` and
    the base64 HMAC-SHA256 keyed with the app's consumer secret."""
    digest = hmac.new(consumer_secret.encode(), message, hashlib.sha256).digest()
    return "sha256=" + base64.b64encode(digest).decode()


def x_crc_response(params: Mapping[str, str], consumer_secret: str) -> dict[str, str] | None:
    """The answer to X's challenge-response check, or None (no token, or no secret configured)."""
    token = params.get("crc_token")
    if not token or not consumer_secret:
        return None
    return {"response_token": x_signature(consumer_secret, token.encode())}


def verify(headers: Mapping[str, str], raw_body: bytes, consumer_secret: str) -> bool:
    given = header(headers, "x-twitter-webhooks-signature")
    if not given or not consumer_secret:
        return False
    return hmac.compare_digest(given.encode(), x_signature(consumer_secret, raw_body).encode())


def _x_message(account: str, event_id: str, at: dt.datetime, sender: str, recipient: str, text: Any,
               users: Mapping[str, Any], attachments: tuple[dict[str, Any], ...] = ()) -> InboundEvent:
    """One DM event, a contact's message or (sent by the account) an echo, keyed as every way of
    reading it (webhook or `GET /2/dm_events`) keys it."""
    key = f"x:dm:{event_id}"
    shown = shown_text(text if isinstance(text, str) else None, attachments)
    if sender == account:
        return InboundEvent("x", "echo", account, key, at, contact_id=recipient or None,
                            text=shown, platform_message_id=event_id, attachments=attachments)
    user = users.get(sender) or {}
    return InboundEvent("x", "message", account, key, at, contact_id=sender,
                        contact_handle=user.get("username") or user.get("screen_name"), contact_name=user.get("name"),
                        text=shown, platform_message_id=event_id, attachments=attachments)


def _webhook_attachments(data: Mapping[str, Any]) -> tuple[dict[str, Any], ...]:
    """`message_data.attachment` of an Account Activity DM: `{type: media, media: {type, media_url_https}}`."""
    found = data.get("attachment")
    if not isinstance(found, dict):
        return ()
    media = mapping(found.get("media"))
    kinds = {"photo": "image", "video": "video", "animated_gif": "animation"}
    kind = kinds.get(str(media.get("type")), str(media.get("type") or found.get("type") or "file"))
    return (attachment(kind, media.get("media_url_https") or media.get("media_url"), id=media.get("id_str")),)


def parse(payload: dict[str, Any]) -> list[InboundEvent]:
    """An Account Activity delivery: `for_user_id` and its `direct_message_events` (`message_create`)."""
    account = str(payload.get("for_user_id", ""))
    found = payload.get("users")
    users: dict[str, Any] = found if isinstance(found, dict) else {}
    events = []
    for item in payload.get("direct_message_events") or []:
        if not isinstance(item, dict) or item.get("type") != "message_create":
            continue
        create = item.get("message_create") or {}
        sender = str(create.get("sender_id", ""))
        recipient = str((create.get("target") or {}).get("recipient_id", ""))
        data = create.get("message_data") or {}
        # Account Activity delivers the text HTML-escaped (`&amp;` for `&`), as X's v1.1 objects are.
        text = data.get("text")
        text = html.unescape(text) if isinstance(text, str) else None
        events.append(_x_message(account, str(item.get("id", "")), from_millis(item.get("created_timestamp")),
                                 sender, recipient, text, users, _webhook_attachments(data)))
    return events


def parse_dm_events(account: str, page: dict[str, Any]) -> list[InboundEvent]:
    """One page of `GET /2/dm_events` (newest first), as events. The contact of a message the account
    sent is the other id of its one-to-one `dm_conversation_id` (`<low id>-<high id>`)."""
    users = {str(u.get("id")): u for u in (page.get("includes") or {}).get("users") or [] if isinstance(u, dict)}
    events = []
    for item in page.get("data") or []:
        if not isinstance(item, dict) or item.get("event_type") != "MessageCreate":
            continue
        sender = str(item.get("sender_id", ""))
        pair = [part for part in str(item.get("dm_conversation_id", "")).split("-") if part]
        recipient = next((part for part in pair if part != account), "") if len(pair) == 2 else ""
        events.append(_x_message(account, str(item.get("id", "")), from_iso(item.get("created_at")), sender, recipient,
                                 item.get("text"), users))
    return events
