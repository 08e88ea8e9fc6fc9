"""Broadcasts' shapes: what `/v1` and the MCP tools take and answer for broadcasts and their recipients."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from kit.shapes import LEFT_OUT, Body, HttpsUrl, Id, Instant, NullableInstant, PageQuery, Record
from service.inbox.shapes import SentTemplate, Template

STATUSES = ("draft", "scheduled", "sending", "completed", "cancelled", "failed")
RECIPIENT_STATUSES = ("pending", "sent", "failed", "skipped", "unknown")
MAX_TEXT = 4096
MAX_CONVERSATION_IDS = 10_000

Name = Annotated[str, Field(min_length=1, max_length=200, examples=["Black Friday"])]
Text = Annotated[str, Field(min_length=1, max_length=MAX_TEXT, description=(
    "The message, 1..4096 characters and within the platform's own limit."), examples=["20% off until midnight"])]
Label = Annotated[str, Field(min_length=1, max_length=255, description=(
    "With `buttonUrl`. Kept whole; platforms show at most 20 characters, so the message carries it cut to 20."),
    examples=["Shop now"])]
Url = Annotated[HttpsUrl, Field(max_length=2048, description="An absolute https URL, with `buttonLabel`.",
                                examples=["https://shop.example.com/sale"])]
ScheduledFor = Annotated[str, Field(max_length=64, description=(
    "ISO 8601. With an offset or `Z`: that instant. Without: a wall time in `timezone` (a time skipped by a "
    "DST change moves forward by the gap; a repeated one takes the first occurrence). More than 60 s in the "
    "past, or outside 1970-01-01 .. 9999-12-30 in UTC → 422. Answered as the UTC instant it names."),
    examples=["2026-12-01T09:00:00"])]
Timezone = Annotated[str, Field(max_length=64, description="IANA name, e.g. `America/New_York`; needed for a "
                                                           "`scheduledFor` without an offset.",
                                examples=["America/New_York"])]


class Audience(Body):
    """Who receives it, resolved when sending starts: `conversationIds` when given (it wins over every
    other filter), else the conversations whose contact wrote within `activeWithinDays`, else every
    conversation of the account."""

    active_within_days: Annotated[int, Field(ge=1, le=365)] = Field(LEFT_OUT, description=(
        "Only contacts whose last message is at most this many days old (1..365)."))
    conversation_ids: Annotated[list[Annotated[str, Field(min_length=1, max_length=64)]],
                                Field(min_length=1, max_length=MAX_CONVERSATION_IDS)] = Field(LEFT_OUT, description=(
        "Conversations of the broadcast's account (others → 422); wins over `activeWithinDays`."))


class BroadcastFields(Body):
    """Everything of a broadcast but its account: what PUT takes (omitted fields keep their value)."""

    name: Name = LEFT_OUT
    text: Text = LEFT_OUT
    template: Template | None = Field(None, description=(
        "WhatsApp only, instead of `text`: an approved template (`GET /v1/accounts/{id}/templates`), checked "
        "when saved. The only message that reaches contacts outside the 24 h window: no recipient is skipped "
        "for the window. Takes no button."))
    button_label: Label | None = None
    button_url: Url | None = None
    audience: Audience | None = None
    scheduled_for: ScheduledFor | None = None
    timezone: Timezone | None = None
    send_now: bool = Field(LEFT_OUT, description="true: start now (within a scheduler tick). With neither this "
                                                  "nor `scheduledFor` the broadcast is a `draft`.")


class CreateBroadcast(BroadcastFields):
    account_id: Id = Field(description="A connected account whose platform has direct messages.")
    name: Name
    text: Text = Field(LEFT_OUT, description="Required, unless a WhatsApp broadcast sends a `template`.")


class UpdateBroadcast(BroadcastFields):
    """PUT: every field but `accountId`; omitted fields keep their value, `null` clears one."""


class UpdateBroadcastTool(UpdateBroadcast):
    """`update_broadcast` as an MCP tool: the broadcast's id is an argument (on /v1, the path)."""

    broadcast_id: Id


class BroadcastRef(Body):
    broadcast_id: Id


class BroadcastQuery(PageQuery):
    status: Literal[STATUSES] = LEFT_OUT  # type: ignore[valid-type]
    account_id: Id = LEFT_OUT


class RecipientQuery(PageQuery):
    status: Literal[RECIPIENT_STATUSES] = Field(LEFT_OUT, description="Only recipients in this status.")  # type: ignore[valid-type]


# -- records -----------------------------------------------------------------------------------


class AudienceRecord(Record):
    active_within_days: int | None
    conversation_ids: list[str] | None


class Counts(Record):
    targeted: int = Field(ge=0, description="Recipients the audience resolved to when sending started.")
    sent: int = Field(ge=0)
    failed: int = Field(ge=0)
    skipped: int = Field(ge=0, description="Outside the platform's messaging window, or not sent when cancelled.")


class Broadcast(Record):
    id: str
    account_id: str
    name: str
    text: str | None = Field(description="Null when the broadcast sends a WhatsApp template.")
    template: SentTemplate | None = Field(None, description="The WhatsApp template it sends instead of text.")
    button_label: str | None = Field(description="As given (whole); the message shows it cut to 20 characters.")
    button_url: str | None
    audience: AudienceRecord
    scheduled_for: NullableInstant = Field(description="The UTC instant it is due, when scheduled for a time.")
    timezone: str | None
    send_now: bool
    status: Literal[STATUSES]  # type: ignore[valid-type]
    counts: Counts
    started_at: NullableInstant
    completed_at: NullableInstant = Field(description="When it ended: completed, failed or cancelled.")
    error: str | None = Field(None, description="Why it `failed` (e.g. the account was disconnected).")
    created_at: Instant
    updated_at: Instant


class BroadcastDeleted(Record):
    id: str
    deleted: bool


class Recipient(Record):
    conversation_id: str
    status: Literal[RECIPIENT_STATUSES]  # type: ignore[valid-type]
    reason: str | None = Field(description=(
        "`outside_messaging_window` or `cancelled` for a skipped recipient; the platform's reason for a failed "
        "one; why an `unknown` one may or may not have arrived."))
    message_id: str | None = Field(description="The outbound message (null when none was sent).")
    sent_at: NullableInstant
