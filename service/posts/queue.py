"""Each account's posting queue: weekly slots, and the next free one for a post added to the queue.

A queue is a list of `{weekday, time}` read in the queue's time zone (a slot at 09:00 Europe/Paris
stays at 09:00 local across a DST change). `addToQueue` gives each target of a post the first slot
after now that no queued target of the same account holds, so two posts never share a slot of one
account: the slots are taken inside the post's write transaction, with the queue's row locked on
PostgreSQL (SQLite has one writer at a time already), so two concurrent posts cannot both see one
slot free.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from kit import clock, scheduling
from kit.errors import FieldProblem, ValidationFailed
from service.accounts import ops as accounts
from service.common import audit
from service.identity.auth import Actor
from service.posts.shapes import PostingQueueRecord
from storage.db import is_postgres
from storage.models import Account, PostingQueue, PostTarget

# How far ahead a free slot is looked for: a queue with one weekly slot and a year of posts in it.
HORIZON_DAYS = 7 * 53
SHOWN_NEXT = 5


def _sorted_slots(slots: list[Any]) -> list[dict[str, Any]]:
    unique = {(int(s["weekday"]), str(s["time"])) for s in slots}
    return [{"weekday": weekday, "time": time} for weekday, time in sorted(unique)]


def _taken(account_id: str, after: dt.datetime) -> set[dt.datetime]:
    rows = PostTarget.select(PostTarget.next_attempt_at).where(
        PostTarget.account == account_id, PostTarget.status == "queued", PostTarget.next_attempt_at > after)
    return {row.next_attempt_at.replace(second=0, microsecond=0) for row in rows if row.next_attempt_at is not None}


def free_slots(queue: PostingQueue, *, count: int, taken: set[dt.datetime] | None = None) -> list[dt.datetime]:
    """The next `count` slot instants (naive UTC) after now that no queued target of the account holds."""
    tz = scheduling.zone(queue.timezone)
    slots = queue.slots or []
    if tz is None or not slots:
        return []
    moment = clock.now()
    taken = _taken(queue.account_id, moment) if taken is None else taken
    by_weekday: dict[int, list[dt.time]] = {}
    for slot in _sorted_slots(slots):
        hours, minutes = slot["time"].split(":")
        by_weekday.setdefault(slot["weekday"], []).append(dt.time(int(hours), int(minutes)))
    today = moment.replace(tzinfo=dt.UTC).astimezone(tz).date()
    found: list[dt.datetime] = []
    for offset in range(HORIZON_DAYS):
        day = today + dt.timedelta(days=offset)
        for at in by_weekday.get(day.isoweekday(), []):
            instant = scheduling.wall_time_to_utc(dt.datetime.combine(day, at), tz)
            if instant > moment and instant not in taken:
                found.append(instant)
                if len(found) == count:
                    return found
    return found


def _record(account_id: str, queue: PostingQueue | None) -> PostingQueueRecord:
    if queue is None:
        return PostingQueueRecord.model_validate(dict(account_id=account_id, timezone="UTC", slots=[], next_slots=[]))
    return PostingQueueRecord.model_validate(dict(
        account_id=account_id, timezone=queue.timezone, slots=_sorted_slots(queue.slots or []),
        next_slots=free_slots(queue, count=SHOWN_NEXT)))


def get(*, actor: Actor, account_id: str) -> PostingQueueRecord:
    account = accounts.get_row(actor=actor, account_id=account_id)
    return _record(account.id, PostingQueue.get_or_none(PostingQueue.account == account.id))


def put(*, actor: Actor, account_id: str, timezone: str, slots: list[Any]) -> PostingQueueRecord:
    actor.require_write()
    account = accounts.get_row(actor=actor, account_id=account_id)
    if scheduling.zone(timezone) is None:
        raise ValidationFailed.field("timezone", "must be an IANA time zone name, e.g. Europe/Paris")
    values = _sorted_slots([{"weekday": s.weekday, "time": s.time} for s in slots])
    moment = clock.now()
    queue = PostingQueue.get_or_none(PostingQueue.account == account.id)
    if queue is None:
        queue = PostingQueue.create(account=account.id, workspace=account.workspace_id, timezone=timezone,
                                    slots=values, created_at=moment, updated_at=moment)
    else:
        queue.timezone, queue.slots, queue.updated_at = timezone, values, moment
        queue.save()
    audit.record(actor, "queue.updated", target=("account", account.id), details={"slots": len(values)})
    return _record(account.id, queue)


# How a refusal of `addToQueue` begins, so a front door can say it its own way (a link to the queue).
NO_FREE_SLOT = "has no posting queue with a free slot"


def claim_slots(accounts_: list[Account]) -> dict[str, dt.datetime]:
    """Per account, the next free slot of its queue, in the caller's write transaction. An account
    without a queue (or with no slot within a year) → `ValidationFailed` naming it."""
    query = PostingQueue.select().where(PostingQueue.account.in_([a.id for a in accounts_]))
    if is_postgres():
        query = query.for_update()  # a concurrent post waits here, then sees this one's targets
    queues = {q.account_id: q for q in query}
    chosen: dict[str, dt.datetime] = {}
    problems = []
    for index, account in enumerate(accounts_):
        queue = queues.get(account.id)
        free = free_slots(queue, count=1) if queue is not None else []
        if not free:
            problems.append(FieldProblem(f"targets[{index}].accountId", NO_FREE_SLOT + ": "
                                         "set its slots with PUT /v1/accounts/{id}/queue"))
        else:
            chosen[account.id] = free[0]
    if problems:
        raise ValidationFailed("Some accounts have no posting queue.", details=problems)
    return chosen
