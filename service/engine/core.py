"""The work engine: every durable side effect (a webhook delivery, an outbound message, ...) is a row.

Huey loses a task whose consumer dies, so a task only says "look at this row now"; the row is the
truth. Each kind of work lives in its own table with the same few columns: `status`, `attempts`,
`next_attempt_at`, `claimed_until` (the lease), `claim_token` and `nudged_at`. The life of a row:

1. its feature inserts it in a ready status, in the transaction of the change, and calls
   `nudge_after_commit()`: the queue hears of it only once that transaction commits;
2. a worker `claim()`s it with one conditional UPDATE that sets a token, a lease and the attempt
   count; a row that is not due, is done, or is held by someone else is not claimed;
3. the kind's `run` makes the side effect outside any transaction and `finish()`es the row with the
   outcome, conditional on still holding the claim;
4. `sweep()` (every scheduler tick) hands out rows that are due and in no one's hands (a retry
   whose time came, a task that was lost) and settles rows whose lease expired mid-work: a kind
   whose work can safely run again (`in_flight=None`) is simply handed out again (at least once);
   a kind whose work is irreversible (a message to a person) marks the row `lost` (`unknown`),
   never to be redone automatically (at most once).

What a kind does after a failed attempt is its `policy` (service/engine/outcomes.py: the attempt
cap, the backoff, at most or at least once), applied by `fail`. A kind whose work falls due by other
rows' columns (an account's credentials about to lapse) has `arm`: the sweep first asks it for the
rows to make due. Work done a batch at a time inside one transaction (the event outbox's dispatch)
is a `Batch`: its claim and its outcome commit together, so it needs no lease.

Kinds register explicitly (`register`, from the composition root), which also hands the engine
the settings (`configure`) that each kind's lease and policy read their numbers from. The engine
never imports `tasks/`: the queue side installs how to enqueue with `set_nudger`.
"""

from __future__ import annotations

import functools
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cached_property
from typing import Any, TypeVar

from kit import clock, metrics
from kit.errors import Conflict
from kit.settings import Settings
from platforms.base import PlatformFailure
from service.engine.outcomes import Next, Policy, next_state
from storage.db import db, is_postgres
from storage.hot import run_fixed, stamp
from storage.hot import sql as _sql

log = logging.getLogger("switchboard.engine")

Nudger = Callable[[str, list[str]], None]
LostHook = Callable[[list[str]], None]


@dataclass(frozen=True)
class Kind:
    """One kind of durable work and the table that holds it."""

    name: str
    table: str
    ready: tuple[str, ...]  # statuses a worker may claim
    run: Callable[[str], Any]  # does one row's work: claims, acts, finishes
    lease_seconds: Callable[[Settings], float]  # how long a claim holds, from the service's settings
    policy: Policy  # what `fail` does with a failed attempt (service/engine/outcomes.py)
    in_flight: str | None = None  # status while claimed; None: the row keeps its status
    lost: str | None = None  # status of an in-flight row whose lease expired
    on_lost: LostHook | None = None  # runs in the sweep's transaction with the rows just marked lost
    returning: tuple[str, ...] = ()  # columns handed back with the claim
    # Runs the due rows the sweep found in this (worker) process itself, after the sweep commits,
    # instead of through the queue: for kinds whose `run` hands rows to a pool of their own anyway.
    dispatch: Callable[[list[str]], None] | None = None
    # Does a group of rows' work (one task's), each as `run` would, where together is cheaper than one
    # by one; it must keep one row's fault from the rest of the group.
    run_group: Callable[[list[str]], Any] | None = None
    sweep_batch: int = 500
    sweep_batches_per_tick: int = 4  # bounded: one busy kind must not starve the tick's other jobs
    # Kinds that share a table tell their rows apart with this condition (SQL over the table's columns).
    scope: str = ""
    # For rows that fall due by other tables' columns: the status of a row between runs, and a function
    # giving the rows (column dicts with their `id`) that are due now; `arm` makes them ready.
    idle: str | None = None
    arm: Callable[[], list[dict[str, Any]]] | None = None
    # An idle row is armed only once its own `next_attempt_at` has come (a recurring chore that
    # sets when it is next due as it settles): two sweepers that both found it due arm it once.
    arm_when_due: bool = False
    # `arm` reads every account (an anti-join of the account table with the chores'), so its cost
    # grows with the accounts; a kind whose rows fall due by the day or the hour asks it at most
    # once in this many seconds (by the service's clock) while it finds nothing, and on every tick
    # while it finds rows (a batch is bounded). 0: every tick.
    arm_every: float = 0.0
    # The table's work index holds the rows with a `next_attempt_at` (`WHERE next_attempt_at IS NOT
    # NULL`), not the rows of some statuses: a claim then changes no indexed column, and on
    # PostgreSQL it is a heap-only update (no new entry in any index of a table that has several).
    # A claimed row keeps its `next_attempt_at`, so the sweep's search for expired leases says so
    # to reach that index, and a row marked lost leaves it (no longer due, no longer indexed).
    due_indexed: bool = False

    def lease(self) -> float:
        """The lease of a claim, in seconds, by the settings the engine was given."""
        return self.lease_seconds(settings())

    @cached_property
    def _ready_sql(self) -> str:
        return ", ".join(f"'{status}'" for status in self.ready)

    @cached_property
    def _scoped(self) -> str:
        return f" AND {self.scope}" if self.scope else ""

    @cached_property
    def due(self) -> str:
        """The condition of a ready row the sweep hands out (three `?`: now, now, and the instant
        before which a nudge counts as lost with its task)."""
        return (f"status IN ({self._ready_sql}) AND next_attempt_at <= ? AND (claimed_until IS NULL "
                f"OR claimed_until < ?) AND (nudged_at IS NULL OR nudged_at < ?){self._scoped}")

    @cached_property
    def expired(self) -> str:
        """The condition of an in-flight row whose lease ran out (one `?`: now)."""
        indexed = "next_attempt_at IS NOT NULL AND " if self.due_indexed else ""
        return f"{indexed}status = '{self.in_flight}' AND claimed_until < ?{self._scoped}"

    @cached_property
    def claim_sql(self) -> str:
        moves = f", status = '{self.in_flight}'" if self.in_flight else ""
        extra = "".join(f", {column}" for column in self.returning)
        return (
            f"UPDATE {self.table} SET claimed_until = ?, claim_token = ?, nudged_at = NULL, "  # noqa: S608 - names from code
            f"attempts = attempts + 1, updated_at = ?{moves} "
            f"WHERE id = ? AND status IN ({self._ready_sql}) AND next_attempt_at <= ? "
            f"AND (claimed_until IS NULL OR claimed_until < ?){self._scoped} RETURNING attempts{extra}"
        )


@dataclass(frozen=True)
class Claim:
    """A row in one worker's hands until `claimed_until`."""

    kind: Kind
    id: str
    token: str
    attempts: int  # counting the attempt about to be made
    columns: dict[str, Any] = field(default_factory=dict)
    joined: tuple[Any, ...] = ()  # the `Joined` columns read with the claim


@dataclass(frozen=True)
class Joined:
    """Rows read with a claim: `columns` (SQL) of the tables that `joins` (LEFT JOINs) bring to the
    claimed row, which is named `claimed`. On PostgreSQL they come in the claim's own statement
    (one round trip instead of two); on SQLite from a second statement just after it."""

    columns: str
    joins: str


@dataclass(frozen=True)
class Batch:
    """Work taken a batch at a time: `run(limit)` claims up to `limit` items and does them in the
    caller's transaction (claim and outcome commit together: a crash rolls both back, so there is no
    lease), returning how many it took. The sweep runs a few batches every tick; `run_batches` runs
    them at once when a nudge says there is new work."""

    name: str
    run: Callable[[int], int]
    batch: int = 500
    batches_per_tick: int = 8  # bounded: a burst must not starve the tick's other jobs
    # Where its items wait (`table` rows matching `pending`, SQL from code): the tick asks whether
    # there are any with the kinds' probe, and opens no write transaction when there are none.
    table: str = ""
    pending: str = ""


_kinds: dict[str, Kind] = {}
_batches: dict[str, Batch] = {}
_nudger: Nudger | None = None
_settings: Settings | None = None


def configure(given: Settings) -> None:
    """The settings kinds' leases and policies read (the composition root's, given once)."""
    global _settings
    _settings = given


def settings() -> Settings:
    assert _settings is not None, "the engine is configured by the composition root (wire)"
    return _settings


def register(kind: Kind | Batch) -> Kind | Batch:
    if isinstance(kind, Batch):
        _batches[kind.name] = kind
    else:
        _kinds[kind.name] = kind
    return kind


def reset() -> None:
    """Forget every kind, the nudger and the settings (the composition root wires them again)."""
    global _nudger, _settings
    _kinds.clear()
    _batches.clear()
    _arm_asked.clear()
    _nudger = None
    _settings = None


def batch(name: str) -> Batch:
    return _batches[name]


def run_batches(name: str, *, limit: int | None = None) -> int:
    """Up to the batch kind's per-tick number of batches, each in a short transaction of its own;
    returns how many items were taken."""
    work = _batches[name]
    size = limit or work.batch
    taken = 0
    for _ in range(work.batches_per_tick):
        with db.atomic():
            done = work.run(size)
        taken += done
        if done < size:
            break
    return taken


def kind(name: str) -> Kind:
    return _kinds[name]


def kinds() -> list[Kind]:
    return list(_kinds.values())


def batch_names() -> list[str]:
    return list(_batches)


def batches() -> list[Batch]:
    return list(_batches.values())


def set_nudger(fn: Nudger | None) -> None:
    global _nudger
    _nudger = fn


def _nudge(nudger: Nudger, name: str, ids: list[str]) -> None:
    """Enqueue, or leave the rows to the sweep when the queue cannot be reached (Redis restarting or
    stalled): the rows are written and due, and the next tick hands them out. Failing here instead
    answered the caller 500 for a change that was made in full."""
    try:
        nudger(name, ids)
    except Exception:
        log.warning("the queue did not take %d %s task(s); the sweep will hand them out", len(ids), name,
                    exc_info=True)


def nudge_after_commit(kind: Kind, ids: list[str]) -> None:
    """Enqueue the rows' work once the transaction that wrote them commits (never for a rollback)."""
    nudger = _nudger
    if nudger is not None and ids:
        name = kind.name
        db.after_commit(lambda: _nudge(nudger, name, ids))


def nudge_now(kind: Kind, ids: list[str]) -> None:
    """Enqueue at once: for rows already committed."""
    if _nudger is not None and ids:
        _nudge(_nudger, kind.name, ids)


def has_nudger() -> bool:
    return _nudger is not None


def run_one(kind_name: str, item_id: str) -> Any:
    return _kinds[kind_name].run(item_id)


def runs_groups(kind_name: str) -> Callable[[list[str]], Any] | None:
    """The kind's `run_group`, if it has one."""
    return _kinds[kind_name].run_group


# When each question `seldom` was last asked in this process, and whether it found anything.
_arm_asked: dict[str, tuple[datetime, bool]] = {}

T = TypeVar("T")


def seldom(key: str, seconds: float, ask: Callable[[], list[T]]) -> list[T]:
    """`ask()`, at most once in `seconds` (by the service's clock) while it finds nothing, and on
    every call while it finds something (what it finds is bounded by a batch); an empty list in
    between. For questions whose cost grows with the accounts, not with the work they find."""
    moment = clock.now()
    last = _arm_asked.get(key)
    # A clock moved back (tests set it) asks again, as does one that moved on by `seconds`.
    if last is not None and not last[1] and timedelta(0) <= moment - last[0] < timedelta(seconds=seconds):
        return []
    found = ask()
    _arm_asked[key] = (moment, bool(found))
    return found


def arm_rows(kind: Kind) -> list[dict[str, Any]]:
    """The rows the armed kind's `arm` gives now (asked `seldom` when the kind has an `arm_every`)."""
    if kind.arm is None:
        return []
    return seldom(kind.name, kind.arm_every, kind.arm) if kind.arm_every else kind.arm()


# -- claiming and finishing ----------------------------------------------------------------------
def claim(
    kind: Kind, item_id: str, *, lease_seconds: float | None = None, joined: Joined | None = None,
) -> Claim | None:
    """Take the row for one attempt: None when it is not due, done, or held. With `joined`, the rows
    it names come with it (`Claim.joined`).

    The attempt is counted when it starts, so a worker killed mid-attempt still used it: a row that
    kills its workers cannot loop for ever. Call inside a short write transaction, or on its own
    where it is the only write (one statement commits by itself; `release` hands the row back if
    what follows says wait).
    """
    token, params = _claim_params(kind, item_id, lease_seconds)
    # Claim and finish run once per row of every kind, with texts fixed by the code: on PostgreSQL
    # the server prepares each once per connection (measured on webhook deliveries: 400 → 260 µs
    # of the backend's CPU per delivery, the claim, the load and the finish together).
    if joined is not None and is_postgres():
        row = run_fixed(_joined_sql(kind, joined, together=True), params).fetchone()
    else:
        row = run_fixed(kind.claim_sql, params).fetchone()
        if row is not None and joined is not None:
            row = (*row, *run_fixed(_joined_sql(kind, joined, together=False), (item_id,)).fetchone())
    if row is None:
        return None
    metrics.engine_claimed(kind.name)
    return _claimed(kind, item_id, token, row)


def _claim_params(kind: Kind, item_id: str, lease_seconds: float | None) -> tuple[str, tuple[Any, ...]]:
    """A new claim token, and the parameters of `kind.claim_sql` that take it."""
    moment = clock.now()
    token = secrets.token_hex(8)
    lease = moment + timedelta(seconds=lease_seconds if lease_seconds is not None else kind.lease())
    now = stamp(moment)  # three uses, one conversion
    return token, (lease, token, now, item_id, now, now)


def _claimed(kind: Kind, item_id: str, token: str, row: tuple[Any, ...]) -> Claim:
    """The claim of a row from its columns as the claim's statement returned them (with `joined` after)."""
    split = 1 + len(kind.returning)
    return Claim(kind, item_id, token, int(row[0]), dict(zip(kind.returning, row[1:split], strict=True)),
                 tuple(row[split:]))


@functools.cache
def _joined_sql(kind: Kind, joined: Joined, *, together: bool) -> str:
    """The claim with its `joined` rows in one statement (`together`), or the read of them alone."""
    if together:
        return f"WITH claimed AS ({kind.claim_sql}) SELECT claimed.*, {joined.columns} FROM claimed {joined.joins}"  # noqa: S608
    return f"SELECT {joined.columns} FROM {kind.table} AS claimed {joined.joins} WHERE claimed.id = ?"  # noqa: S608


@dataclass(frozen=True)
class Also:
    """A statement that goes with an outcome and only with it (an UPDATE of another table, an
    event's INSERT ... SELECT; SQL from code with `?` placeholders, ending in a WHERE clause that
    `finish` extends): `finish` runs it only when the worker still held the row, on PostgreSQL in
    the same statement as the outcome (a data-modifying `WITH`: one round trip, and atomic without
    a transaction around it)."""

    sql: str
    params: tuple[Any, ...]


def finish(
    found: Claim, *, status: str, next_attempt_at: datetime | None = None, at: datetime | None = None,
    also: tuple[Also, ...] = (), wait_for_flush: bool = True, **columns: Any,
) -> bool:
    """Record the outcome (as of `at`, default now) if this worker still holds the row: True when it did.

    A ready `status` with a `next_attempt_at` puts the row back for a later attempt. The `also`
    statements run with the outcome, only if it was recorded. `wait_for_flush=False`: on PostgreSQL
    the outcome's commit does not wait for the disk (`storage.db.NO_FLUSH_WAIT`): only for an
    outcome whose loss in a server crash the kind's lease settles safely (`in_flight` → `lost`).
    """
    assert wait_for_flush or found.kind.lost, f"{found.kind.name}: a lost outcome would run again"

    statement, params = _outcome(found, status, next_attempt_at, at, columns)
    if also and is_postgres():
        riders = _riders(tuple(extra.sql for extra in also))
        row = run_fixed(f"WITH done AS ({statement} RETURNING 1){riders} SELECT count(*) FROM done",  # noqa: S608
                        (*params, *(value for extra in also for value in extra.params)),
                        wait_for_flush=wait_for_flush).fetchone()
        held = bool(row[0])
    else:
        held = bool(run_fixed(statement, params, wait_for_flush=wait_for_flush).rowcount)
        if held:
            for extra in also:
                run_fixed(extra.sql, extra.params)
    if held:
        metrics.engine_outcome(found.kind.name, status)
    return held


def finish_and_claim(
    found: Claim, item_id: str, *, joined: Joined, status: str, at: datetime | None = None,
    also: tuple[Also, ...] = (), **columns: Any,
) -> tuple[bool, Claim | None]:
    """`finish` this claim and `claim` the same kind's row `item_id` (with its `joined` rows) in one
    statement, on PostgreSQL: whether the outcome was recorded, and the new claim (None when that
    row is not due, done or held). A worker that sends a task's rows one after the other pays one
    round trip and one commit a row where `finish` then `claim` paid two each.

    The outcome ends the row's attempts (no next attempt time), is recorded whatever becomes of the
    claim, and waits for the disk with the claim (which must be durable before its call). Both see
    the database as the statement began: a rider's change is not in the new claim's `joined`
    columns, and `item_id` may be the finished row itself (a duplicate task's): as the statement
    began, that row was in this worker's hands, so the claim finds nothing."""
    assert is_postgres(), "on SQLite, `finish` and then `claim`"
    kind = found.kind
    statement, params = _outcome(found, status, None, at, columns)
    token, claim_params = _claim_params(kind, item_id, None)
    row = run_fixed(_chained_sql(statement, tuple(extra.sql for extra in also), kind, joined),
                    (*params, *(value for extra in also for value in extra.params), *claim_params)).fetchone()
    held = bool(row[0])
    if held:
        metrics.engine_outcome(kind.name, status)
    if row[1] is None:  # no row from `claimed`: the LEFT JOIN's NULLs
        return held, None
    metrics.engine_claimed(kind.name)
    return held, _claimed(kind, item_id, token, row[1:])


@functools.cache
def _chained_sql(outcome: str, riders: tuple[str, ...], kind: Kind, joined: Joined) -> str:
    """`finish_and_claim`'s statement: the outcome and its riders, then the claim with its joined
    rows; one row whatever the claim finds (a claim that found nothing leaves NULLs)."""
    return (f"WITH done AS ({outcome} RETURNING 1){_riders(riders)}, claimed AS ({kind.claim_sql}) "  # noqa: S608
            f"SELECT (SELECT count(*) FROM done), claimed.*, {joined.columns} "
            f"FROM (SELECT 1) AS one LEFT JOIN claimed ON TRUE {joined.joins}")


def _outcome(found: Claim, status: str, next_attempt_at: datetime | None, at: datetime | None,
             columns: dict[str, Any]) -> tuple[str, tuple[Any, ...]]:
    """The UPDATE that records an outcome if this worker still holds the row, and its parameters."""
    assignments = ["status = ?", "next_attempt_at = ?", "claimed_until = NULL", "claim_token = NULL",
                   "nudged_at = NULL", "updated_at = ?"]
    values: list[Any] = [status, next_attempt_at, at or clock.now()]
    for name, value in columns.items():
        assignments.append(f"{name} = ?")
        values.append(value)
    statement = f"UPDATE {found.kind.table} SET {', '.join(assignments)} WHERE id = ? AND claim_token = ?"  # noqa: S608
    return statement, (*values, found.id, found.token)


def _riders(statements: tuple[str, ...]) -> str:
    """`also` statements as data-modifying `WITH` parts after `done`, each run only if it recorded."""
    return "".join(f", also{n} AS ({sql} AND EXISTS (SELECT 1 FROM done))"  # noqa: S608
                   for n, sql in enumerate(statements))


def release(found: Claim, *, until: datetime | None = None) -> bool:
    """Hand a claim back unused, the attempt not made (the pace said wait): the row is ready again
    in its first ready status, with its attempt count as before the claim, due at `until` (default
    now). False when the row was no longer ours."""
    moves = f", status = '{found.kind.ready[0]}'" if found.kind.in_flight else ""
    moment = clock.now()
    cursor = run_fixed(
        f"UPDATE {found.kind.table} SET claimed_until = NULL, claim_token = NULL, nudged_at = NULL, "  # noqa: S608
        f"attempts = attempts - 1, next_attempt_at = ?, updated_at = ?{moves} WHERE id = ? AND claim_token = ?",
        (until or moment, moment, found.id, found.token),
    )
    return bool(cursor.rowcount)


def decide(found: Claim, failure: PlatformFailure | Conflict, *, at: datetime | None = None) -> Next:
    """The row's next state after this attempt failed, by its kind's policy (nothing is written)."""
    return next_state(found.kind.policy, found.attempts, failure, at=at, settings=settings())


def fail(found: Claim, failure: PlatformFailure | Conflict, *, at: datetime | None = None,
         **columns: Any) -> Next | None:
    """Record a failed attempt as its kind's policy says (`decide`), with `columns` besides, if this
    worker still holds the row: the next state, or None when the row was no longer ours."""
    return finish_next(found, decide(found, failure, at=at), at=at, **columns)


def finish_next(found: Claim, step: Next, *, at: datetime | None = None, **columns: Any) -> Next | None:
    """`finish` with a decided next state (`decide`): None when the row was no longer ours."""
    if step.error is not None and found.kind.policy.error_column is not None:
        columns[found.kind.policy.error_column] = step.error
    held = finish(found, status=step.status, next_attempt_at=step.next_attempt_at, at=at, **columns)
    return step if held else None


def renew_lease(found: Claim, *, seconds: float | None = None, still: tuple[str, ...] = (), **columns: Any) -> bool:
    """Extend the lease of a claim that is still ours (a long piece of work between its steps), with
    `columns` written in the same statement; with `still`, only while the row's status is one of them.
    False: the row is no longer ours (its lease ran out and another worker has it, or it moved on)."""
    moment = clock.now()
    lease = moment + timedelta(seconds=seconds if seconds is not None else found.kind.lease())
    assignments = ["claimed_until = ?", "updated_at = ?", *(f"{name} = ?" for name in columns)]
    condition = "id = ? AND claim_token = ?"
    if still:
        condition += " AND status IN (" + ", ".join(f"'{status}'" for status in still) + ")"
    cursor = run_fixed(
        f"UPDATE {found.kind.table} SET {', '.join(assignments)} WHERE {condition}",  # noqa: S608 - names from code
        (lease, moment, *columns.values(), found.id, found.token),
    )
    return bool(cursor.rowcount)


def restart(kind: Kind, ids: list[str], *, status: str, next_attempt_at: datetime | None, nudge: bool = False,
            where: str = "", unclaimed: bool = False, **columns: Any) -> list[str]:
    """Put rows in `status` afresh, whoever held them: no claim, no attempts used, due at
    `next_attempt_at` (None: not due), `columns` written besides. `where` narrows it (SQL over the
    table's columns, from code); `unclaimed` leaves alone a row some worker holds now. Returns the
    ids changed; with `nudge`, enqueued after commit.
    A worker that held one finds its claim gone: its outcome is ignored."""
    if not ids:
        return []
    moment = clock.now()
    assignments = ["status = ?", "next_attempt_at = ?", "attempts = 0", "claimed_until = NULL",
                   "claim_token = NULL", "nudged_at = ?", "updated_at = ?", *(f"{name} = ?" for name in columns)]
    marks = ", ".join("?" * len(ids))
    condition = f"id IN ({marks})" + (f" AND {where}" if where else "")
    if unclaimed:
        condition += " AND claim_token IS NULL"
    due_now = nudge and next_attempt_at is not None and next_attempt_at <= moment and has_nudger()
    rows = db.execute_sql(
        _sql(f"UPDATE {kind.table} SET {', '.join(assignments)} WHERE {condition} RETURNING id"),  # noqa: S608
        (status, next_attempt_at, moment if due_now else None, moment, *columns.values(), *ids),
    ).fetchall()
    changed = [row[0] for row in rows]
    if due_now:
        nudge_after_commit(kind, changed)
    return changed


def arm(kind: Kind, rows: list[dict[str, Any]]) -> list[str]:
    """Make these rows of an armed kind ready now (inserted when missing), unless one is ready or in
    someone's hands already; runs in the caller's transaction. Returns the ids armed."""
    assert kind.idle is not None
    moment = clock.now()
    armed: list[str] = []
    when_due = (f" AND ({kind.table}.next_attempt_at IS NULL OR {kind.table}.next_attempt_at <= ?)"
                if kind.arm_when_due else "")
    ordered = sorted(rows, key=lambda item: item["id"])  # in id order: two armers wait, never deadlock
    if not ordered:
        return armed
    names = [*ordered[0], "status", "attempts", "next_attempt_at", "created_at", "updated_at"]
    values: list[Any] = []
    for row in ordered:  # one statement for them all: a round trip per row costs more than the rows
        values += [*(row[name] for name in ordered[0]), kind.ready[0], 0, moment, moment, moment]
    marks = ", ".join(["(" + ", ".join("?" * len(names)) + ")"] * len(ordered))
    found = db.execute_sql(
        _sql(f"INSERT INTO {kind.table} ({', '.join(names)}) VALUES {marks} ON CONFLICT (id) DO UPDATE SET "  # noqa: S608
             "status = ?, attempts = 0, next_attempt_at = ?, nudged_at = NULL, updated_at = ? "
             f"WHERE {kind.table}.status = ? AND {kind.table}.claim_token IS NULL{when_due} RETURNING id"),
        (*values, kind.ready[0], moment, moment, kind.idle, *((moment,) if kind.arm_when_due else ())),
    ).fetchall()
    armed += [item[0] for item in found]
    return armed


def settle_idle(found: Claim, **columns: Any) -> bool:
    """Finish an armed kind's run: back to idle until armed again."""
    assert found.kind.idle is not None
    return finish(found, status=found.kind.idle, **columns)


def postpone(kind: Kind, item_id: str, *, until: datetime) -> bool:
    """Move a ready, unclaimed row's next attempt later without using an attempt (the pace said wait)."""
    cursor = db.execute_sql(
        _sql(f"UPDATE {kind.table} SET next_attempt_at = ?, nudged_at = NULL, updated_at = ? "  # noqa: S608
             f"WHERE id = ? AND status IN ({kind._ready_sql}) AND claim_token IS NULL"),
        (until, clock.now(), item_id),
    )
    return bool(cursor.rowcount)


# -- the sweeper ---------------------------------------------------------------------------------
def _limited(kind: Kind, condition: str, order: str, limit: int) -> str:
    # Several workers tick at once: on PostgreSQL they skip each other's rows instead of waiting.
    lock = " FOR UPDATE SKIP LOCKED" if is_postgres() else ""
    return f"SELECT id FROM {kind.table} WHERE {condition} ORDER BY {order} LIMIT {int(limit)}{lock}"  # noqa: S608


def take_batch(table: str, *, pending: str, order: str, mark: dict[str, Any], returning: tuple[str, ...],
               limit: int) -> list[tuple[Any, ...]]:
    """Claim up to `limit` rows of a batch kind in the caller's transaction: the rows matching
    `pending` (SQL from code) get `mark`, so that no other worker takes them; their `returning`
    columns come back. Workers taking batches at once skip each other's rows on PostgreSQL."""
    lock = " FOR UPDATE SKIP LOCKED" if is_postgres() else ""
    chosen = f"SELECT id FROM {table} WHERE {pending} ORDER BY {order} LIMIT {int(limit)}{lock}"  # noqa: S608
    assignments = ", ".join(f"{name} = ?" for name in mark)
    rows = db.execute_sql(
        _sql(f"UPDATE {table} SET {assignments} WHERE id IN ({chosen}) AND {pending} "  # noqa: S608
             f"RETURNING {', '.join(returning)}"),
        tuple(mark.values()),
    ).fetchall()
    return [tuple(row) for row in rows]


@dataclass(frozen=True)
class Swept:
    nudged: list[str]
    lost: list[str]


def sweep(kind: Kind, *, limit: int | None = None) -> Swept:
    """Settle expired leases and mark up to `limit` due rows as nudged; returns both sets of ids.

    Runs in the caller's transaction; the nudged rows are enqueued after it commits.
    """
    limit = limit or kind.sweep_batch
    if kind.arm is not None:
        arm(kind, arm_rows(kind))
    moment = clock.now()
    lost: list[str] = []
    if kind.in_flight and kind.lost:
        # The claim token stays: the call may still answer after its lease, and that answer counts.
        expired = kind.expired
        undue = ", next_attempt_at = NULL" if kind.due_indexed else ""
        rows = db.execute_sql(
            _sql(f"UPDATE {kind.table} SET status = '{kind.lost}', claimed_until = NULL{undue}, "  # noqa: S608
                 f"updated_at = ? WHERE id IN ({_limited(kind, expired, 'claimed_until', limit)}) AND {expired} "
                 "RETURNING id"),
            (moment, moment, moment),
        ).fetchall()
        lost = [row[0] for row in rows]
        if lost and kind.on_lost is not None:
            kind.on_lost(lost)
    # A row nudged this long ago and still unclaimed lost its task (its consumer died between taking
    # the task and claiming the row): enqueue it again. A duplicate task finds the row claimed or
    # done and does nothing.
    stale = moment - timedelta(seconds=kind.lease())
    due = kind.due
    rows = db.execute_sql(
        _sql(f"UPDATE {kind.table} SET nudged_at = ? "  # noqa: S608
             f"WHERE id IN ({_limited(kind, due, 'next_attempt_at', limit)}) AND {due} RETURNING id"),
        (moment, moment, moment, stale, moment, moment, stale),
    ).fetchall()
    nudged = [row[0] for row in rows]
    if kind.dispatch is not None and nudged:
        dispatch = kind.dispatch
        db.after_commit(lambda: dispatch(nudged))
    else:
        nudge_after_commit(kind, nudged)
    return Swept(nudged, lost)
