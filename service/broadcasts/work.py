"""A broadcast's start and fan-out as a kind of the engine (`START_WORK`).

A due broadcast is claimed, moved to `sending` (`broadcast.started`) and its audience fanned out in
bounded chunks, each one transaction that renews the lease and writes the chunk's recipients with
their outbound messages (each its own at-most-once work of the inbox). At least once: a worker that
dies mid-fan-out leaves its cursor; another takes the broadcast over from there when the lease runs
out. Completion (the last recipient settled) stays with the front doors' module, which the inbox's
finish listener calls.

The fan-out's messages go to workers as `SEND_WORK` groups: each message is sent as any other
(`inbox_work.send`: at most once, at the account's pace), and the group checks once, after its
outcomes are committed, whether its broadcast is complete, instead of every message checking in a
transaction of its own.
"""

from __future__ import annotations

import bisect
from typing import Any

from kit import clock, ids
from kit.errors import Conflict, ValidationFailed
from kit.settings import Settings
from platforms.base import Button
from service.broadcasts import audience, completion
from service.common import audit
from service.engine import core as engine
from service.engine.outcomes import Policy
from service.inbox import outbound
from service.inbox import work as inbox_work
from storage import hot
from storage.db import connection, db
from storage.models import Account, Broadcast, BroadcastRecipient, Conversation

CHUNK = 500  # conversations fanned out per transaction


def start(broadcast_id: str) -> None:
    """The engine's run for a due broadcast: claim it, move it to `sending` (`broadcast.started`) and
    fan its audience out chunk by chunk. A second worker's claim finds it held or started."""
    with connection():
        with db.atomic():
            found = engine.claim(START_WORK, broadcast_id)
            if found is None:
                return
            moment = clock.now()
            started = engine.renew_lease(found, still=("scheduled",), status="sending", started_at=moment)
            if started:
                completion.announce(broadcast_id, "broadcast.started")
                _log_scheduled_start(broadcast_id)
        while True:
            with db.atomic():
                more = _fan_out_chunk(found)
            if not more:
                return


def _log_scheduled_start(broadcast_id: str) -> None:
    """The audit row of a scheduled broadcast that came due: the service started it. One asked to go
    out now already has its row, by whoever asked (`ops.update`)."""
    row = hot.by_id(Broadcast, broadcast_id)
    if row is not None and not row.send_now:
        audit.record(None, "broadcast.started", workspace_id=row.workspace_id, target=("broadcast", row.id),
                     details={"scheduledFor": clock.iso(row.scheduled_for)})


def _fan_out_chunk(found: engine.Claim) -> bool:
    """One bounded transaction of the fan-out: True while conversations remain."""
    moment = clock.now()
    # Lock the broadcast (and renew the lease) first; a cancel or a lost claim ends the fan-out.
    held = engine.renew_lease(found, still=("sending",))
    if not held:
        return False
    row = hot.by_id(Broadcast, found.id)
    account = hot.by_id(Account, row.account_id) if row is not None else None
    if row is None or account is None:
        return False
    if account.status != "connected":
        _fail(found, row, Conflict("The account was disconnected."))
        return False
    if row.conversation_ids:
        # The chosen ids are walked in order here, a chunk's worth at a time: the whole list (up to
        # 10,000 ids) in every chunk's query cost more than the chunk. An id that is no longer a
        # conversation of the account is passed over with its chunk.
        chosen = sorted(set(row.conversation_ids))
        start = bisect.bisect_right(chosen, row.fanout_cursor) if row.fanout_cursor else 0
        part = chosen[start:start + CHUNK]
        query = audience.conversations(account.id, conversation_ids=part, active_within_days=None, since=moment)
        last = start + CHUNK >= len(chosen)
    else:
        query = audience.conversations(account.id, conversation_ids=None, active_within_days=row.active_within_days,
                                       since=row.started_at or moment)
        if row.fanout_cursor:
            query = query.where(Conversation.id > row.fanout_cursor)
    # Only what the window check reads: a whole conversation made from each row cost more than the
    # rest of the chunk's work.
    chunk = list(query.select(Conversation.id, Conversation.platform, Conversation.last_inbound_at)
                 .order_by(Conversation.id).limit(CHUNK))
    if row.conversation_ids:
        cursor = part[-1] if part else row.fanout_cursor
    else:
        last = len(chunk) < CHUNK
        cursor = chunk[-1].id if chunk else row.fanout_cursor
    button = Button(row.button_label, row.button_url) if row.button_label and row.button_url else None
    # (id, conversation_id, message_id, status, reason) of each recipient, in the chunk's order.
    recipients: list[list[Any]] = []
    reachable: list[Conversation] = []
    for conversation in chunk:
        entry: list[Any] = [ids.new_id("bcr"), conversation.id, None, "pending", None]
        # The pre-flight check: a contact outside the window is skipped, not refused (a template
        # is what reaches contacts outside it).
        if row.template or outbound.within_window(conversation, at=moment):
            reachable.append(conversation)
        else:
            entry[3:] = ["skipped", completion.OUTSIDE_WINDOW]
        recipients.append(entry)
    try:
        messages = outbound.queue_outbound_many(reachable, account, text=row.text or None, button=button,
                                                source="broadcast", at=moment, template=row.template)
    except (ValidationFailed, Conflict) as refused:
        messages = []
        for entry in recipients:
            if entry[3] == "pending":
                entry[3:] = ["failed", refused.message]
    else:
        pending = iter(messages)
        for entry in recipients:
            if entry[3] == "pending":
                entry[2] = next(pending)
    hot.insert_shared(BroadcastRecipient, {"broadcast": row.id, "sent_at": None, "created_at": moment,
                                           "updated_at": moment},
                      ("id", "conversation_id", "message_id", "status", "reason"),
                      [tuple(entry) for entry in recipients])
    # One task per group of messages (tasks/engine.py), never one per message.
    engine.nudge_after_commit(SEND_WORK, messages)
    hot.run("UPDATE broadcast SET fanout_cursor = ?, fanned_out = ? WHERE id = ?", (cursor, last, row.id))
    if last:
        engine.finish(found, status="sending", next_attempt_at=None)
        completion.complete_if_done(row.id)
    return not last


def _fail(found: engine.Claim, row: Broadcast, failure: Conflict) -> None:
    engine.fail(found, failure, completed_at=clock.now(), fanned_out=True)  # the policy: failed, for good
    completion.announce(row.id, "broadcast.completed")


def _lease(settings: Settings) -> float:
    # The send lease: a fan-out renews it with every chunk, so a dead worker's share is taken over soon.
    return settings.send_lease_seconds


# At least once: a fan-out taken over goes on from its cursor. An account disconnected under it ends
# the broadcast `failed` (the recipients reached so far keep their messages).
START_POLICY = Policy(
    retry_status="sending", failed_status="failed", max_attempts=1,
    conflict_text="The account was disconnected before the broadcast could reach everyone.",
)

START_WORK = engine.Kind(
    name="broadcast_start", table="broadcast", ready=("scheduled", "sending"), run=start,
    lease_seconds=_lease, policy=START_POLICY, sweep_batch=100, sweep_batches_per_tick=1,
)


def send_group(message_ids: list[str]) -> None:
    """A task's group of a broadcast's messages: sent as the inbox sends a group (`inbox_work.send_group`),
    then one check of whether that finished the broadcast. Outside any transaction, like every send."""
    inbox_work.send_group(message_ids)
    with connection():
        completion.complete_after(message_ids)


SEND_WORK = engine.Kind(
    name="broadcast_message", table="message", ready=("pending",), run=inbox_work.send, run_group=send_group,
    lease_seconds=inbox_work.lease_seconds, policy=inbox_work.MESSAGE_POLICY, scope="source = 'broadcast'",
    # Its rows are outbound messages, which `inbox_work.MESSAGE_WORK` sweeps (a lost group's messages
    # are handed out again one by one, and the tick completes their broadcast): this kind only says
    # how the fan-out's groups run.
    sweep_batches_per_tick=0,
)
