"""Sequences: timed follow-up messages into which conversations are enrolled.

An enrolment is a work row of the engine (`ENROLLMENT_WORK`) whose `next_attempt_at` is its next
step's due time, so the engine's sweeper is the scheduler: no loop of its own, nothing held in
memory, and after a restart a step that fell due meanwhile is simply handed out. One run of a due
enrolment, in one transaction: claim the row, queue the step as an outbound message
(`queue_outbound(..., source="sequence")`) and move the row to the next step. The message and the
move commit together, so a step is queued at most once; the outbound engine then sends it at most
once. The run then sends the message itself (one attempt, paced), so the following step, when it
is already due, goes right after it; a step waits while the previous one is still `pending` or
`sending`, so a contact receives the steps in order.

Due times count from the previous step's due time (the first from enrolment), not from when it
was sent: a sequence resumed after a pause sends every step that fell due at once, in order, and
the later ones keep their schedule.

Triggers arrive as the inbox's hooks (a conversation started, a contact's message), and from comment
automations (`enroll_for_automation`). A paused sequence enrols no one by a trigger and sends
nothing: its active enrolments have no `next_attempt_at` until it is resumed.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from peewee import fn

from kit import clock, ids, matching
from kit.errors import Conflict, FieldProblem, NotFound, ValidationFailed
from kit.pagination import Page, paginate
from kit.shapes import button_problems
from platforms import registry
from platforms.inbound import InboundEvent
from service.accounts import adapters
from service.accounts import ops as accounts
from service.common import audit, events, idempotency
from service.engine import core as engine
from service.identity.auth import Actor
from service.inbox import templates
from service.sequences import work
from service.sequences.shapes import Enrollment as EnrollmentRecord
from service.sequences.shapes import Sequence as SequenceRecord
from service.sequences.shapes import SequenceDeleted, Step
from storage.db import db
from storage.models import Account, CommentAutomation, Conversation, Enrollment, Message, Sequence

log = logging.getLogger("switchboard.sequences")

# How long the next step waits for the previous step's message to leave `pending`/`sending`.


# -- reading -----------------------------------------------------------------------------------
def get_row(*, actor: Actor, sequence_id: str) -> Sequence:
    row = Sequence.get_or_none(Sequence.id == sequence_id, Sequence.workspace == actor.workspace_id,
                               Sequence.deleted_at.is_null())
    if row is None:
        raise NotFound("No sequence with that id.")
    actor.require_profile(row.profile_id)
    return row


def get(*, actor: Actor, sequence_id: str) -> SequenceRecord:
    return SequenceRecord.model_validate(get_row(actor=actor, sequence_id=sequence_id))


def list_sequences(*, actor: Actor, account_id: str | None = None, status: str | None = None,
                   page: int | None = None, limit: int | None = None) -> Page:
    query = Sequence.select().where(Sequence.workspace == actor.workspace_id, Sequence.deleted_at.is_null())
    if actor.profile_ids is not None:
        query = query.where(Sequence.profile.in_(sorted(actor.profile_ids)))
    if account_id is not None:
        query = query.where(Sequence.account == accounts.get_row(actor=actor, account_id=account_id).id)
    if status is not None:
        query = query.where(Sequence.status == status)
    return paginate(query.order_by(Sequence.created_at, Sequence.id), page=page, limit=limit, record=SequenceRecord)


def list_enrollments(*, actor: Actor, sequence_id: str, page: int | None = None, limit: int | None = None) -> Page:
    """A sequence's enrolments, oldest first."""
    row = get_row(actor=actor, sequence_id=sequence_id)
    query = Enrollment.select().where(Enrollment.sequence == row.id).order_by(Enrollment.enrolled_at, Enrollment.id)
    return paginate(query, page=page, limit=limit, record=EnrollmentRecord)


def step_messages(*, actor: Actor, sequence_id: str, message_ids: list[str]) -> dict[str, str]:
    """What became of the messages a sequence's steps handed to sending (a step's history says
    `queued`; its message says `sent`, `delivered`, `read` or `failed` since), by message id."""
    row = get_row(actor=actor, sequence_id=sequence_id)
    found = Message.select(Message.id, Message.status).join(Conversation).where(
        Message.id.in_(message_ids), Conversation.account == row.account_id)
    return {message.id: str(message.status) for message in found}


ENROLLMENT_STATUSES = ("active", "completed", "stopped", "cancelled")


def enrollment_counts(*, actor: Actor, sequence_ids: list[str]) -> dict[str, dict[str, int]]:
    """How many enrolments each sequence has in each status (a sequence's stats), in one query;
    sequences outside the actor's reach count nothing."""
    reachable = [row.id for row in Sequence.select(Sequence.id).where(
        Sequence.id.in_(sequence_ids), Sequence.workspace == actor.workspace_id,
        *([Sequence.profile.in_(sorted(actor.profile_ids))] if actor.profile_ids is not None else []))]
    counts = {sequence_id: dict.fromkeys(ENROLLMENT_STATUSES, 0) for sequence_id in reachable}
    if reachable:
        query = (Enrollment.select(Enrollment.sequence, Enrollment.status, fn.COUNT(Enrollment.id))
                 .where(Enrollment.sequence.in_(reachable)).group_by(Enrollment.sequence, Enrollment.status))
        rows: Any = query.tuples()
        for sequence_id, status, count in rows:
            counts[sequence_id][status] = int(count)
    return counts


# -- writing -----------------------------------------------------------------------------------
def _validate(account: Account, *, trigger: str, automation_id: str | None, steps: list[Step]) -> None:
    """The rules that need the account: one 422 naming every field at fault."""
    capabilities = adapters.adapter(account.platform).capabilities
    problems: list[FieldProblem] = []
    if not capabilities.dm:
        problems.append(FieldProblem("accountId", f"{account.platform} has no direct messages"))
    elif capabilities.conversation_kind != "direct":
        # YouTube's conversations are public comment threads: the same reply under many of them is
        # not a direct message, it is spam everyone sees.
        problems.append(FieldProblem("accountId", f"{account.platform} conversations are public comment threads, "
                                                  "not direct messages"))
    if trigger == "comment_automation":
        if automation_id is None:
            problems.append(FieldProblem("automationId", "is required with trigger comment_automation"))
        elif not CommentAutomation.select().where(CommentAutomation.id == automation_id,
                                                  CommentAutomation.account == account.id).exists():
            problems.append(FieldProblem("automationId", "must be a comment automation on the sequence's account"))
    elif automation_id is not None:
        problems.append(FieldProblem("automationId", "is only used with trigger comment_automation"))
    if trigger == "story_reply" and not registry.declared(account.platform).inbox_rules.story_replies:
        problems.append(FieldProblem("trigger", f"{account.platform} has no story replies"))
    for index, step in enumerate(steps):
        problems += button_problems(step.button_label, step.button_url, label_field=f"steps[{index}].buttonLabel",
                                    url_field=f"steps[{index}].buttonUrl")
        if (step.text is None) == (step.template is None):
            problems.append(FieldProblem(f"steps[{index}].text", "give text or template, not both" if step.text
                                         else "is required without template"))
        if step.template is not None and step.button_label is not None:
            problems.append(FieldProblem(f"steps[{index}].buttonLabel", "a template message takes no button"))
        limit = capabilities.dm_text_limit
        if limit is not None and step.text is not None and len(step.text) > limit:
            problems.append(FieldProblem(f"steps[{index}].text", f"must be at most {limit} characters on "
                                                                 f"{account.platform}"))
    if problems:
        raise ValidationFailed("Some fields are not valid.", details=problems)


def _stored_steps(steps: list[Step]) -> list[dict[str, Any]]:
    return [step.model_dump() for step in steps]


def _check_templates(actor: Actor, account_id: str, steps: list[Step] | None) -> None:
    """Steps' WhatsApp templates, checked live against the account's approved ones, before any
    write transaction (it waits on the network)."""
    named = [(f"steps[{n}].template", templates.as_dict(step.template)) for n, step in enumerate(steps or [])
             if step.template is not None]
    if not named:
        return
    with db.atomic():
        account = accounts.get_row(actor=actor, account_id=account_id)
    found = templates.problems(account, named)  # type: ignore[arg-type]
    if found:
        raise ValidationFailed("Some fields are not valid.", details=found)


def create(*, actor: Actor, account_id: str, steps: list[Step], **values: Any) -> SequenceRecord:
    """A new sequence (see `_create`); steps' templates are checked with the platform first."""
    _check_templates(actor, account_id, steps)
    with db.atomic():
        made = _create(actor=actor, account_id=account_id, steps=steps, **values)
        idempotency.attach(made.id)  # a retry under the same key finds it, never makes a second
        return made


def update(*, actor: Actor, sequence_id: str, **changes: Any) -> SequenceRecord:
    """Change a sequence (see `_update`); new steps' templates are checked with the platform first."""
    if changes.get("steps"):
        with db.atomic():
            account_id = get_row(actor=actor, sequence_id=sequence_id).account_id
        _check_templates(actor, account_id, changes["steps"])
    with db.atomic():
        return _update(actor=actor, sequence_id=sequence_id, **changes)


def _create(
    *,
    actor: Actor,
    account_id: str,
    name: str,
    trigger: str,
    steps: list[Step],
    automation_id: str | None = None,
    keywords: list[str] | None = None,
    match_type: str = "contains",
    stop_on_reply: bool = False,
    status: str = "active",
) -> SequenceRecord:
    account = accounts.get_row(actor=actor, account_id=account_id)
    actor.require_write()
    _validate(account, trigger=trigger, automation_id=automation_id, steps=steps)
    moment = clock.now()
    row = Sequence.create(
        id=ids.new_id("seq"), workspace=account.workspace_id, profile=account.profile_id, account=account.id,
        name=name, trigger=trigger, automation_id=automation_id, keywords=list(keywords or []),
        match_type=match_type, stop_on_reply=stop_on_reply, steps=_stored_steps(steps), status=status,
        created_at=moment, updated_at=moment,
    )
    audit.record(actor, "sequence.created", target=("sequence", row.id))
    return SequenceRecord.model_validate(row)


def _update(*, actor: Actor, sequence_id: str, **changes: Any) -> SequenceRecord:
    """Change the fields given; the others keep their value. Pausing holds every active enrolment;
    resuming hands out at once those whose next step fell due meanwhile."""
    row = get_row(actor=actor, sequence_id=sequence_id)
    actor.require_write()
    account = Account.get_by_id(row.account_id)
    trigger = changes.get("trigger", row.trigger)
    # A trigger moved away from comment_automation drops its automation, unless one is given.
    automation_id = changes.get("automation_id", row.automation_id if trigger == "comment_automation" else None)
    steps: list[Step] | None = changes.get("steps")
    _validate(account, trigger=trigger, automation_id=automation_id, steps=steps or [])
    before = row.status
    row.trigger, row.automation_id = trigger, automation_id
    for name in ("name", "keywords", "match_type", "stop_on_reply", "status"):
        if name in changes:
            setattr(row, name, changes[name])
    if steps is not None:
        row.steps = _stored_steps(steps)
    row.updated_at = clock.now()
    row.save()
    if before == "active" and row.status == "paused":
        _hold(row)
    elif before == "paused" and row.status == "active":
        _release(row)
    audit.record(actor, "sequence.updated", target=("sequence", row.id),
                 details={"status": row.status} if before != row.status else None)
    return SequenceRecord.model_validate(row)


def _hold(sequence: Sequence) -> None:
    Enrollment.update(next_attempt_at=None, nudged_at=None, updated_at=clock.now()).where(
        Enrollment.sequence == sequence.id, Enrollment.status == "active").execute()


def _release(sequence: Sequence) -> None:
    moment = clock.now()
    Enrollment.update(next_attempt_at=Enrollment.next_step_at, nudged_at=None, updated_at=moment).where(
        Enrollment.sequence == sequence.id, Enrollment.status == "active").execute()
    due = [row.id for row in Enrollment.select(Enrollment.id).where(
        Enrollment.sequence == sequence.id, Enrollment.status == "active", Enrollment.next_step_at <= moment)]
    engine.nudge_after_commit(work.ENROLLMENT_WORK, due)


def delete(*, actor: Actor, sequence_id: str) -> SequenceDeleted:
    """The sequence goes from the API; its active enrolments are cancelled (no further step)."""
    row = get_row(actor=actor, sequence_id=sequence_id)
    actor.require_write()
    moment = clock.now()
    cancelled = Enrollment.update(
        status="cancelled", reason="sequence_deleted", ended_at=moment, next_step_at=None, next_attempt_at=None,
        updated_at=moment,
    ).where(Enrollment.sequence == row.id, Enrollment.status == "active").execute()
    row.deleted_at = moment
    row.updated_at = moment
    row.save()
    audit.record(actor, "sequence.deleted", target=("sequence", row.id), details={"name": row.name})
    return SequenceDeleted(id=row.id, deleted=True, cancelled_enrollments=int(cancelled))


def enroll(*, actor: Actor, sequence_id: str, conversation_id: str | None = None) -> EnrollmentRecord:
    """Enrol a conversation by hand (any trigger; a paused sequence holds it until resumed). A
    conversation with an active enrolment in this sequence gets that enrolment back."""
    if conversation_id is None:
        raise ValidationFailed.field("conversationId", "is required (in the query or the JSON body)")
    row = get_row(actor=actor, sequence_id=sequence_id)
    actor.require_write()
    conversation = Conversation.get_or_none(Conversation.id == conversation_id,
                                            Conversation.workspace == actor.workspace_id)
    if conversation is None or conversation.account_id != row.account_id:
        raise ValidationFailed.field("conversationId", "must be a conversation on the sequence's account")
    enrollment, made = _enroll(row, conversation)
    if made:
        audit.record(actor, "sequence.enrolled", target=("sequence", row.id),
                     details={"conversationId": conversation.id, "enrollmentId": enrollment.id})
    return EnrollmentRecord.model_validate(enrollment)


def _enroll(sequence: Sequence, conversation: Conversation) -> tuple[Enrollment, bool]:
    """The conversation's active enrolment in the sequence, made when it has none (`True`). The
    partial unique index makes concurrent enrolments of one conversation meet at the database."""
    existing = Enrollment.get_or_none(Enrollment.sequence == sequence.id, Enrollment.conversation == conversation.id,
                                      Enrollment.status == "active")
    if existing is not None:
        return existing, False
    moment = clock.now()
    first_due = moment + dt.timedelta(minutes=int(sequence.steps[0]["delay_minutes"]))
    held = sequence.status != "active"
    new_id = ids.new_id("enr")
    inserted = list(
        Enrollment.insert(
            id=new_id, sequence=sequence.id, conversation=conversation.id, status="active", current_step=0,
            next_step_at=first_due, history=[], enrolled_at=moment, attempts=0,
            next_attempt_at=None if held else first_due, created_at=moment, updated_at=moment,
        ).on_conflict_ignore().returning(Enrollment.id).execute()
    )
    if not inserted:
        winner = Enrollment.get_or_none(Enrollment.sequence == sequence.id,
                                        Enrollment.conversation == conversation.id, Enrollment.status == "active")
        if winner is None:
            raise Conflict("The enrolment changed while it was being made; try again.")
        return winner, False
    enrollment = Enrollment.get_by_id(new_id)
    events.emit(workspace_id=sequence.workspace_id, type="sequence.enrolled",
                data=EnrollmentRecord.model_validate(enrollment).dump())
    if not held and first_due <= moment:
        engine.nudge_after_commit(work.ENROLLMENT_WORK, [new_id])
    return enrollment, True


# -- triggers ----------------------------------------------------------------------------------
def _triggered(account_id: str, trigger: str) -> list[Sequence]:
    return list(Sequence.select().where(Sequence.account == account_id, Sequence.trigger == trigger,
                                        Sequence.status == "active", Sequence.deleted_at.is_null())
                .order_by(Sequence.created_at, Sequence.id))


def conversation_started(conversation: Conversation, how: str) -> None:
    """The inbox's hook: a new conversation on the account, inbound or through the API. One opened
    for a comment automation's private reply enrols through `comment_automation` sequences instead."""
    if how == "comment":
        return
    for sequence in _triggered(conversation.account_id, "conversation_started"):
        _enroll(sequence, conversation)


def contact_wrote(conversation: Conversation, message: Message, event: InboundEvent) -> None:
    """The inbox's hook, in the transaction that stores a contact's message: it stops the enrolments
    that stop on a reply, then enrols a story reply in the sequences it matches."""
    _stop_on_reply(conversation, message)
    if event.kind != "story_reply":
        return
    for sequence in _triggered(conversation.account_id, "story_reply"):
        if not sequence.keywords or matching.matches(event.text, sequence.keywords, sequence.match_type):
            _enroll(sequence, conversation)


def enroll_for_automation(conversation: Conversation, automation_id: str) -> None:
    """A comment automation sent its DM into `conversation`: enrol it in the active sequences that
    name the automation."""
    for sequence in _triggered(conversation.account_id, "comment_automation"):
        if sequence.automation_id == automation_id:
            _enroll(sequence, conversation)


def _stop_on_reply(conversation: Conversation, message: Message) -> None:
    # Enrolments made by this very message (its conversation just started) are not stopped by it:
    # they were made after it was stored.
    stored_at = message.updated_at
    rows = (Enrollment.select(Enrollment).join(Sequence)
            .where(Enrollment.conversation == conversation.id, Enrollment.status == "active",
                   Sequence.stop_on_reply == True, Enrollment.enrolled_at < stored_at))  # noqa: E712
    moment = clock.now()
    for enrollment in list(rows):
        changed = Enrollment.update(
            status="stopped", reason="replied", ended_at=moment, next_step_at=None, next_attempt_at=None,
            updated_at=moment,
        ).where(Enrollment.id == enrollment.id, Enrollment.status == "active").execute()
        if changed:
            work.announce_end(Enrollment.get_by_id(enrollment.id), conversation.workspace_id)
