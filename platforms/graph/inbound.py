"""Meta's webhooks (Instagram, Facebook, WhatsApp, Meta Ads): the GET subscription check
(`hub.mode=subscribe&hub.verify_token=..&hub.challenge=..`), the `X-Hub-Signature-256` signature
(`sha256=<hex HMAC-SHA256 of the raw body keyed with the app secret>`), and the Messenger Platform's
`messaging` and `changes` entries that Instagram and Facebook share. A thread held by another app
under the handover protocol (Meta's own inbox, say) arrives as `standby` entries: read the same way,
so its messages are kept. Reactions, edits and deletions name the message they change."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from typing import Any

from platforms.inbound import (
    EventKind,
    InboundEvent,
    attachment,
    from_millis,
    from_seconds,
    header,
    mapping,
    shown_text,
)


def verify_meta_challenge(params: Mapping[str, str], verify_token: str) -> str | None:
    """The `hub.challenge` to echo when the subscription check is genuine, else None (answer 403)."""
    if params.get("hub.mode") != "subscribe" or not verify_token:
        return None
    given = params.get("hub.verify_token") or ""
    if not hmac.compare_digest(given.encode(), verify_token.encode()):
        return None
    return params.get("hub.challenge")


def meta_signature(app_secret: str, raw_body: bytes) -> str:
    """The `X-Hub-Signature-256` value Meta sends for `raw_body`."""
    return "sha256=" + hmac.new(app_secret.encode(), raw_body, hashlib.sha256).hexdigest()


def meta_signed(headers: Mapping[str, str], raw_body: bytes, secrets: list[str]) -> bool:
    """True when `X-Hub-Signature-256` is the signature of `raw_body` by one of `secrets` (constant-time)."""
    given = header(headers, "X-Hub-Signature-256")
    if not given or not given.startswith("sha256="):
        return False
    matches = [hmac.compare_digest(given.encode(), meta_signature(secret, raw_body).encode())
               for secret in secrets if secret]
    return any(matches)


def parse_messenger(platform: str, payload: dict[str, Any]) -> list[InboundEvent]:
    events: list[InboundEvent] = []
    for entry in payload.get("entry") or []:
        if not isinstance(entry, dict):
            continue
        account = str(entry.get("id", ""))
        for item in [*(entry.get("messaging") or []), *(entry.get("standby") or [])]:
            event = _meta_messaging(platform, account, item) if isinstance(item, dict) else None
            if event is not None:
                events.append(event)
        for change in entry.get("changes") or []:
            event = _meta_change(platform, account, change, entry.get("time"))
            if event is not None:
                events.append(event)
    return events


def _attachments(message: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    """`message.attachments`: `[{type, payload: {url, title, coordinates, sticker_id, ...}}]`."""
    out = []
    for item in message.get("attachments") or []:
        if not isinstance(item, dict):
            continue
        payload = mapping(item.get("payload"))
        coordinates = mapping(payload.get("coordinates"))
        out.append(attachment(str(item.get("type") or "file"), payload.get("url"), title=item.get("title") or
                              payload.get("title"), sticker_id=payload.get("sticker_id"),
                              latitude=coordinates.get("lat"), longitude=coordinates.get("long")))
    if message.get("is_unsupported"):
        out.append(attachment("unsupported"))
    return tuple(out)


def _meta_messaging(platform: str, account: str, item: dict[str, Any]) -> InboundEvent | None:
    sender = str((item.get("sender") or {}).get("id", ""))
    recipient = str((item.get("recipient") or {}).get("id", ""))
    at = from_millis(item.get("timestamp"))
    message = item.get("message")
    if isinstance(message, dict):
        mid = str(message.get("mid", ""))
        if message.get("is_deleted"):
            return InboundEvent(platform, "delete", account, f"{platform}:deleted:{mid}", at, contact_id=sender,
                                target_message_id=mid or None)
        attachments = _attachments(message)
        if message.get("is_echo"):
            app_id = message.get("app_id")
            return InboundEvent(
                platform,
                "echo",
                account,
                f"{platform}:mid:{mid}",
                at,
                contact_id=recipient,
                text=shown_text(message.get("text"), attachments),
                platform_message_id=mid,
                app_id=str(app_id) if app_id is not None else None,
                attachments=attachments,
            )
        story = (message.get("reply_to") or {}).get("story")
        kind: EventKind = "story_reply" if isinstance(story, dict) else "message"
        quick = (message.get("quick_reply") or {}).get("payload")
        return InboundEvent(
            platform,
            kind,
            account,
            f"{platform}:mid:{mid}",
            at,
            contact_id=sender,
            text=shown_text(message.get("text"), attachments),
            platform_message_id=mid,
            media_id=str(story["id"]) if isinstance(story, dict) and story.get("id") else None,
            postback_payload=quick,
            attachments=attachments,
        )
    reaction = item.get("reaction")
    if isinstance(reaction, dict):
        mid = str(reaction.get("mid", ""))
        taken_back = reaction.get("action") == "unreact"
        emoji = "" if taken_back else str(reaction.get("emoji") or reaction.get("reaction") or "")
        key = f"{platform}:reaction:{mid}:{sender}:{item.get('timestamp')}"
        return InboundEvent(platform, "reaction", account, key, at, contact_id=sender,
                            target_message_id=mid or None, reaction=emoji)
    edit = item.get("message_edit")
    if isinstance(edit, dict):
        mid = str(edit.get("mid", ""))
        return InboundEvent(platform, "edit", account, f"{platform}:edit:{mid}:{edit.get('num_edit')}", at,
                            contact_id=sender, text=edit.get("text"), target_message_id=mid or None)
    postback = item.get("postback")
    if isinstance(postback, dict):
        postback_mid = postback.get("mid")
        key = (
            f"{platform}:postback:{postback_mid}"
            if postback_mid
            else f"{platform}:postback:{sender}:{item.get('timestamp')}"
        )
        return InboundEvent(
            platform,
            "postback",
            account,
            key,
            at,
            contact_id=sender,
            text=postback.get("title"),
            platform_message_id=postback_mid,
            postback_payload=postback.get("payload"),
        )
    for kind in ("delivery", "read"):
        receipt = item.get(kind)
        if isinstance(receipt, dict):
            mids = tuple(
                str(m) for m in receipt.get("mids") or ([receipt["mid"]] if receipt.get("mid") else [])
            )
            watermark = from_millis(receipt["watermark"]) if receipt.get("watermark") else None
            marker = receipt.get("watermark") or ",".join(mids)
            return InboundEvent(
                platform,
                kind,
                account,
                f"{platform}:{kind}:{sender}:{marker}",
                at,
                contact_id=sender,
                message_ids=mids,
                watermark=watermark,
            )
    return None


def _meta_change(platform: str, account: str, change: Any, entry_time: Any) -> InboundEvent | None:
    if not isinstance(change, dict):
        return None
    value = change.get("value") or {}
    field = change.get("field")
    if platform == "instagram" and field in ("comments", "live_comments"):
        author = value.get("from") or {}
        comment_id = str(value.get("id", ""))
        author_id = str(author.get("id", ""))
        return InboundEvent(
            platform,
            "comment",
            account,
            f"instagram:comment:{comment_id}",
            from_seconds(entry_time),
            contact_id=author_id,
            contact_handle=author.get("username"),
            text=value.get("text"),
            media_id=str((value.get("media") or {}).get("id") or "") or None,
            comment_id=comment_id,
            parent_comment_id=value.get("parent_id"),
            from_self=author_id == account,
        )
    if (
        platform == "facebook"
        and field == "feed"
        and value.get("item") in ("status", "post", "photo", "video")
        and value.get("verb") == "add"
        and str((value.get("from") or {}).get("id", "")) == account
    ):
        # The Page's own new post (a visitor's post on the Page is not the account's).
        return InboundEvent(
            platform,
            "post",
            account,
            f"facebook:post:{value.get('post_id')}",
            from_seconds(value.get("created_time") or entry_time),
            text=value.get("message"),
            platform_message_id=str(value.get("post_id", "")),
        )
    if (
        platform == "facebook"
        and field == "feed"
        and value.get("item") == "comment"
        and value.get("verb") == "add"
    ):
        author = value.get("from") or {}
        comment_id = str(value.get("comment_id", ""))
        author_id = str(author.get("id", ""))
        parent = value.get("parent_id")
        return InboundEvent(
            platform,
            "comment",
            account,
            f"facebook:comment:{comment_id}",
            from_seconds(value.get("created_time") or entry_time),
            contact_id=author_id,
            contact_name=author.get("name"),
            text=value.get("message"),
            media_id=value.get("post_id"),
            comment_id=comment_id,
            parent_comment_id=parent if parent and parent != value.get("post_id") else None,
            from_self=author_id == account,
        )
    return None
