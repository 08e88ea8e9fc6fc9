"""TikTok Business Messaging webhooks: `TikTok-Signature: t=<unix seconds>,s=<hex HMAC-SHA256 of
"<t>.<raw body>" keyed with the app's client secret>`; `im_receive_msg` and `im_send_msg` events."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from typing import Any

from platforms.inbound import InboundEvent, attachment, from_millis, from_seconds, mapping, shown_text

# TikTok signs with the time of sending: an older signature is a replay.
TIKTOK_SIGNATURE_TOLERANCE = 300


def tiktok_signature(client_secret: str, raw_body: bytes, at: int) -> str:
    """The `TikTok-Signature` header TikTok sends for `raw_body` at unix time `at`."""
    digest = hmac.new(client_secret.encode(), f"{at}.".encode() + raw_body, hashlib.sha256).hexdigest()
    return f"t={at},s={digest}"


def verify(header: str | None, raw_body: bytes, client_secret: str) -> bool:
    if not header or not client_secret:
        return False
    parts = dict(item.split("=", 1) for item in header.split(",") if "=" in item)
    stamp, given = parts.get("t", ""), parts.get("s", "")
    if not stamp.isdigit() or not given or abs(time.time() - int(stamp)) > TIKTOK_SIGNATURE_TOLERANCE:
        return False
    expected = tiktok_signature(client_secret, raw_body, int(stamp)).split("s=", 1)[1]
    return hmac.compare_digest(given.encode(), expected.encode())


def parse(payload: dict[str, Any]) -> list[InboundEvent]:
    """`im_receive_msg` (a person wrote to the business) and `im_send_msg` (the business wrote,
    here or in TikTok's own inbox): `content` is a JSON string naming the conversation, the message
    and both sides. Conversations are addressed by TikTok's `conversation_id`."""
    kind = payload.get("event")
    if kind not in ("im_receive_msg", "im_send_msg"):
        return []
    content = payload.get("content")
    if isinstance(content, str):
        content = json.loads(content)
    if not isinstance(content, dict):
        return []
    account = str(payload.get("user_openid", ""))
    conversation = str(content.get("conversation_id", ""))
    message_id = str(content.get("message_id", ""))
    text = (content.get("text") or {}).get("body") if isinstance(content.get("text"), dict) else None
    # Other messages (`image`, `share_post`, `emoji`, ...) carry their own object, kept as the attachment.
    kind_of = str(content.get("type") or content.get("message_type") or "text")
    body = mapping(content.get(kind_of))
    attachments = () if kind_of == "text" else (
        attachment(kind_of, body.get("url") or body.get("embed_url"), media_id=body.get("media_id"),
                   item_id=body.get("item_id")),)
    text = shown_text(text, attachments)
    stamp = content.get("timestamp")
    at = from_millis(stamp) if stamp else from_seconds(payload.get("create_time"))
    key = f"tiktok:msg:{message_id}"
    if kind == "im_send_msg":
        return [InboundEvent("tiktok", "echo", account, key, at, contact_id=conversation or None, text=text,
                             platform_message_id=message_id, attachments=attachments)]
    sender = content.get("from")
    return [InboundEvent("tiktok", "message", account, key, at, contact_id=conversation or None,
                         contact_handle=sender if isinstance(sender, str) and sender else None, text=text,
                         platform_message_id=message_id, attachments=attachments)]
