"""Broadcasts: one message to many conversations of one account, for `/v1` and the MCP tools.

The life of a broadcast::

    draft ──(scheduledFor or sendNow)──> scheduled ──(due: the engine claims it)──> sending
    sending ──(every recipient's message finished)──> completed
    scheduled | sending ──(cancel)──> cancelled          sending ──(account disconnected)──> failed

A scheduled broadcast is a work row of the engine (`START_WORK`, ready while `scheduled` with its
`next_attempt_at` the due instant): the sweeper hands it out on the first scheduler tick after it
falls due, `sendNow` nudges it as soon as the request commits, and the engine's conditional claim
means two workers never start one broadcast. Starting resolves the audience (conversationIds, else
activeWithinDays on the contact's last message, else every conversation of the account) and fans it
out in chunks of `work.CHUNK` conversations, each in its own short transaction that writes the recipient
rows and their outbound messages (`outbound.queue_outbound_many`, one insert: every DM then goes the
inbox's way, at most once, at the account's pace, `unknown` when a worker died during the call) and
advances a cursor: a worker that dies mid fan-out leaves the rest to the next claim, which continues
from the cursor. The messages are nudged in groups after each chunk commits, never a task each.

A recipient outside the platform's messaging window is `skipped` (`outside_messaging_window`) by a
pre-flight check, before any message exists. Each recipient then follows its message (completion.py):
a sent message's recipient moves in the very statement that records the outcome (`recipient_sent`,
a rider of the outbound finish: no transaction a message on PostgreSQL), and the finish listener
`message_finished` moves it in the transaction where the message becomes `failed` or `unknown` (or,
through the inbox's receipts, when WhatsApp reports a sent message undelivered). The fan-out hands
its messages to workers in groups (`work.SEND_WORK`); once a group's outcomes are committed, one
read finds whether its broadcast has none pending after the fan-out, and completes it
(`broadcast.completed`); a failed or unknown outcome checks at once. The counts are read from the
recipients (an index on broadcast and status), so they are exact at every read and no finishing
message writes to the broadcast's own row, which would make every send of a broadcast queue behind
one row lock. A message sent outside such a group (a retry the sweeper handed out again), or a
worker that stopped between its group's last send and the check, leaves the completion to the
scheduler's tick job `complete_finished`.

Cancelling deletes the messages of the broadcast that no worker has claimed yet (they were never
sent, so they leave no trace in the conversations) and marks their recipients `skipped` with reason
`cancelled`; a message already in a worker's hands finishes, and its recipient and the counts follow
it as usual.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from kit import clock, ids
from kit.errors import Conflict, FieldProblem, NotFound, ValidationFailed
from kit.pagination import Page, paginate, records, window
from kit.scheduling import due_at
from kit.shapes import button_problems
from service.accounts import adapters
from service.accounts import ops as accounts
from service.broadcasts import work
from service.broadcasts.completion import NO_COUNTS, as_dict, counts_of, record
from service.broadcasts.shapes import Audience, BroadcastDeleted
from service.broadcasts.shapes import Broadcast as BroadcastRecord
from service.broadcasts.shapes import Recipient as RecipientRecord
from service.common import audit, idempotency
from service.engine import core as engine
from service.identity.auth import Actor
from service.inbox import templates
from storage import hot
from storage.db import db
from storage.models import Account, Broadcast, BroadcastRecipient, Conversation

log = logging.getLogger("switchboard.broadcasts")

EDITABLE = ("draft", "scheduled")

CANCELLED = "cancelled"


def _get_row(*, actor: Actor, broadcast_id: str) -> Broadcast:
    row = Broadcast.get_or_none(Broadcast.id == broadcast_id, Broadcast.workspace == actor.workspace_id)
    if row is None:
        raise NotFound("No broadcast with that id.")
    actor.require_profile(row.profile_id)
    return row


# -- validation ----------------------------------------------------------------------------------
def _check(account: Account, row: Broadcast, *, scheduled_input: str | None,
           fields: set[str]) -> tuple[dt.datetime | None, list[FieldProblem]]:
    """Every rule of a broadcast as it would be stored; returns when it is due (None: a draft).

    `fields` names what the caller sent: a kept schedule is not read again (it may have come
    closer to now), a new `scheduledFor` or `timezone` is."""
    problems: list[FieldProblem] = []
    capabilities = adapters.adapter(account.platform).capabilities
    if bool(row.text) == bool(row.template):
        message = "give text or template, not both" if row.text else "is required without template"
        problems.append(FieldProblem("text", message))
    if row.template and row.button_label:
        problems.append(FieldProblem("buttonLabel", "a template message takes no button"))
    if not capabilities.dm:
        problems.append(FieldProblem("accountId", f"{account.platform} has no direct messages"))
    elif capabilities.conversation_kind != "direct":
        # YouTube's conversations are public comment threads: the same reply under many of them is
        # not a direct message, it is spam everyone sees.
        problems.append(FieldProblem("accountId", f"{account.platform} conversations are public comment threads, "
                                                  "not direct messages"))
    elif capabilities.dm_text_limit is not None and len(row.text or "") > capabilities.dm_text_limit:
        problems.append(FieldProblem("text", f"must be at most {capabilities.dm_text_limit} characters on "
                                             f"{account.platform}"))
    problems += button_problems(row.button_label, row.button_url)
    if row.conversation_ids:
        problems += _foreign_conversations(account.id, row.conversation_ids)
    due: dt.datetime | None = None
    if row.send_now and scheduled_input is not None:
        message = "give scheduledFor or sendNow, not both"
        problems += [FieldProblem("scheduledFor", message), FieldProblem("sendNow", message)]
    elif {"scheduled_for", "timezone"} & fields:
        due, found = due_at(scheduled_input, row.timezone)
        problems += found
    else:
        due = row.scheduled_for
    if row.send_now and not problems:
        due = clock.now()
    return due, problems


def _foreign_conversations(account_id: str, conversation_ids: list[str]) -> list[FieldProblem]:
    """Ids that are no conversation of this account, by position; never whether they exist elsewhere."""
    known: set[str] = set()
    unique = list(dict.fromkeys(conversation_ids))
    for start in range(0, len(unique), 1000):
        part = unique[start:start + 1000]
        query = Conversation.select(Conversation.id).where(Conversation.account == account_id,
                                                           Conversation.id.in_(part))
        known |= {found.id for found in query}
    foreign = [n for n, value in enumerate(conversation_ids) if value not in known]
    problems = [FieldProblem(f"audience.conversationIds[{n}]", "is not a conversation of this broadcast's account")
                for n in foreign[:MAX_LISTED_PROBLEMS]]
    if len(foreign) > MAX_LISTED_PROBLEMS:  # the answer stays small: 10,000 unknown ids are not 10,000 details
        problems.append(FieldProblem("audience.conversationIds", f"{len(foreign) - MAX_LISTED_PROBLEMS} more ids "
                                     "are not conversations of this broadcast's account"))
    return problems


MAX_LISTED_PROBLEMS = 20


def _apply(row: Broadcast, values: dict[str, Any]) -> None:
    for name, value in values.items():
        if name == "audience":
            audience = value if isinstance(value, Audience) or value is None else Audience.model_validate(value)
            row.active_within_days = audience.active_within_days if audience else None
            ids_given = audience.conversation_ids if audience else None
            row.conversation_ids = list(dict.fromkeys(ids_given)) if ids_given else None
        elif name == "scheduled_for":
            row.scheduled_for = None  # set from the value read (`_check`) when it is scheduled
        elif name == "send_now":
            row.send_now = bool(value)
        else:
            setattr(row, name, value)


def _schedule(row: Broadcast, due: dt.datetime | None) -> None:
    """Draft without a due time; else a ready engine row (the caller writes it through the engine)."""
    row.status = "scheduled" if due is not None else "draft"
    row.next_attempt_at = due
    if due is not None and not row.send_now:
        row.scheduled_for = due


# -- the operations ------------------------------------------------------------------------------
def _template_problems(actor: Actor, account_id: str, template: Any) -> None:
    """A WhatsApp template checked live against the account's approved ones, before any transaction."""
    with db.atomic():
        account = accounts.get_row(actor=actor, account_id=account_id)
    found = templates.problems(account, [("template", template)])
    if found:
        raise ValidationFailed("Some fields are not valid.", details=found)


def create(*, actor: Actor, account_id: str, name: str, text: str | None = None, template: Any = None,
           **values: Any) -> BroadcastRecord:
    """A new broadcast (see `_create`); a template is checked with the platform first, outside the
    write transaction."""
    template = templates.as_dict(template)
    if template is not None:
        _template_problems(actor, account_id, template)
    with db.atomic():
        made = _create(actor=actor, account_id=account_id, name=name, text=text or "", template=template, **values)
        # Under an Idempotency-Key, the broadcast is the key's: a retry after a crash finds it.
        idempotency.attach(made.id)
        return made


def update(*, actor: Actor, broadcast_id: str, **values: Any) -> BroadcastRecord:
    """Change a broadcast (see `_update`); a new template is checked with the platform first."""
    if "template" in values:
        values["template"] = templates.as_dict(values["template"])
        if values["template"] is not None:
            if "text" not in values:
                values["text"] = ""  # the template replaces the text
            with db.atomic():
                account_id = _get_row(actor=actor, broadcast_id=broadcast_id).account_id
            _template_problems(actor, account_id, values["template"])
    elif values.get("text"):
        values["template"] = None  # text replaces a template
    with db.atomic():
        return _update(actor=actor, broadcast_id=broadcast_id, **values)


def _create(
    *,
    actor: Actor,
    account_id: str,
    name: str,
    text: str,
    template: dict[str, Any] | None = None,
    button_label: str | None = None,
    button_url: str | None = None,
    audience: Audience | None = None,
    scheduled_for: str | None = None,
    timezone: str | None = None,
    send_now: bool | None = None,
) -> BroadcastRecord:
    """A new broadcast: `draft` without `scheduledFor` or `sendNow`, else `scheduled` (sendNow: due now)."""
    row, due = _unsaved(actor=actor, account_id=account_id, name=name, text=text, template=template,
                        button_label=button_label, button_url=button_url, audience=audience,
                        scheduled_for=scheduled_for, timezone=timezone, send_now=send_now)
    _schedule(row, due)
    row.save(force_insert=True)
    audit.record(actor, "broadcast.created", target=("broadcast", row.id), details={"status": row.status})
    # Through the engine: a new row is one more ready row, nudged at once when already due.
    engine.restart(work.START_WORK, [row.id], status=row.status, next_attempt_at=row.next_attempt_at, nudge=True)
    return record(row)


def _unsaved(*, actor: Actor, account_id: str, name: str, text: str, template: dict[str, Any] | None,
             button_label: str | None, button_url: str | None, audience: Audience | None,
             scheduled_for: str | None, timezone: str | None,
             send_now: bool | None) -> tuple[Broadcast, dt.datetime | None]:
    """The broadcast `_create` would store, every rule checked (a refusal raised), not yet saved."""
    account = accounts.get_row(actor=actor, account_id=account_id)
    actor.require_write()
    moment = clock.now()
    row = Broadcast(
        id=ids.new_id("bc"), workspace=account.workspace_id, profile=account.profile_id, account=account.id,
        status="draft", fanned_out=False, attempts=0,
        created_at=moment, updated_at=moment, scheduled_for=None, timezone=None, send_now=False,
    )
    values = {"name": name, "text": text, "template": template, "button_label": button_label, "button_url": button_url,
              "audience": audience, "scheduled_for": scheduled_for, "timezone": timezone, "send_now": send_now}
    _apply(row, values)
    due, problems = _check(account, row, scheduled_input=scheduled_for,
                           fields={k for k, v in values.items() if v is not None})
    if problems:
        raise ValidationFailed("Some fields are not valid.", details=problems)
    if due is not None and account.status != "connected":
        raise Conflict("The account is disconnected.")
    return row, due


def check(*, actor: Actor, account_id: str, name: str, text: str | None = None, template: Any = None,
          button_label: str | None = None, button_url: str | None = None, audience: Audience | None = None,
          scheduled_for: str | None = None, timezone: str | None = None, send_now: bool | None = None) -> None:
    """Every rule `create` applies (but the platform's live template check), nothing saved: a
    preview that says a broadcast can go is one that `create` then takes."""
    with db.atomic():
        _unsaved(actor=actor, account_id=account_id, name=name, text=text or "", template=templates.as_dict(template),
                 button_label=button_label, button_url=button_url, audience=audience,
                 scheduled_for=scheduled_for, timezone=timezone, send_now=send_now)


def list_broadcasts(
    *, actor: Actor, status: str | None = None, account_id: str | None = None, page: int | None = None,
    limit: int | None = None,
) -> Page:
    """The workspace's broadcasts, newest first."""
    query = Broadcast.select().where(Broadcast.workspace == actor.workspace_id)
    if actor.profile_ids is not None:
        query = query.where(Broadcast.profile.in_(list(actor.profile_ids)))
    if account_id is not None:
        account = Account.get_or_none(Account.id == account_id, Account.workspace == actor.workspace_id)
        if account is not None:
            actor.require_profile(account.profile_id)
        query = query.where(Broadcast.account == account_id)
    if status is not None:
        query = query.where(Broadcast.status == status)
    page, limit, offset = window(page, limit)
    total = query.order_by().count()
    rows = list(query.order_by(Broadcast.created_at.desc(), Broadcast.id.desc()).paginate(page, limit)) \
        if offset < total else []
    counts = counts_of([row.id for row in rows])
    found = records(BroadcastRecord, [as_dict(row, counts.get(row.id, NO_COUNTS)) for row in rows])
    return Page(BroadcastRecord, found, page, limit, total)


def get(*, actor: Actor, broadcast_id: str) -> BroadcastRecord:
    return record(_get_row(actor=actor, broadcast_id=broadcast_id))


def _update(*, actor: Actor, broadcast_id: str, **values: Any) -> BroadcastRecord:
    """Change a `draft` or `scheduled` broadcast (else 409): omitted fields keep their value, `null`
    clears one. The result is `scheduled` when it has a time or `sendNow`, else `draft`."""
    row = _get_row(actor=actor, broadcast_id=broadcast_id)
    actor.require_write()
    if row.status not in EDITABLE:
        raise Conflict(f"A {row.status} broadcast cannot be changed.")
    account = Account.get_by_id(row.account_id)
    if "scheduled_for" in values:
        scheduled_input = values["scheduled_for"]
        if scheduled_input is not None and "send_now" not in values:
            values["send_now"] = False  # a new time replaces an earlier "now"
    elif values.get("send_now"):
        scheduled_input = None  # "now" replaces the time it had
        values["scheduled_for"] = None
    else:
        scheduled_input = clock.iso(row.scheduled_for)  # kept (read again only with a new timezone)
    _apply(row, values)
    due, problems = _check(account, row, scheduled_input=scheduled_input, fields=set(values))
    if problems:
        raise ValidationFailed("Some fields are not valid.", details=problems)
    if due is not None and account.status != "connected":
        raise Conflict("The account is disconnected.")
    _schedule(row, due)
    row.updated_at = clock.now()
    # Conditional on the status read above: a worker that claimed it meanwhile made it `sending`.
    editable = ", ".join(f"'{status}'" for status in EDITABLE)
    changed = engine.restart(
        work.START_WORK, [row.id], status=row.status, next_attempt_at=row.next_attempt_at, nudge=True,
        where=f"status IN ({editable})", unclaimed=True,
        name=row.name, text=row.text, template=Broadcast.template.db_value(row.template),
        button_label=row.button_label, button_url=row.button_url,
        active_within_days=row.active_within_days,
        conversation_ids=Broadcast.conversation_ids.db_value(row.conversation_ids),
        scheduled_for=row.scheduled_for if row.status == "scheduled" and not row.send_now else None,
        timezone=row.timezone, send_now=row.send_now,
    )
    if not changed:
        raise Conflict("The broadcast started sending meanwhile; it cannot be changed.")
    # Asked to go out now: the moment a person would look for in the log.
    action = "broadcast.started" if row.send_now and row.status == "scheduled" else "broadcast.updated"
    audit.record(actor, action, target=("broadcast", row.id), details={"status": row.status})
    return record(Broadcast.get_by_id(row.id))


def send_now(*, actor: Actor, broadcast_id: str) -> BroadcastRecord:
    """Start a `draft` or `scheduled` broadcast now (within a scheduler tick)."""
    return update(actor=actor, broadcast_id=broadcast_id, send_now=True, scheduled_for=None)


def cancel(*, actor: Actor, broadcast_id: str) -> BroadcastRecord:
    """`scheduled` or `sending` → `cancelled` (again on a cancelled one: the same answer; else 409).
    Messages no worker has claimed are deleted and their recipients `skipped` (`cancelled`)."""
    row = _get_row(actor=actor, broadcast_id=broadcast_id)
    actor.require_write()
    if row.status == "cancelled":
        return record(row)
    if row.status not in ("scheduled", "sending"):
        raise Conflict(f"A {row.status} broadcast cannot be cancelled.")
    moment = clock.now()
    # The broadcast's row first (the fan-out and the finish listener lock it before recipients).
    changed = engine.restart(work.START_WORK, [row.id], status="cancelled", next_attempt_at=None,
                             where="status IN ('scheduled', 'sending')", completed_at=moment)
    if not changed:
        return cancel(actor=actor, broadcast_id=broadcast_id)  # it moved meanwhile: answer for where it is
    audit.record(actor, "broadcast.cancelled", target=("broadcast", row.id))
    # A message a worker holds is `sending`, not `pending`: it stays, finishes and is counted.
    hot.run("DELETE FROM message WHERE status = 'pending' AND id IN "
            "(SELECT message_id FROM broadcast_recipient WHERE broadcast_id = ? AND status = 'pending')", (row.id,))
    hot.run("UPDATE broadcast_recipient SET status = 'skipped', reason = ?, message_id = NULL, updated_at = ? "
            "WHERE broadcast_id = ? AND status = 'pending' AND NOT EXISTS "
            "(SELECT 1 FROM message WHERE message.id = broadcast_recipient.message_id)",
            (CANCELLED, moment, row.id))
    return record(Broadcast.get_by_id(row.id))


def delete(*, actor: Actor, broadcast_id: str) -> BroadcastDeleted:
    row = _get_row(actor=actor, broadcast_id=broadcast_id)
    actor.require_write()
    if row.status != "draft":
        raise Conflict(f"Only a draft can be deleted; this broadcast is {row.status}.")
    if not Broadcast.delete().where(Broadcast.id == row.id, Broadcast.status == "draft").execute():
        raise Conflict("The broadcast changed meanwhile; it is no longer a draft.")
    audit.record(actor, "broadcast.deleted", target=("broadcast", row.id), details={"name": row.name})
    return BroadcastDeleted(id=row.id, deleted=True)


def recipients(
    *, actor: Actor, broadcast_id: str, status: str | None = None, page: int | None = None,
    limit: int | None = None,
) -> Page:
    """Who the broadcast targeted and where each stands, in the order of the fan-out."""
    row = _get_row(actor=actor, broadcast_id=broadcast_id)
    query = BroadcastRecipient.select().where(BroadcastRecipient.broadcast == row.id)
    if status is not None:
        query = query.where(BroadcastRecipient.status == status)
    return paginate(query.order_by(BroadcastRecipient.conversation_id), page=page, limit=limit,
                    record=RecipientRecord)


def delete_for_account(account_id: str) -> int:
    """An account's permanent deletion takes its broadcasts and their recipients."""
    mine = Broadcast.select(Broadcast.id).where(Broadcast.account == account_id)
    BroadcastRecipient.delete().where(BroadcastRecipient.broadcast.in_(mine)).execute()
    return int(Broadcast.delete().where(Broadcast.account == account_id).execute())
