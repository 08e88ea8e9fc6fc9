"""Verification and parsing of the platforms' own webhooks arriving at `/hooks/{platform}`.

- Meta (Instagram, Facebook, WhatsApp): GET `hub.mode=subscribe&hub.verify_token=..&hub.challenge=..`
  answered by `verify_meta_challenge`; POSTs signed `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of
  the raw body keyed with the app secret>`.
- Telegram: `X-Telegram-Bot-Api-Secret-Token` equal to the `secret_token` given to `setWebhook`; the
  webhook URL carries `?bot=<bot id>` so the bot (and so its secret) is known before parsing.
- X (Account Activity): GET `?crc_token=..` answered by `x_crc_response` (`sha256=` + base64 HMAC-SHA256
  of the token keyed with the app's consumer secret); POSTs signed the same way over the raw body in
  `x-twitter-webhooks-signature`.
- TikTok: `TikTok-Signature: t=<unix seconds>,s=<hex HMAC-SHA256 of "<t>.<raw body>" keyed with the
  app's client secret>`.

Platforms read by polling hand their pages to `parse_x_dm_events` and `parse_youtube_threads`, which
give the same events (with the same dedupe keys) as a webhook would.

`parse` turns a verified payload into normalised `InboundEvent`s; each has a `dedupe_key` that is
the same on every delivery of the same event, so the service can process duplicates once.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

META_PLATFORMS = ("instagram", "facebook", "whatsapp", "meta_ads")

EventKind = Literal["message", "story_reply", "comment", "echo", "postback", "delivery", "read", "failed", "post"]


@dataclass(frozen=True)
class InboundEvent:
    platform: str
    kind: EventKind
    platform_account_id: str
    dedupe_key: str
    occurred_at: dt.datetime
    contact_id: str | None = None
    contact_handle: str | None = None
    contact_name: str | None = None
    text: str | None = None
    platform_message_id: str | None = None
    media_id: str | None = None
    comment_id: str | None = None
    parent_comment_id: str | None = None
    postback_payload: str | None = None
    message_ids: tuple[str, ...] = ()
    watermark: dt.datetime | None = None
    from_self: bool = False
    """A comment written by the account itself (never triggers automations)."""
    app_id: str | None = None
    """On echoes: the app that sent the message (None or another app: written in the platform's inbox)."""


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    if value is None:
        lowered = name.lower()
        for key, candidate in headers.items():
            if key.lower() == lowered:
                return candidate
    return value


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


def verify_signature(
    platform: str,
    headers: Mapping[str, str],
    raw_body: bytes,
    *,
    app_secret: str,
    telegram_secret_for: Callable[[str], str | None],
    query: Mapping[str, str] | None = None,
    instagram_app_secret: str = "",
    x_consumer_secret: str = "",
    tiktok_client_secret: str = "",
) -> bool:
    """True only for a webhook that provably comes from the platform (constant-time compares).

    Instagram webhooks of an Instagram Login app are signed with that app's own secret, those of a
    Facebook Login app with the Meta app's: either is accepted for Instagram."""
    if platform in META_PLATFORMS:
        given = _header(headers, "X-Hub-Signature-256")
        if not given or not given.startswith("sha256="):
            return False
        candidates = [app_secret, instagram_app_secret] if platform == "instagram" else [app_secret]
        matches = [hmac.compare_digest(given.encode(), meta_signature(secret, raw_body).encode())
                   for secret in candidates if secret]
        return any(matches)
    if platform == "telegram":
        bot = (query or {}).get("bot")
        given = _header(headers, "X-Telegram-Bot-Api-Secret-Token")
        if not bot or not given:
            return False
        expected = telegram_secret_for(bot)
        if not expected:
            return False
        return hmac.compare_digest(given.encode(), expected.encode())
    if platform == "x":
        given = _header(headers, "x-twitter-webhooks-signature")
        if not given or not x_consumer_secret:
            return False
        return hmac.compare_digest(given.encode(), x_signature(x_consumer_secret, raw_body).encode())
    if platform == "tiktok":
        return _tiktok_signed(_header(headers, "TikTok-Signature"), raw_body, tiktok_client_secret)
    return False


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


# TikTok signs with the time of sending: an older signature is a replay.
TIKTOK_SIGNATURE_TOLERANCE = 300


def tiktok_signature(client_secret: str, raw_body: bytes, at: int) -> str:
    """The `TikTok-Signature` header TikTok sends for `raw_body` at unix time `at`."""
    digest = hmac.new(client_secret.encode(), f"{at}.".encode() + raw_body, hashlib.sha256).hexdigest()
    return f"t={at},s={digest}"


def _tiktok_signed(header: str | None, raw_body: bytes, client_secret: str) -> bool:
    if not header or not client_secret:
        return False
    parts = dict(item.split("=", 1) for item in header.split(",") if "=" in item)
    stamp, given = parts.get("t", ""), parts.get("s", "")
    if not stamp.isdigit() or not given or abs(time.time() - int(stamp)) > TIKTOK_SIGNATURE_TOLERANCE:
        return False
    expected = tiktok_signature(client_secret, raw_body, int(stamp)).split("s=", 1)[1]
    return hmac.compare_digest(given.encode(), expected.encode())


# A platform's clock is trusted only within these bounds; anything else (a forged or broken
# `timestamp` of year 50,000, or one Python cannot even represent) is read as the receipt time.
_EARLIEST = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)
_FUTURE_SLACK = dt.timedelta(days=1)


def _plausible(seconds: float) -> dt.datetime:
    now = dt.datetime.now(dt.UTC)
    try:
        at = dt.datetime.fromtimestamp(seconds, dt.UTC)
    except (OverflowError, OSError, ValueError):
        return now
    return at if _EARLIEST <= at <= now + _FUTURE_SLACK else now


def _from_millis(value: Any) -> dt.datetime:
    try:
        return _plausible(int(value) / 1000)
    except (TypeError, ValueError, OverflowError):
        return dt.datetime.now(dt.UTC)


def _from_seconds(value: Any) -> dt.datetime:
    try:
        return _plausible(int(value))
    except (TypeError, ValueError, OverflowError):
        return dt.datetime.now(dt.UTC)


def parse(platform: str, payload: Any, *, query: Mapping[str, str] | None = None) -> list[InboundEvent]:
    """Normalised events of one verified webhook body (unknown parts are ignored, never an error)."""
    if not isinstance(payload, dict):
        return []
    if platform in ("instagram", "facebook"):
        return _parse_meta(platform, payload)
    if platform == "whatsapp":
        return _parse_whatsapp(payload)
    if platform == "telegram":
        return _parse_telegram(payload, (query or {}).get("bot") or "")
    if platform == "x":
        return _parse_x_activity(payload)
    if platform == "tiktok":
        return _parse_tiktok(payload)
    return []


# -- Instagram and Facebook ------------------------------------------------------------------
def _parse_meta(platform: str, payload: dict[str, Any]) -> list[InboundEvent]:
    events: list[InboundEvent] = []
    for entry in payload.get("entry") or []:
        if not isinstance(entry, dict):
            continue
        account = str(entry.get("id", ""))
        for item in entry.get("messaging") or []:
            event = _meta_messaging(platform, account, item)
            if event is not None:
                events.append(event)
        for change in entry.get("changes") or []:
            event = _meta_change(platform, account, change, entry.get("time"))
            if event is not None:
                events.append(event)
    return events


def _meta_messaging(platform: str, account: str, item: dict[str, Any]) -> InboundEvent | None:
    sender = str((item.get("sender") or {}).get("id", ""))
    recipient = str((item.get("recipient") or {}).get("id", ""))
    at = _from_millis(item.get("timestamp"))
    message = item.get("message")
    if isinstance(message, dict):
        mid = str(message.get("mid", ""))
        if message.get("is_deleted") or message.get("is_unsupported"):
            return None
        if message.get("is_echo"):
            app_id = message.get("app_id")
            return InboundEvent(
                platform,
                "echo",
                account,
                f"{platform}:mid:{mid}",
                at,
                contact_id=recipient,
                text=message.get("text"),
                platform_message_id=mid,
                app_id=str(app_id) if app_id is not None else None,
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
            text=message.get("text"),
            platform_message_id=mid,
            media_id=str(story["id"]) if isinstance(story, dict) and story.get("id") else None,
            postback_payload=quick,
        )
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
            watermark = _from_millis(receipt["watermark"]) if receipt.get("watermark") else None
            marker = receipt.get("watermark") or ",".join(mids)
            return InboundEvent(
                platform,
                kind,
                account,
                f"{platform}:{kind}:{sender}:{marker}",
                at,  # type: ignore[arg-type]
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
            _from_seconds(entry_time),
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
            _from_seconds(value.get("created_time") or entry_time),
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
            _from_seconds(value.get("created_time") or entry_time),
            contact_id=author_id,
            contact_name=author.get("name"),
            text=value.get("message"),
            media_id=value.get("post_id"),
            comment_id=comment_id,
            parent_comment_id=parent if parent and parent != value.get("post_id") else None,
            from_self=author_id == account,
        )
    return None


# -- WhatsApp ----------------------------------------------------------------------------------
def _parse_whatsapp(payload: dict[str, Any]) -> list[InboundEvent]:
    events: list[InboundEvent] = []
    for entry in payload.get("entry") or []:
        for change in (entry or {}).get("changes") or []:
            value = (change or {}).get("value") or {}
            if change.get("field") != "messages":
                continue
            account = str((value.get("metadata") or {}).get("phone_number_id", ""))
            names = {
                str(c.get("wa_id")): (c.get("profile") or {}).get("name")
                for c in value.get("contacts") or []
                if isinstance(c, dict)
            }
            for message in value.get("messages") or []:
                event = _whatsapp_message(account, message, names)
                if event is not None:
                    events.append(event)
            for status in value.get("statuses") or []:
                event = _whatsapp_status(account, status)
                if event is not None:
                    events.append(event)
    return events


def _whatsapp_message(account: str, message: dict[str, Any], names: dict[str, Any]) -> InboundEvent | None:
    wa_id = str(message.get("from", ""))
    mid = str(message.get("id", ""))
    at = _from_seconds(message.get("timestamp"))
    kind: EventKind = "message"
    payload = None
    kind_of = message.get("type")
    if kind_of == "text":
        text = (message.get("text") or {}).get("body")
    elif kind_of == "interactive":
        interactive = message.get("interactive") or {}
        reply = interactive.get("button_reply") or interactive.get("list_reply") or {}
        kind, text, payload = "postback", reply.get("title"), reply.get("id")
    elif kind_of == "button":
        button = message.get("button") or {}
        kind, text, payload = "postback", button.get("text"), button.get("payload")
    else:
        text = (message.get(kind_of) or {}).get("caption") if isinstance(kind_of, str) else None
    return InboundEvent(
        "whatsapp",
        kind,
        account,
        f"whatsapp:{mid}",
        at,
        contact_id=wa_id,
        contact_handle=f"+{wa_id}" if wa_id else None,
        contact_name=names.get(wa_id),
        text=text,
        platform_message_id=mid,
        postback_payload=payload,
    )


def _whatsapp_error_text(errors: Any) -> str | None:
    """`Re-engagement message (131047): Message failed to send because more than 24 hours...`."""
    first = errors[0] if isinstance(errors, list) and errors and isinstance(errors[0], dict) else None
    if first is None:
        return None
    title = str(first.get("title") or first.get("message") or "The message was not delivered")
    code = first.get("code")
    details = (first.get("error_data") or {}).get("details") if isinstance(first.get("error_data"), dict) else None
    text = f"{title} ({code})" if code else title
    return f"{text}: {details}" if details else text


def _whatsapp_status(account: str, status: dict[str, Any]) -> InboundEvent | None:
    state = status.get("status")
    kinds: dict[str, EventKind] = {"delivered": "delivery", "read": "read", "failed": "failed"}
    if state not in kinds:
        return None
    mid = str(status.get("id", ""))
    recipient = str(status.get("recipient_id", ""))
    errors = status.get("errors") or []
    return InboundEvent(
        "whatsapp",
        kinds[state],
        account,
        f"whatsapp:status:{mid}:{state}",
        _from_seconds(status.get("timestamp")),
        contact_id=recipient,
        contact_handle=f"+{recipient}" if recipient else None,
        platform_message_id=mid,
        message_ids=(mid,),
        text=_whatsapp_error_text(errors),
    )


# -- Telegram ----------------------------------------------------------------------------------
def _parse_telegram(update: dict[str, Any], bot: str) -> list[InboundEvent]:
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
                _from_seconds(message.get("date")),
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
                _from_seconds(post.get("date")),
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


# -- X -----------------------------------------------------------------------------------------
def _x_message(account: str, event_id: str, at: dt.datetime, sender: str, recipient: str, text: Any,
               users: Mapping[str, Any]) -> InboundEvent:
    """One DM event, a contact's message or (sent by the account) an echo, keyed as every way of
    reading it (webhook or `GET /2/dm_events`) keys it."""
    key = f"x:dm:{event_id}"
    if sender == account:
        return InboundEvent("x", "echo", account, key, at, contact_id=recipient or None,
                            text=text if isinstance(text, str) else None, platform_message_id=event_id)
    user = users.get(sender) or {}
    return InboundEvent("x", "message", account, key, at, contact_id=sender,
                        contact_handle=user.get("username") or user.get("screen_name"), contact_name=user.get("name"),
                        text=text if isinstance(text, str) else None, platform_message_id=event_id)


def _parse_x_activity(payload: dict[str, Any]) -> list[InboundEvent]:
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
        text = (create.get("message_data") or {}).get("text")
        events.append(_x_message(account, str(item.get("id", "")), _from_millis(item.get("created_timestamp")),
                                 sender, recipient, text, users))
    return events


def _iso(value: Any) -> dt.datetime:
    try:
        moment = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return dt.datetime.now(dt.UTC)
    return _plausible(moment.timestamp()) if moment.tzinfo is not None else dt.datetime.now(dt.UTC)


def parse_x_dm_events(account: str, page: dict[str, Any]) -> list[InboundEvent]:
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
        events.append(_x_message(account, str(item.get("id", "")), _iso(item.get("created_at")), sender, recipient,
                                 item.get("text"), users))
    return events


# -- TikTok Business Messaging -----------------------------------------------------------------
def _parse_tiktok(payload: dict[str, Any]) -> list[InboundEvent]:
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
    stamp = content.get("timestamp")
    at = _from_millis(stamp) if stamp else _from_seconds(payload.get("create_time"))
    key = f"tiktok:msg:{message_id}"
    if kind == "im_send_msg":
        return [InboundEvent("tiktok", "echo", account, key, at, contact_id=conversation or None, text=text,
                             platform_message_id=message_id)]
    sender = content.get("from")
    return [InboundEvent("tiktok", "message", account, key, at, contact_id=conversation or None,
                         contact_handle=sender if isinstance(sender, str) and sender else None, text=text,
                         platform_message_id=message_id)]


# -- YouTube comment threads -------------------------------------------------------------------
def _youtube_comment(channel: str, thread_id: str, video: Any, comment: dict[str, Any], *, top: bool) -> InboundEvent:
    snippet = comment.get("snippet") or {}
    comment_id = str(comment.get("id", ""))
    author = str((snippet.get("authorChannelId") or {}).get("value", ""))
    text = snippet.get("textOriginal") or snippet.get("textDisplay")
    at = _iso(snippet.get("publishedAt"))
    key = f"youtube:comment:{comment_id}"
    if author == channel:  # the channel's own reply, through us or on YouTube
        return InboundEvent("youtube", "echo", channel, key, at, contact_id=thread_id, text=text,
                            platform_message_id=comment_id)
    name = snippet.get("authorDisplayName")
    # The thread is the conversation: its starter names it; a reply by someone else adds a message
    # without renaming it.
    return InboundEvent("youtube", "message", channel, key, at, contact_id=thread_id,
                        contact_handle=name if top and isinstance(name, str) and name.startswith("@") else None,
                        contact_name=name if top and isinstance(name, str) else None, text=text,
                        platform_message_id=comment_id, media_id=str(video) if video else None,
                        comment_id=comment_id, parent_comment_id=None if top else thread_id)


def parse_youtube_threads(channel: str, page: dict[str, Any]) -> list[InboundEvent]:
    """One page of `commentThreads.list?part=snippet,replies`: each thread's top-level comment and the
    replies listed with it, oldest first within a thread."""
    events = []
    for thread in page.get("items") or []:
        if not isinstance(thread, dict):
            continue
        thread_id = str(thread.get("id", ""))
        snippet = thread.get("snippet") or {}
        top = snippet.get("topLevelComment")
        if isinstance(top, dict):
            events.append(_youtube_comment(channel, thread_id, snippet.get("videoId"), top, top=True))
        replies = [r for r in (thread.get("replies") or {}).get("comments") or [] if isinstance(r, dict)]
        replies.sort(key=lambda reply: str((reply.get("snippet") or {}).get("publishedAt", "")))
        events += [_youtube_comment(channel, thread_id, snippet.get("videoId"), reply, top=False) for reply in replies]
    return events
