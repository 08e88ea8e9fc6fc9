"""The one scheduler: a tick every `SWITCHBOARD_SCHEDULER_TICK_SECONDS` (default 1 s).

Huey's periodic tasks resolve to the minute, too coarse for "sendNow within a tick", so each
consumer process runs this loop in a thread. Every tick runs the registered jobs; a job claims due
rows from the database with one conditional UPDATE and enqueues their work, so several workers
ticking at once never do the same work twice. The composition root installs the jobs (`set_jobs`);
each does a bounded amount of work per tick, so one busy job cannot starve the others.

The tick is the service's, not each process's: before it, a worker takes the turn (`take_turn`, one
conditional UPDATE of a row of `scheduler_state`), and only the worker that gets it runs the jobs
of that interval. An idle sweep is most of an idle worker's work, so without the turn every worker
added its full cost a second, whether or not there was anything to do. The turn is a time, not an
owner: a worker that dies simply stops taking it, and another takes the next one (within about two
intervals), so nothing has to expire or be handed over.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from kit import clock
from service.accounts import choices as connect_choices
from service.common import health, idempotency, ratelimit
from service.identity import sessions
from storage.db import connection, db, is_postgres
from storage.hot import run_fixed

log = logging.getLogger("switchboard.scheduler")

TickJob = Callable[[], None]
_jobs: list[tuple[str, TickJob]] = []


def set_jobs(jobs: list[TickJob]) -> None:
    _jobs[:] = [(f"{fn.__module__}.{fn.__qualname__}", fn) for fn in jobs]


_housekeeping_every = 60
_ticks = 0


def housekeeping() -> None:
    """Expired idempotency records, old rate-limit windows, sessions and connect choices go about once
    a minute (audit rows past their retention: tasks/retention.py)."""
    global _ticks
    _ticks += 1
    if _ticks % _housekeeping_every == 1:
        with db.atomic():
            idempotency.forget_expired()
            ratelimit.forget_old_windows()
            sessions.forget_expired()
            connect_choices.forget_expired()
        health.record_tick()


def _run_jobs() -> None:
    for name, job in list(_jobs):
        try:
            job()
        except Exception:  # one failing job must not stop the others or the loop
            log.exception("scheduler job %s failed", name)


def tick() -> None:
    with connection():
        _run_jobs()


TURN = "tick_turn"
# A turn is taken once the last one is this share of an interval old: a little less than a whole
# one, so the worker that took it takes the next one too (an interval later, give or take its
# timer), and another worker's wake-up that falls just short of it does not start a second tick.
TURN_SHARE = 0.8


def _turn_sql() -> tuple[str, str]:
    """The statements of `take_turn`, on the database's own clock (one clock for every worker on
    every machine, and not the service's `clock`, which tests move): seconds since 1970 as text."""
    if is_postgres():
        moment = "EXTRACT(EPOCH FROM statement_timestamp())"
        # One round trip whether the turn is free or not: the count says whether the row exists.
        take = (f"WITH taken AS (UPDATE scheduler_state SET value = CAST({moment} AS text), updated_at = ? "  # noqa: S608
                f"WHERE name = '{TURN}' AND (value IS NULL OR CAST(value AS double precision) <= {moment} - ?) "
                f"RETURNING 1) SELECT (SELECT count(*) FROM taken), (SELECT count(*) FROM scheduler_state "
                f"WHERE name = '{TURN}')")
    else:
        moment = "((julianday('now') - 2440587.5) * 86400.0)"
        take = (f"UPDATE scheduler_state SET value = CAST({moment} AS TEXT), updated_at = ? WHERE name = '{TURN}' "  # noqa: S608
                f"AND (value IS NULL OR CAST(value AS REAL) <= {moment} - ?) RETURNING 1, 1")
    first = (f"INSERT INTO scheduler_state (name, value, updated_at) VALUES ('{TURN}', CAST({moment} AS TEXT), ?) "  # noqa: S608
             "ON CONFLICT (name) DO NOTHING")
    return take, first


def take_turn(interval: float) -> bool:
    """True when this worker runs the scheduler's jobs of this interval: no worker took the turn in
    the last `TURN_SHARE` of one. One statement, on its own (it commits by itself); a worker that
    does not get the turn writes nothing."""
    take, first = _turn_sql()
    row: Any = run_fixed(take, (clock.now(), interval * TURN_SHARE)).fetchone()
    if row is not None and row[0]:
        return True
    if row is not None and row[1]:
        return False
    # No row yet (a new database, or one emptied): the first worker to insert it has the turn.
    return bool(run_fixed(first, (clock.now(),)).rowcount)


class Ticker:
    def __init__(self, interval: float) -> None:
        self.interval = interval
        self.turns = 0  # ticks this worker ran
        self.passed = 0  # ticks another worker had the turn of
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="switchboard-scheduler", daemon=True)

    def start(self) -> Ticker:
        self._thread.start()
        return self

    def _run(self) -> None:
        # Ticks start an interval apart (not an interval after the last one ended): the worker that
        # has the turn is then back for the next one as it frees, before another worker's wake-up
        # can take it. A tick that overran its interval is followed by a whole interval's rest.
        due = time.monotonic()
        while not self._stop.is_set():
            try:
                self._tick()
            except Exception:
                # No connection (a database restarting): the next tick tries again. Let through, it
                # ended this thread, and with it every sweep of the worker, for good.
                log.exception("the scheduler's tick failed; the next one tries again")
            due += self.interval
            moment = time.monotonic()
            if due < moment:
                due = moment + self.interval
            self._stop.wait(due - moment)

    def _tick(self) -> None:
        with connection():
            try:
                ours = take_turn(self.interval)
            except Exception:  # the turn only saves work: without an answer, tick as if alone
                log.exception("the scheduler's turn could not be read; ticking anyway")
                ours = True
            if not ours:
                self.passed += 1
                return
            self.turns += 1
            _run_jobs()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
