"""A sequence's steps as a kind of the engine (`ENROLLMENT_WORK`): an enrolment's `next_attempt_at`
is its next step's due time, so the sweeper is the sequences' scheduler. A run queues the due step's
message in one transaction with the move to the next step and then sends it (the message is its own
at-most-once work of the inbox), so a step is never queued twice and a worker that dies between the
two leaves the message to the outbound engine.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from kit import clock
from kit.errors import Conflict, ValidationFailed
from platforms.base import Button
from service.common import events
from service.engine import core as engine
from service.engine.outcomes import Policy
from service.inbox import outbound
from service.inbox import work as inbox_work
from service.sequences.shapes import MAX_STEPS
from service.sequences.shapes import Enrollment as EnrollmentRecord
from storage.db import connection, db
from storage.models import Account, Conversation, Enrollment, Message, Sequence

ORDER_WAIT = dt.timedelta(seconds=0.3)
LEASE_SECONDS = 30.0


def announce_end(enrollment: Enrollment, workspace_id: str) -> None:
    kinds = {"completed": "sequence.completed", "stopped": "sequence.stopped"}
    if enrollment.status in kinds:
        events.emit(workspace_id=workspace_id, type=kinds[enrollment.status],
                    data=EnrollmentRecord.model_validate(enrollment).dump())


@dataclass(frozen=True)
class _Moved:
    message_id: str | None  # the step's message, to send now
    again: bool  # the next step is already due


def advance(enrollment_id: str) -> None:
    """Run an enrolment's due steps, in order: each queued in one transaction with the move to the
    next step, then sent (one attempt; the outbound engine takes over when the pace says wait)."""
    with connection():
        for _ in range(MAX_STEPS + 1):
            with db.atomic():
                moved = _advance_once(enrollment_id)
            if moved is None:
                return
            if moved.message_id is not None:
                inbox_work.send(moved.message_id)
            if not moved.again:
                return


def _end(found: engine.Claim, enrollment: Enrollment, workspace_id: str, *, status: str, reason: str | None,
         **columns: Any) -> None:
    moment = clock.now()
    if engine.finish(found, status=status, at=moment, reason=reason, ended_at=moment, next_step_at=None, **columns):
        enrollment.status, enrollment.reason, enrollment.ended_at = status, reason, moment
        enrollment.next_step_at, enrollment.updated_at = None, moment
        for name, value in columns.items():
            setattr(enrollment, name, Enrollment._meta.fields[name].python_value(value))
        announce_end(enrollment, workspace_id)


def _advance_once(enrollment_id: str) -> _Moved | None:
    found = engine.claim(ENROLLMENT_WORK, enrollment_id)
    if found is None:
        return None
    enrollment = Enrollment.get_by_id(enrollment_id)
    sequence = Sequence.get_by_id(enrollment.sequence_id)
    workspace_id = sequence.workspace_id
    moment = clock.now()
    if sequence.deleted_at is not None:
        _end(found, enrollment, workspace_id, status="cancelled", reason="sequence_deleted")
        return None
    if sequence.status != "active":
        engine.finish(found, status="active", next_attempt_at=None)  # resumed by `_release`
        return None
    steps = sequence.steps
    index = enrollment.current_step
    if index >= len(steps):  # the steps were shortened under it
        _end(found, enrollment, workspace_id, status="completed", reason=None)
        return None
    due = enrollment.next_step_at or moment
    if due > moment:
        engine.finish(found, status="active", next_attempt_at=due)
        return None
    if enrollment.last_message_id is not None:
        last = Message.get_or_none(Message.id == enrollment.last_message_id)
        if last is not None and last.status in ("pending", "sending"):
            # Look again once the previous message's own next attempt has come (the pace may hold
            # it a while), not on every tick.
            after = max(moment, last.next_attempt_at or moment) if last.status == "pending" else moment
            engine.finish(found, status="active", next_attempt_at=after + ORDER_WAIT)
            return None
    conversation = Conversation.get_by_id(enrollment.conversation_id)
    account = Account.get_by_id(conversation.account_id)
    step = steps[index]
    label, url = step.get("button_label"), step.get("button_url")
    message_id: str | None = None
    reason: str | None = None
    try:
        message_id = outbound.queue_outbound(
            conversation, account, text=step.get("text"), template=step.get("template"),
            button=Button(label, url) if label and url else None, source="sequence", nudge=False,
        ).id
    except Conflict as gone:
        step = engine.decide(found, gone)  # the policy: stopped, for good
        _end(found, enrollment, workspace_id, status=step.status, reason=step.error)
        return None
    except ValidationFailed as refused:  # outside the messaging window, or the platform would refuse it
        reason = refused.code if refused.code != "validation_failed" else "not_sendable"
    history = [*(enrollment.history or []), {
        "step": index + 1, "status": "queued" if message_id else "skipped", "message_id": message_id,
        "reason": reason, "at": clock.iso(moment),
    }]
    columns: dict[str, Any] = {"current_step": index + 1, "history": Enrollment.history.db_value(history)}
    if message_id is not None:
        columns["last_message_id"] = message_id
    if index + 1 >= len(steps):
        _end(found, enrollment, workspace_id, status="completed", reason=None, **columns)
        return _Moved(message_id, again=False)
    next_due = due + dt.timedelta(minutes=int(steps[index + 1]["delay_minutes"]))
    engine.finish(found, status="active", next_attempt_at=next_due, next_step_at=next_due, **columns)
    return _Moved(message_id, again=next_due <= moment)


# A step calls no platform (its message is the inbox's own at-most-once work): an enrolment whose
# account went away stops, with that reason, and is never tried again.
ENROLLMENT_POLICY = Policy(retry_status="active", failed_status="stopped", max_attempts=1, error_column="reason",
                           conflict_text="account_disconnected")

ENROLLMENT_WORK = engine.Kind(
    name="sequence_step", table="enrollment", ready=("active",), run=advance,
    lease_seconds=lambda settings: LEASE_SECONDS, policy=ENROLLMENT_POLICY,
)
