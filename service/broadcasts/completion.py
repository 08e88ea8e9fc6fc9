"""How a broadcast is seen and how it ends: its record (with counts read from its recipients), its
events, and its recipients following their messages until the last one completes it.

Both sides of a broadcast use it: the front doors' module (ops.py) for records, the fan-out
(work.py) for announcing a start and completing a fan-out that left nobody pending, and the inbox's
signals (connected in `wire()`) for each finished message's recipient.
"""

from __future__ import annotations

from typing import Any

from kit import clock
from service.broadcasts.shapes import Broadcast as BroadcastRecord
from service.common import events
from service.common.signals import MessageFinished
from storage import hot
from storage.db import db, is_postgres
from storage.models import Broadcast, Message

OUTSIDE_WINDOW = "outside_messaging_window"


# -- records -----------------------------------------------------------------------------------
NO_COUNTS = {"targeted": 0, "sent": 0, "failed": 0, "skipped": 0}


def counts_of(broadcast_ids: list[str]) -> dict[str, dict[str, int]]:
    """Each broadcast's counts, from its recipients (one grouped read for a page of broadcasts)."""
    found: dict[str, dict[str, int]] = {}
    if not broadcast_ids:
        return found
    marks = ", ".join("?" for _ in broadcast_ids)
    rows = hot.run(f"SELECT broadcast_id, status, COUNT(*) FROM broadcast_recipient "  # noqa: S608 - marks only
                   f"WHERE broadcast_id IN ({marks}) GROUP BY broadcast_id, status", tuple(broadcast_ids)).fetchall()
    for broadcast_id, status, count in rows:
        counts = found.setdefault(broadcast_id, dict(NO_COUNTS))
        counts["targeted"] += int(count)
        if status in counts:
            counts[status] += int(count)
    return found


def record(row: Broadcast) -> BroadcastRecord:
    return BroadcastRecord.model_validate(as_dict(row, counts_of([row.id]).get(row.id, NO_COUNTS)))


def as_dict(row: Broadcast, counts: dict[str, int]) -> dict[str, Any]:
    return {
        "id": row.id, "account_id": row.account_id, "name": row.name,
        "text": None if row.template else row.text, "template": row.template,
        "button_label": row.button_label, "button_url": row.button_url,
        "audience": {"active_within_days": row.active_within_days, "conversation_ids": row.conversation_ids},
        "scheduled_for": row.scheduled_for, "timezone": row.timezone, "send_now": bool(row.send_now),
        "status": row.status,
        "counts": counts,
        "started_at": row.started_at, "completed_at": row.completed_at, "error": row.error,
        "created_at": row.created_at, "updated_at": row.updated_at,
    }


# -- announcing and completing --------------------------------------------------------------------
def announce(broadcast_id: str, event_type: str) -> None:
    row = hot.by_id(Broadcast, broadcast_id)
    assert row is not None
    events.emit(workspace_id=row.workspace_id, type=event_type, data=record(row).dump())


_NONE_PENDING = ("status = 'sending' AND fanned_out = ? AND NOT EXISTS (SELECT 1 FROM broadcast_recipient "
                 "WHERE broadcast_recipient.broadcast_id = broadcast.id AND broadcast_recipient.status = 'pending')")
_COMPLETE = ("UPDATE broadcast SET status = 'completed', completed_at = ?, updated_at = ? "  # noqa: S608 - from code
             f"WHERE id = ? AND {_NONE_PENDING}")

# The recipient of a finished message follows it: from pending; from unknown when a late answer says
# it arrived after all; from sent when the platform reports it undelivered later (`message_failed_later`).
_MOVE = ("UPDATE broadcast_recipient SET status = ?, reason = ?, sent_at = ?, updated_at = ? "
         "WHERE message_id = ? AND status IN ('pending', 'unknown', 'sent') AND status <> ?")
# On PostgreSQL the move and the completion check are one statement (a data-modifying `WITH`). The
# check reads the snapshot from before the move, where this recipient may still be pending: it
# looks for any other. The broadcast's id comes from scalar subqueries, so the prepared (generic)
# plan looks the pending recipients up by broadcast in the index: correlated with the broadcast's
# row instead, the plan made while the table was small read every pending recipient of every
# broadcast, each time.
_MOVE_AND_COMPLETE = (
    f"WITH moved AS ({_MOVE} RETURNING broadcast_id), "  # noqa: S608 - from code
    "done AS (UPDATE broadcast SET status = 'completed', completed_at = ?, updated_at = ? "
    "WHERE id = (SELECT broadcast_id FROM moved) AND status = 'sending' AND fanned_out = ? AND NOT EXISTS "
    "(SELECT 1 FROM broadcast_recipient WHERE broadcast_recipient.broadcast_id = (SELECT broadcast_id FROM moved) "
    "AND broadcast_recipient.status = 'pending' AND broadcast_recipient.message_id <> ?) RETURNING id) "
    "SELECT id FROM done"
)


def complete_if_done(broadcast_id: str) -> None:
    """Where a change may have been the last one (the fan-out ended)."""
    _complete(broadcast_id)


def _complete(broadcast_id: str) -> None:
    """Complete it if the fan-out is over and no recipient is pending (once: the UPDATE is conditional)."""
    moment = clock.now()
    if hot.run_fixed(_COMPLETE, (moment, moment, broadcast_id, True)).rowcount:
        announce(broadcast_id, "broadcast.completed")


def complete_finished() -> None:
    """The scheduler's tick job: complete sending broadcasts with nobody pending that no finishing
    message completed (the last two finished together, each seeing the other still pending)."""
    # Read first: most ticks find nothing, and a write transaction every tick would contend with sends.
    found = hot.run_fixed(f"SELECT id FROM broadcast WHERE {_NONE_PENDING} LIMIT 100", (True,)).fetchall()  # noqa: S608
    for (broadcast_id,) in found:
        with db.atomic():
            _complete(broadcast_id)


def message_finished(done: MessageFinished) -> None:
    """Outbound's finish listener for every outcome but `sent` (`recipient_sent` rides with that
    one): the recipient follows its message, in the transaction that finishes the message; the last
    one completes the broadcast."""
    if done.source == "broadcast":
        _follow(done, complete=True)


# A sent message's recipient moves in the statement that records the message's outcome (on
# PostgreSQL one data-modifying `WITH`, no transaction around it): from pending, or from unknown
# when a late answer says it arrived after all.
_SENT = ("UPDATE broadcast_recipient SET status = 'sent', reason = NULL, sent_at = ?, updated_at = ? "
         "WHERE message_id = ? AND status IN ('pending', 'unknown')")


def recipient_sent(done: MessageFinished) -> tuple[str, tuple[Any, ...]]:
    """Outbound's rider for a sent broadcast message: its recipient's move, run with the outcome."""
    return _SENT, (done.at, done.at, done.message_id)


def complete_after(message_ids: list[str]) -> None:
    """After a group of broadcast messages was sent (`work.send_group`), each outcome committed:
    complete their broadcasts where none is pending after the fan-out. Checked after the commits,
    the last group to finish sees every other's outcome, so the broadcast completes at once; most
    groups find someone still pending and write nothing (one read for the group)."""
    if not message_ids:
        return
    marks = ", ".join("?" for _ in message_ids)
    found = hot.run(f"SELECT id FROM broadcast WHERE id IN (SELECT broadcast_id FROM broadcast_recipient "  # noqa: S608
                    f"WHERE message_id IN ({marks})) AND {_NONE_PENDING}", (*message_ids, True)).fetchall()
    for (broadcast_id,) in found:
        with db.atomic():
            _complete(broadcast_id)


def _follow(done: MessageFinished, *, complete: bool) -> None:
    """Move the message's recipient; with `complete`, complete its broadcast when none is left
    pending after the fan-out. Every message of a broadcast runs this: its statements are prepared
    once per connection on PostgreSQL (`run_fixed`), where planning them cost more than running them."""
    reason = None if done.status == "sent" else done.error
    sent_at = done.at if done.status == "sent" else None
    move = (done.status, reason, sent_at, done.at, done.message_id, done.status)
    if complete and is_postgres():
        completed = hot.run_fixed(_MOVE_AND_COMPLETE, (*move, done.at, done.at, True, done.message_id)).fetchone()
        if completed is not None:
            announce(completed[0], "broadcast.completed")
        return
    moved = hot.run_fixed(_MOVE + " RETURNING broadcast_id", move).fetchone()
    if moved is not None and complete:
        _complete(moved[0])


def message_failed_later(message: Message, reason: str) -> None:
    """The inbox's hook for a receipt that turns a sent message `failed` (WhatsApp reports messages
    outside the window this way): its recipient follows."""
    message_finished(MessageFinished(message.id, message.source, "failed", clock.now(), reason))
