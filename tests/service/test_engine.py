"""The work engine on real storage: one claim per row however many workers race for it, a lost
lease settled as `unknown`, a late answer that still counts, and a module import that wires nothing."""

from __future__ import annotations

import contextlib
import datetime as dt
import subprocess
import sys
import threading

import pytest

from kit import clock
from service.common import events
from service.engine import core as engine
from service.inbox import conversations
from service.inbox import work as inbox_work
from storage.db import connection, db, is_postgres
from storage.models import Conversation, Event, Message
from tests.support.factories import queue_message


def _pending_message(tenant) -> str:
    return queue_message(tenant).id


def _claim(message_id: str, lease_seconds: float | None = None) -> engine.Claim | None:
    with connection(), db.atomic():
        return engine.claim(inbox_work.MESSAGE_WORK, message_id, lease_seconds=lease_seconds)


def _message(message_id: str) -> Message:
    with connection():
        return Message.get_by_id(message_id)


def test_eight_workers_racing_for_one_row_make_one_claim(tenant):
    message_id = _pending_message(tenant)
    barrier = threading.Barrier(8)
    claims: list[engine.Claim | None] = []

    def race() -> None:
        barrier.wait()
        claims.append(_claim(message_id))

    threads = [threading.Thread(target=race) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    won = [found for found in claims if found is not None]
    assert len(claims) == 8
    assert len(won) == 1
    assert won[0].attempts == 1
    row = _message(message_id)
    assert (row.status, row.attempts, row.claim_token) == ("sending", 1, won[0].token)


def test_a_lease_that_ran_out_mid_call_leaves_the_message_unknown_and_a_late_answer_corrects_it(tenant):
    message_id = _pending_message(tenant)
    found = _claim(message_id, lease_seconds=-1)  # its worker died: the lease is already over
    assert found is not None

    with connection(), db.atomic():
        swept = engine.sweep(inbox_work.MESSAGE_WORK)
    assert swept.lost == [message_id]
    row = _message(message_id)
    assert row.status == "unknown"
    assert "may or may not have arrived" in row.error
    assert row.next_attempt_at is None  # not due, and out of the work index
    assert _claim(message_id) is None  # never sent again automatically
    with connection(), db.atomic():
        assert engine.sweep(inbox_work.MESSAGE_WORK).nudged == []

    # The call outlived its lease and then succeeded: the answer still counts.
    with connection(), db.atomic():
        assert engine.finish(found, status="sent", platform_message_id="tg-1", error=None)
    row = _message(message_id)
    assert (row.status, row.platform_message_id, row.error) == ("sent", "tg-1", None)


def test_a_message_claim_adds_no_index_entry_on_postgresql(tenant):
    # Heap-only: the claim changes no indexed column of `message` and its new version fits on the
    # row's page (migration 24), so none of the table's indexes grows with each send.
    if not is_postgres():
        pytest.skip("heap-only updates are PostgreSQL's")
    message_id = _pending_message(tenant)
    counts = "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_xact_user_tables WHERE relname = 'message'"
    with connection(), db.atomic():
        before = db.execute_sql(counts).fetchone()
        assert engine.claim(inbox_work.MESSAGE_WORK, message_id) is not None
        after = db.execute_sql(counts).fetchone()
    assert (after[0] - before[0], after[1] - before[1]) == (1, 1)


def test_an_answer_from_a_worker_that_lost_its_claim_is_ignored(tenant):
    message_id = _pending_message(tenant)
    first = _claim(message_id)
    assert first is not None
    with connection(), db.atomic():
        assert engine.finish(first, status="pending", next_attempt_at=None)  # handed back
        assert engine.sweep(inbox_work.MESSAGE_WORK).nudged == []  # no next attempt time: not due
    with connection(), db.atomic():
        Message.update(next_attempt_at=Message.created_at).where(Message.id == message_id).execute()
    second = _claim(message_id)
    assert second is not None
    assert second.attempts == 2
    with connection(), db.atomic():
        assert not engine.finish(first, status="failed", error="stale")
        assert engine.finish(second, status="sent", platform_message_id="tg-2")
    assert _message(message_id).status == "sent"


def test_a_claim_handed_back_unused_waits_without_spending_an_attempt(tenant):
    message_id = _pending_message(tenant)
    found = _claim(message_id)
    assert found is not None
    later = clock.now() + dt.timedelta(minutes=5)
    with connection(), db.atomic():
        assert engine.release(found, until=later)  # the pace said wait
    row = _message(message_id)
    assert (row.status, row.attempts, row.claim_token, row.next_attempt_at) == ("pending", 0, None, later)
    assert _claim(message_id) is None  # not due before its time
    with connection(), db.atomic():
        assert not engine.release(found)  # no longer ours
        Message.update(next_attempt_at=Message.created_at).where(Message.id == message_id).execute()
    again = _claim(message_id)
    assert again is not None
    assert again.attempts == 1
    assert again.columns["text"] == "hello"  # the message's columns come back with the claim


def test_what_goes_with_an_outcome_is_written_only_with_it(tenant):
    message_id = _pending_message(tenant)
    conversation_id = _message(message_id).conversation_id
    stale = _claim(message_id)
    assert stale is not None
    with connection(), db.atomic():
        engine.restart(inbox_work.MESSAGE_WORK, [message_id], status="pending", next_attempt_at=clock.now())
    held = _claim(message_id)
    assert held is not None
    early, late = clock.now() - dt.timedelta(hours=1), clock.now()

    def riders(at: dt.datetime, tag: str) -> tuple[engine.Also, ...]:
        sql, params = events.emit_statement(workspace_id=tenant["workspaceId"], type="message.sent",
                                            data={"tag": tag})
        return conversations.touch_outbound_statement(conversation_id, at), engine.Also(sql, params)

    def tagged(tag: str) -> int:
        with connection():
            found = Event.select(Event.data).where(Event.workspace == tenant["workspaceId"], Event.type == "message.sent")
            return sum(event.data == {"tag": tag} for event in found)

    # On PostgreSQL outside any transaction: the outcome and what rides with it are one statement.
    alone = contextlib.nullcontext if is_postgres() else db.atomic
    with connection(), alone():
        assert not engine.finish(stale, status="sent", also=riders(early, "stale"))
    with connection():
        assert Conversation.get_by_id(conversation_id).last_message_at != early
    assert tagged("stale") == 0
    with connection(), alone():
        assert engine.finish(held, status="sent", also=riders(late, "held"))
    with connection():
        assert Conversation.get_by_id(conversation_id).last_message_at == late
    assert tagged("held") == 1
    assert _message(message_id).status == "sent"


def test_an_outcome_and_the_next_claim_go_in_one_statement_and_the_outcome_counts_alone(tenant):
    if not is_postgres():
        pytest.skip("only PostgreSQL writes an outcome with the next claim")
    first, second, third = (_pending_message(tenant) for _ in range(3))
    conversation_id = _message(first).conversation_id
    held = _claim(first)
    assert held is not None
    moment = clock.now()
    sql, params = events.emit_statement(workspace_id=tenant["workspaceId"], type="message.sent", data={"tag": "first"})
    riders = (conversations.touch_outbound_statement(conversation_id, moment), engine.Also(sql, params))

    with connection():
        recorded, claimed = engine.finish_and_claim(held, second, joined=inbox_work._JOINED, status="sent",
                                                    at=moment, also=riders, platform_message_id="tg-1", error=None)
    assert recorded
    assert claimed is not None
    assert (claimed.id, claimed.attempts, claimed.columns["text"]) == (second, 1, "hello")
    assert claimed.joined[0] == _message(second).conversation_id  # the conversation read with the claim
    assert (_message(first).status, _message(first).platform_message_id) == ("sent", "tg-1")
    assert _message(second).status == "sending"
    with connection():
        assert Conversation.get_by_id(conversation_id).last_message_at == moment
        assert Event.select().where(Event.workspace == tenant["workspaceId"], Event.type == "message.sent").count() == 1

    # A row that is not due (claimed already) does not hold the outcome back; a stale outcome is not
    # recorded, and what rides with it is not written, while the next claim is still made.
    with connection():
        recorded, claimed = engine.finish_and_claim(claimed, second, joined=inbox_work._JOINED, status="sent",
                                                    platform_message_id="tg-2", error=None)
    assert (recorded, claimed) == (True, None)
    assert _message(second).status == "sent"
    with connection():
        recorded, claimed = engine.finish_and_claim(held, third, joined=inbox_work._JOINED, status="failed",
                                                    also=riders, error="stale")
        assert Event.select().where(Event.workspace == tenant["workspaceId"], Event.type == "message.sent").count() == 1
    assert not recorded
    assert claimed is not None
    assert claimed.id == third
    assert _message(first).status == "sent"


def test_importing_the_service_registers_nothing_and_hashes_nothing():
    code = (
        "import switchboard.app, service.inbox.outbound, service.webhooks.ops, service.webhooks.work, tasks.engine\n"
        "from service.engine import core as engine\nfrom service.identity import users\nfrom service.common import signals\n"
        "assert engine.kinds() == [] and not engine._batches and not engine.has_nudger(), 'kinds registered at import'\n"
        "assert not signals.platform_event.by_kind and not any(signals.ALL[1:]), 'receivers connected at import'\n"
        "assert users._dummy_hash.cache_info().currsize == 0, 'a password hashed at import'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
