"""Renewals, follower snapshots and the outbox's dispatch as kinds of the engine: each sweep arms
what is due, one worker at a time holds it, and a worker that dies mid-run loses nothing: at least
once, the row is handed out again when its lease runs out."""

from __future__ import annotations

import datetime as dt

import pytest

from kit import clock
from service.accounts import work as account_work
from service.analytics import ops as analytics
from service.analytics import work as analytics_work
from service.common import events
from service.engine import core as engine
from service.webhooks import ops as webhooks
from service.webhooks import work as webhook_work
from storage import hot
from storage.db import connection, db
from storage.models import Account, AccountChore, Event, FollowerSnapshot, WebhookDelivery
from tests.support.factories import add_account


@pytest.fixture
def quiet(service, monkeypatch):
    monkeypatch.setattr(engine, "_nudger", None)  # nothing runs by itself: the test drives each step
    return service


@pytest.fixture
def morning():
    """The clock at 01:00 UTC of the next day: a test that moves it a few hours on stays within one
    UTC day, where the daily snapshot's "once that day" is counted, whenever the suite runs."""
    now = clock.now()
    clock.advance((dt.datetime.combine(now.date() + dt.timedelta(days=1), dt.time(1)) - now).total_seconds())


def _sweep(kind: engine.Kind) -> list[str]:
    with connection(), db.atomic():
        return engine.sweep(kind).nudged


def _chore(chore_id: str) -> AccountChore:
    with connection():
        return AccountChore.get_by_id(chore_id)


def test_a_snapshot_whose_worker_died_is_taken_once_its_lease_runs_out(quiet, morning, tenant, monkeypatch):
    account_id = add_account(tenant["workspaceId"], tenant["profileId"])
    asked: list[str] = []

    def ask(account: Account) -> analytics.Snapshot:
        asked.append(account.id)
        return analytics.Snapshot(account.id, account.platform, "taken", followers=42)

    monkeypatch.setattr(analytics_work, "ask", ask)
    assert _sweep(analytics_work.SNAPSHOT_WORK) == []  # connected less than a minute ago
    clock.advance(61)
    chore_id = f"snapshot_{account_id}"
    assert _sweep(analytics_work.SNAPSHOT_WORK) == [chore_id]
    with connection(), db.atomic():
        dead = engine.claim(analytics_work.SNAPSHOT_WORK, chore_id)  # a worker that dies with it
    assert dead is not None
    assert analytics_work.run(chore_id) is None  # held: no second worker asks meanwhile
    assert _sweep(analytics_work.SNAPSHOT_WORK) == []

    clock.advance(analytics_work.SNAPSHOT_WORK.lease() + 1)
    assert _sweep(analytics_work.SNAPSHOT_WORK) == [chore_id]
    taken = analytics_work.run(chore_id)
    assert taken is not None and taken.followers == 42
    assert asked == [account_id]
    assert (_chore(chore_id).status, _chore(chore_id).claim_token) == ("idle", None)
    with connection():
        assert [(row.followers, row.state) for row in FollowerSnapshot.select()] == [(42, "taken")]
    assert _sweep(analytics_work.SNAPSHOT_WORK) == []  # once a day
    clock.advance(3600)
    assert _sweep(analytics_work.SNAPSHOT_WORK) == []


def test_a_failed_snapshot_is_tried_again_after_an_hour_and_a_refused_one_not_that_day(quiet, morning, tenant,
                                                                                        monkeypatch):
    failing = add_account(tenant["workspaceId"], tenant["profileId"])
    refusing = add_account(tenant["workspaceId"], tenant["profileId"])
    outcome = {failing: "failed", refusing: "refused"}
    monkeypatch.setattr(analytics_work, "ask", lambda account: analytics.Snapshot(
        account.id, account.platform, outcome[account.id]))  # type: ignore[arg-type]
    clock.advance(61)
    due = _sweep(analytics_work.SNAPSHOT_WORK)
    assert sorted(due) == sorted([f"snapshot_{failing}", f"snapshot_{refusing}"])
    for chore_id in due:
        analytics_work.run(chore_id)
    clock.advance(1800)
    assert _sweep(analytics_work.SNAPSHOT_WORK) == []
    clock.advance(1801)
    assert _sweep(analytics_work.SNAPSHOT_WORK) == [f"snapshot_{failing}"]


def test_a_renewal_whose_worker_died_is_run_again_and_then_waits_a_day(quiet, tenant, monkeypatch):
    account_id = add_account(tenant["workspaceId"], tenant["profileId"], platform="instagram")
    with connection(), db.atomic():
        Account.update(credentials_expire_at=clock.now() + dt.timedelta(days=3)).where(
            Account.id == account_id).execute()
    renewed: list[str] = []
    monkeypatch.setattr(account_work, "renew", lambda account: renewed.append(account) or "renewed")
    chore_id = f"renewal_{account_id}"
    assert _sweep(account_work.RENEWAL_WORK) == [chore_id]
    with connection(), db.atomic():
        assert engine.claim(account_work.RENEWAL_WORK, chore_id) is not None  # and the worker dies
    assert account_work.run(chore_id) is None
    clock.advance(account_work.RENEWAL_WORK.lease() + 1)
    assert _sweep(account_work.RENEWAL_WORK) == [chore_id]
    assert account_work.run(chore_id) == "renewed"
    assert renewed == [account_id]
    assert _sweep(account_work.RENEWAL_WORK) == []  # tried today (its lapse is still near)
    clock.advance(24 * 3600 + 1)
    assert _sweep(account_work.RENEWAL_WORK) == [chore_id]


def test_a_dispatch_that_dies_mid_batch_leaves_every_event_to_the_next_and_none_twice(quiet, tenant, monkeypatch):
    from service.identity.auth import Actor

    actor = Actor(workspace_id=tenant["workspaceId"], permission="read-write", profile_ids=None, credential_id="t")
    with connection(), db.atomic():
        endpoint = webhooks.create(actor=actor, url="https://localhost:9/hook")
        emitted = [events.emit(workspace_id=tenant["workspaceId"], type="message.received", data={"n": n}).id
                   for n in range(30)]
    insert_many = hot.insert_many

    def dies(*args, **kwargs):
        raise RuntimeError("the process stopped here")

    monkeypatch.setattr(hot, "insert_many", dies)
    with connection(), pytest.raises(RuntimeError):
        engine.run_batches(webhook_work.DISPATCH_WORK.name, limit=10)
    with connection():
        assert Event.select().where(Event.dispatched_at.is_null()).count() == 30
        assert WebhookDelivery.select().count() == 0

    monkeypatch.setattr(hot, "insert_many", insert_many)
    with connection():
        assert engine.run_batches(webhook_work.DISPATCH_WORK.name, limit=10) == 30
        assert engine.run_batches(webhook_work.DISPATCH_WORK.name, limit=10) == 0
        pairs = sorted((row.event_id, row.endpoint_id) for row in WebhookDelivery.select())
    assert pairs == sorted((event_id, endpoint.id) for event_id in emitted)


def _published_post(tenant, account_id: str, targets: int) -> str:
    from kit import ids
    from storage.models import Post, PostTarget

    moment = clock.now()
    with connection(), db.atomic():
        post = Post.create(id=ids.new_id("post"), workspace=tenant["workspaceId"], content="Live", media_ids=[],
                           status="published", published_at=moment, source="service", created_at=moment,
                           updated_at=moment)
        for n in range(targets):
            PostTarget.create(id=ids.new_id("pt"), post=post.id, workspace=tenant["workspaceId"], account=account_id,
                              profile_id=tenant["profileId"], platform="telegram", status="published",
                              platform_post_id=f"live-{n}", position=n, published_at=moment, created_at=moment,
                              updated_at=moment)
    return post.id


def test_post_deletions_left_by_a_request_that_died_are_finished_by_the_engine(quiet, tenant, monkeypatch):
    from service.posts import work as post_work
    from storage.models import Post, PostDeletion

    account_id = add_account(tenant["workspaceId"], tenant["profileId"])
    post_id = _published_post(tenant, account_id, 3)
    calls: list[str] = []
    monkeypatch.setattr(post_work, "_call", lambda row: calls.append(row.platform_post_id))
    with connection(), db.atomic():
        made = post_work.queue_deletions(post_id)
    # The request died before running them: in its hands for a lease, then the engine's.
    assert _sweep(post_work.DELETION_WORK) == []
    with connection(), db.atomic():
        assert engine.claim(post_work.DELETION_WORK, made[0]) is not None  # a worker that dies mid-call
    clock.advance(post_work.DELETION_WORK.lease() + 1)
    assert sorted(_sweep(post_work.DELETION_WORK)) == sorted(made)
    for deletion_id in made:
        post_work.run(deletion_id)
    assert sorted(calls) == ["live-0", "live-1", "live-2"]  # each once: the dead worker never called
    with connection():
        assert Post.get_or_none(Post.id == post_id) is None
        assert PostDeletion.select().count() == 0
