"""The event outbox: `emit` writes an event in the caller's transaction; a worker sends it later.

Because the event row commits or rolls back with the change that caused it, a webhook is never
sent for a change that did not happen, and never lost for one that did.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kit import clock, ids
from kit.settings import VERSION
from service.common import signals
from storage.db import db
from storage.hot import insert
from storage.models import Event

# name -> description. Names are never renamed; new ones are only added.
CATALOGUE: dict[str, str] = {
    "post.scheduled": "A post was scheduled for later publication.",
    "post.published": "A post was published on every target.",
    "post.partial": "A post was published on some targets and failed on others.",
    "post.failed": "A post failed on every target.",
    "post.cancelled": "A scheduled post was cancelled.",
    "post.approval_requested": "A member's post waits for an owner or an admin to approve it.",
    "post.approved": "A post waiting for approval was approved and goes on.",
    "post.rejected": "A post waiting for approval was rejected, with a reason.",
    "account.connected": "A platform account was connected.",
    "account.disconnected": "A platform account was disconnected.",
    "conversation.started": "A new conversation began, inbound or through the API.",
    "message.received": "A contact sent a direct message.",
    "message.sent": "A direct message was sent to a contact.",
    "message.failed": "A direct message could not be sent.",
    "comment.received": "A comment arrived on a watched post.",
    "automation.triggered": "A comment automation acted on a comment.",
    "broadcast.started": "A broadcast began sending.",
    "broadcast.completed": "A broadcast finished sending.",
    "sequence.enrolled": "A conversation was enrolled in a sequence.",
    "sequence.completed": "An enrolment received every step of its sequence.",
    "sequence.stopped": "An enrolment was stopped before its last step.",
    "media.uploaded": "A media upload was completed.",
    "webhook.test": "A test event sent on request to one endpoint.",
    "conversation.updated": "A conversation's status, assignee or labels changed (the shared inbox).",
}


def envelope(event: Event) -> dict[str, Any]:
    return {
        "id": event.id,
        "type": event.type,
        "createdAt": clock.iso(event.created_at),
        "apiVersion": VERSION,
        "workspaceId": event.workspace_id,
        "data": event.data,
    }


def _announce() -> None:
    signals.events_committed.send()


def emit_statement(*, workspace_id: str, type: str, data: dict[str, Any],
                   at: datetime | None = None) -> tuple[str, tuple[Any, ...]]:
    """`emit` as SQL for a caller that runs it with its change, in one transaction or one statement
    (`engine.finish(also=...)`): an INSERT ... SELECT with `?` placeholders, ending in a WHERE
    clause the caller may extend. Once it has run (or its transaction has begun to), the caller
    calls `emitted()`. `at`: the change's own instant (default now), read once for both."""
    _known(type)
    fields = Event._meta.fields
    # The id, workspace and type are text already (what their fields' `db_value` hands back).
    return _INSERT_SELECT, (ids.new_id("evt"), workspace_id, type, fields["data"].db_value(data),
                            fields["created_at"].db_value(at or clock.now()))


_INSERT_SELECT = ("INSERT INTO event (id, workspace_id, type, data, created_at) "
                  "SELECT ?, ?, ?, ?, ? WHERE 1 = 1")


def emitted() -> None:
    """The dispatcher hears of events written by `emit_statement`: once the transaction commits, or
    now when there is none."""
    if signals.events_committed:
        db.after_commit(_announce)


def emit(*, workspace_id: str, type: str, data: dict[str, Any]) -> Event:
    """Record an event in the current transaction. Call it inside the change's `db.atomic()`."""
    _known(type)
    event = Event(id=ids.new_id("evt"), workspace=workspace_id, type=type, data=data, created_at=clock.now())
    insert(Event, id=event.id, workspace=workspace_id, type=type, data=data, created_at=event.created_at)
    emitted()
    return event


def _known(type: str) -> None:
    if type not in CATALOGUE:
        raise ValueError(f"unknown event type {type!r}")
