"""What every platform's webhook parsing shares: the normalised `InboundEvent` and the readers of a
platform's clock and headers.

Each platform verifies and parses its own webhooks in `platforms/<name>/inbound.py` (the Graph
platforms' Messenger webhooks in `platforms/graph/inbound.py`), reached through its adapter
(`verify_webhook`, `parse_webhook`, `webhook_check`); the polled platforms' pages through its
`rules.inbox.parse_page`. Each event has a `dedupe_key` that is the same on every delivery of the
same event (webhook or poll), so the service processes duplicates once.

A webhook says what it is: a message (its attachments kept, and a placeholder such as `[image]` for
its text when it has none), a `reaction`, `edit` or `delete` of the message it names
(`target_message_id`), a receipt, or nothing (system notices, typing indicators: no event at all).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

EventKind = Literal[
    "message", "story_reply", "comment", "echo", "postback", "delivery", "read", "failed", "post",
    "reaction", "edit", "delete",
]


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
    attachments: tuple[dict[str, Any], ...] = ()
    """What the message carried besides text: `{type, url?, ...}` each (`attachment`)."""
    target_message_id: str | None = None
    """On a reaction, edit or delete: the platform id of the message it changes."""
    reaction: str | None = None
    """On a reaction: the emoji (empty: the person took their reaction back)."""


def mapping(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one: a webhook's optional objects read safely."""
    return value if isinstance(value, dict) else {}


def attachment(kind: str, url: Any = None, **details: Any) -> dict[str, Any]:
    """One attachment as the service keeps it: its `type` (image, video, audio, voice, file, sticker,
    location, contact, share, story_mention, unsupported, ...), its `url` when the platform gives one,
    and the details that say what it is (a location's coordinates, a contact's name and phones)."""
    out: dict[str, Any] = {"type": kind}
    if isinstance(url, str) and url:
        out["url"] = url
    out.update({key: value for key, value in details.items() if value not in (None, "", [], {})})
    return out


def shown_text(text: Any, attachments: tuple[dict[str, Any], ...]) -> str | None:
    """The message's text, or for one with attachments only a placeholder naming them (`[image]`,
    `[voice] [location]`), so no message reaches the inbox blank."""
    if isinstance(text, str) and text.strip():
        return text
    if not attachments:
        return None
    return " ".join(f"[{item['type']}]" for item in attachments)


def header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    if value is None:
        lowered = name.lower()
        for key, candidate in headers.items():
            if key.lower() == lowered:
                return candidate
    return value


# A platform's clock is trusted only within these bounds; anything else (a forged or broken
# `timestamp` of year 50,000, or one Python cannot even represent) is read as the receipt time.
_EARLIEST = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)
_FUTURE_SLACK = dt.timedelta(days=1)


def plausible(seconds: float) -> dt.datetime:
    now = dt.datetime.now(dt.UTC)
    try:
        at = dt.datetime.fromtimestamp(seconds, dt.UTC)
    except (OverflowError, OSError, ValueError):
        return now
    return at if _EARLIEST <= at <= now + _FUTURE_SLACK else now


def from_millis(value: Any) -> dt.datetime:
    try:
        return plausible(int(value) / 1000)
    except (TypeError, ValueError, OverflowError):
        return dt.datetime.now(dt.UTC)


def from_seconds(value: Any) -> dt.datetime:
    try:
        return plausible(int(value))
    except (TypeError, ValueError, OverflowError):
        return dt.datetime.now(dt.UTC)


def from_iso(value: Any) -> dt.datetime:
    try:
        moment = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return dt.datetime.now(dt.UTC)
    return plausible(moment.timestamp()) if moment.tzinfo is not None else dt.datetime.now(dt.UTC)


