"""The daily follower count as a kind of the engine: each account's `snapshot` chore (`AccountChore`);
and, once per account, its `history` chore: the past counts read after it is connected
(service/analytics/history.py).

Each sweep arms the chores of the connected accounts whose count for today is still to be taken
(`_due`): connected a minute ago at least, and without today's `taken` or `refused` row, nor a
`failed` one younger than an hour. The engine claims, leases and sweeps them like any other work;
the run asks the platform outside any transaction and writes today's row. It is at least once:
asking for a count twice harms nothing, so a worker that died mid-ask leaves its chore to be handed
out again once its lease runs out.
"""

from __future__ import annotations

import datetime as dt

from kit import clock
from kit.settings import Settings
from service.analytics import history
from service.analytics.ops import Snapshot, ask, today
from service.engine import core as engine
from service.engine.outcomes import Policy
from storage.db import connection, db
from storage.hot import run_fixed
from storage.models import Account, FollowerSnapshot

RETRY_AFTER = dt.timedelta(hours=1)
# A newly connected account is first asked a minute after connecting: connecting already makes its
# own platform calls, and a caller trying the account at once (the sandbox's `faults` arm "the next
# call") should meet only the calls it made.
FIRST_AFTER = dt.timedelta(minutes=1)
BATCH = 20


# Written out: it runs on every scheduler tick, and building it with peewee (three queries, their
# expressions and their SQL) cost more CPU than the database's own work on it.
_DUE = ("SELECT id FROM account WHERE status = 'connected' AND connected_at <= ?"
        " AND id NOT IN (SELECT account_id FROM follower_snapshot WHERE \"date\" = ?"
        " AND NOT (state IN ('claimed', 'failed') AND taken_at <= ?))"
        " AND id NOT IN (SELECT account_id FROM account_chore WHERE chore = 'snapshot' AND status != 'idle')"
        " ORDER BY id LIMIT ?")


def _due(limit: int = BATCH) -> list[dict[str, str]]:
    """The snapshot chores to arm now (see the module's docstring). A `claimed` row is one written
    before snapshots were chores, by a worker that may have died: it counts as a `failed` one."""
    moment, day = clock.now(), today()
    rows = run_fixed(_DUE, (moment - FIRST_AFTER, day, moment - RETRY_AFTER, limit)).fetchall()
    return [{"id": f"snapshot_{row[0]}", "account_id": row[0], "chore": "snapshot"} for row in rows]


def _record(snapshot: Snapshot, day: dt.date) -> None:
    """Today's row from the chore's count. A count already there stays: it can only be one that
    `take_now` wrote meanwhile, which is as new as ours."""
    moment = clock.now()
    FollowerSnapshot.insert(account=snapshot.account_id, date=day, followers=snapshot.followers,
                            state=snapshot.outcome, taken_at=moment).on_conflict(
        conflict_target=[FollowerSnapshot.account, FollowerSnapshot.date],
        update={FollowerSnapshot.followers: snapshot.followers, FollowerSnapshot.state: snapshot.outcome,
                FollowerSnapshot.taken_at: moment},
        where=FollowerSnapshot.state != "taken",
    ).execute()


def run(chore_id: str) -> Snapshot | None:
    """The engine's run of one armed snapshot chore: None when it was not ours to run."""
    day = today()
    with connection():
        with db.atomic():
            found = engine.claim(SNAPSHOT_WORK, chore_id)
            if found is None:
                return None
        account = Account.get_or_none(Account.id == found.columns["account_id"])
        if account is None or account.status != "connected":
            with db.atomic():
                engine.settle_idle(found)
            return Snapshot(found.columns["account_id"], account.platform if account else "", "gone")
        snapshot = ask(account)
        with db.atomic():
            # A count not given is today's `failed` or `refused` row; the chore's policy settles it.
            held = engine.settle_idle(found) if snapshot.failure is None else (
                engine.fail(found, snapshot.failure) is not None)
            if held:
                _record(snapshot, day)
    return snapshot



def lease_seconds(settings: Settings) -> float:
    # One platform call, as a message's send.
    return settings.send_lease_seconds


# A chore: a count the platform would not give is written as today's `failed` (or `refused`) row, and
# the chore goes back to idle (`fail`); a sweep arms it again an hour later (`RETRY_AFTER`).
SNAPSHOT_POLICY = Policy(retry_status="due", failed_status="idle", max_attempts=1, error_column=None)

SNAPSHOT_WORK = engine.Kind(
    name="follower_snapshot", table="account_chore", scope="chore = 'snapshot'", ready=("due",), idle="idle",
    arm=_due, run=run, lease_seconds=lease_seconds, policy=SNAPSHOT_POLICY, returning=("account_id",),
    sweep_batch=BATCH, sweep_batches_per_tick=1, arm_every=60,  # one a day, the first a minute after connecting
)


# -- the past counts, once per account ----------------------------------------------------------
# Armed for a connected account that has never had a `history` chore: its row stays once run, so
# the history is read once, the first time the account is connected.
_HISTORY_DUE = ("SELECT id FROM account WHERE status = 'connected' AND connected_at <= ?"
                " AND id NOT IN (SELECT account_id FROM account_chore WHERE chore = 'history')"
                " ORDER BY id LIMIT ?")


def _history_due(limit: int = BATCH) -> list[dict[str, str]]:
    if not history.settings().follower_backfill:
        return []
    rows = run_fixed(_HISTORY_DUE, (clock.now() - FIRST_AFTER, limit)).fetchall()
    return [{"id": f"history_{row[0]}", "account_id": row[0], "chore": "history"} for row in rows]


def run_history(chore_id: str) -> int | None:
    """The engine's run of one armed history chore: the days it added, None when not ours to run.
    One attempt: a platform that gave nothing then gives the line to the daily snapshots."""
    with connection():
        with db.atomic():
            found = engine.claim(HISTORY_WORK, chore_id)
            if found is None:
                return None
        account = Account.get_or_none(Account.id == found.columns["account_id"])
        added = history.backfill(account) if account is not None and account.status == "connected" else 0
        with db.atomic():
            engine.settle_idle(found)
    return added


HISTORY_WORK = engine.Kind(
    name="follower_history", table="account_chore", scope="chore = 'history'", ready=("due",), idle="idle",
    arm=_history_due, run=run_history, lease_seconds=lease_seconds, policy=SNAPSHOT_POLICY,
    returning=("account_id",), sweep_batch=BATCH, sweep_batches_per_tick=1, arm_every=60,  # once an account
)
