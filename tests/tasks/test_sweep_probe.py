"""The scheduler's sweep asks one question of every kind before sweeping any: a message whose task
was lost is still handed out again, a send or a publish whose worker died is still settled
`unknown`, and a tick with nothing to do sweeps no kind at all, however many posts wait for their
time (the question reads them through an index, as does a month of posts)."""

from __future__ import annotations

import datetime as dt
import uuid

import pytest

from kit import clock
from service.broadcasts import completion
from service.engine import core as engine
from service.identity.auth import Actor
from service.inbox import work as inbox_work
from service.posts import listing
from service.posts import work as post_work
from storage import hot
from storage.db import connection, db, is_postgres
from storage.models import Message, Post, PostTarget
from tasks import engine as engine_tasks
from tests.support.factories import add_account, queue_message


def _pending_message(tenant: dict[str, str]) -> str:
    # Its task is lost: nudged long ago, never claimed.
    message = queue_message(tenant)
    with connection():
        Message.update(nudged_at=message.nudged_at - dt.timedelta(hours=1)).where(Message.id == message.id).execute()
    return message.id


@pytest.fixture
def enqueued(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, list[str]]]:
    seen: list[tuple[str, list[str]]] = []
    monkeypatch.setattr(engine, "_nudger", lambda name, ids: seen.append((name, ids)))
    return seen


@pytest.fixture
def swept(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    names: list[str] = []
    real = engine.sweep

    def sweep(kind: engine.Kind, **kwargs: object) -> engine.Swept:
        names.append(kind.name)
        return real(kind, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(engine, "sweep", sweep)
    return names


def test_a_message_whose_task_was_lost_is_handed_out_again(tenant, enqueued, swept):
    message_id = _pending_message(tenant)
    with connection():
        engine_tasks.sweep()
    assert enqueued == [(inbox_work.MESSAGE_WORK.name, [message_id])]
    assert swept == [inbox_work.MESSAGE_WORK.name]


def test_a_send_whose_worker_died_is_settled_unknown(tenant, enqueued, swept):
    message_id = _pending_message(tenant)
    with connection(), db.atomic():
        assert engine.claim(inbox_work.MESSAGE_WORK, message_id, lease_seconds=-1) is not None
    with connection():
        engine_tasks.sweep()
        assert Message.get_by_id(message_id).status == "unknown"
    assert enqueued == []


def test_a_tick_with_nothing_due_sweeps_no_kind(tenant, enqueued, swept):
    with connection():
        engine_tasks.sweep()
    assert swept == []
    assert enqueued == []


def test_a_message_waiting_in_the_queue_is_not_handed_out_again_by_the_next_tick(tenant, enqueued, swept):
    message = queue_message(tenant, nudge=True)
    assert enqueued == [(inbox_work.MESSAGE_WORK.name, [message.id])]  # its own task, after the commit
    with connection():
        engine_tasks.sweep()  # a tick before any worker took that task: a backlog, not a lost task
    assert enqueued == [(inbox_work.MESSAGE_WORK.name, [message.id])]


def _post_target(tenant: dict[str, str], *, status: str, due: dt.datetime, claimed_until: dt.datetime | None = None
                 ) -> str:
    account_id = add_account(tenant["workspaceId"], tenant["profileId"], platform="telegram")
    post_id, target_id = f"post_{uuid.uuid4().hex}", f"tgt_{uuid.uuid4().hex}"
    with connection(), db.atomic():
        Post.insert(id=post_id, workspace=tenant["workspaceId"], content="Launch day", status="scheduled",
                    scheduled_for=due).execute()
        PostTarget.insert(id=target_id, post=post_id, workspace=tenant["workspaceId"], account=account_id,
                          profile_id=tenant["profileId"], platform="telegram", status=status, next_attempt_at=due,
                          claimed_until=claimed_until, claim_token="worker-gone" if claimed_until else None,
                          options={}).execute()
    return target_id


def test_a_publish_whose_worker_died_is_settled_unknown_by_the_tick(tenant, enqueued, swept):
    moment = clock.now()
    target_id = _post_target(tenant, status="publishing", due=moment - dt.timedelta(minutes=5),
                             claimed_until=moment - dt.timedelta(seconds=1))
    with connection():
        engine_tasks.sweep()
        assert PostTarget.get_by_id(target_id).status == "unknown"  # never published again blindly
    assert swept == [post_work.TARGET_WORK.name]


def test_posts_scheduled_for_later_make_no_tick_sweep(tenant, enqueued, swept):
    _post_target(tenant, status="queued", due=clock.now() + dt.timedelta(days=30))
    with connection():
        engine_tasks.sweep()
    assert swept == []


def _plan(sql: str, params: tuple[object, ...]) -> list[str]:
    """The plan's lines; on PostgreSQL with sequential scans priced out, so that a scan still chosen
    says no index can serve the condition."""
    with db.atomic():
        if is_postgres():
            db.execute_sql("SET LOCAL enable_seqscan = off")
            return [row[0] for row in db.execute_sql("EXPLAIN " + hot.sql(sql), params).fetchall()]
        return [row[3] for row in db.execute_sql("EXPLAIN QUERY PLAN " + sql, params).fetchall()]


def _reads_post_target_by_index(plan: list[str], name: str = "post_target") -> bool:
    """Whether each read of `post_target` (called `name` in the statement) is an index's search."""
    if is_postgres():
        scans = [line for line in plan if " on post_target" in line]
        return bool(scans) and not any("Seq Scan" in line for line in scans)
    scans = [line for line in plan if line.split(" ")[1:2] == [name]]
    return bool(scans) and all(line.startswith(f"SEARCH {name} USING") for line in scans)


def test_the_ticks_question_reads_post_targets_by_an_index_not_the_whole_table(tenant):
    """Every future post is a queued target: the tick's question must not read them all each second."""
    kinds = (post_work.TARGET_WORK,)
    with connection():
        plan = _plan(engine_tasks._probe_sql(kinds), engine_tasks._probe_params(kinds))
    assert _reads_post_target_by_index(plan), plan


def test_a_months_posts_read_their_workspaces_live_targets_by_an_index(tenant):
    actor = Actor(workspace_id=tenant["workspaceId"], permission="read-write", profile_ids=None,
                  credential_id="key_test")
    dates = (dt.datetime(2026, 12, 1), dt.datetime(2027, 1, 1))
    with connection():
        sql, params = listing._visible(actor, Post.select(Post.id), dates).sql()
        plan = _plan(sql.replace("%s", "?"), tuple(params))
    assert _reads_post_target_by_index(plan, "t2"), plan  # peewee's name for the subquery's table


def test_the_ticks_completion_job_reads_only_the_broadcasts_being_sent(tenant):
    """Every broadcast ever made stays a row: the job that completes the finished ones each tick reads
    those still sending, through their index, not the whole table."""
    with connection():
        plan = _plan(f"SELECT id FROM broadcast WHERE {completion._NONE_PENDING} LIMIT 100", (True,))
    if is_postgres():
        reads = [line for line in plan if " on broadcast" in line and "broadcast_recipient" not in line]
        assert reads and not any("Seq Scan" in line for line in reads), plan
    else:  # the partial index read whole is the broadcasts being sent, and only those
        assert plan[0] in ("SCAN broadcast USING INDEX broadcast_sending",
                           "SEARCH broadcast USING INDEX broadcast_sending (status=?)"), plan


def _searches_the_chores(plan: list[str]) -> bool:
    """Whether a plan reads `account_chore` by an index's search and no table whole."""
    if is_postgres():
        return not any("Seq Scan" in line for line in plan)
    return (any(line.startswith("SEARCH account_chore USING INDEX") for line in plan)
            and not any(line.startswith("SCAN") for line in plan))


def test_the_ticks_poll_arming_reads_the_due_chores_by_an_index_not_every_account(tenant):
    """Every polled account has a chore: the read each tick makes of them searches the chores due now,
    whatever the number of accounts (the read of every account runs at most once a minute)."""
    from service.inbox import polling

    moment = clock.now()
    params = (moment - polling.RECENT_WINDOW, moment, False, moment, moment, 200)
    with connection():
        plan = _plan(polling._recent_sql(), params)
    assert _searches_the_chores(plan), plan
