"""The one scheduler: a tick every `SWITCHBOARD_SCHEDULER_TICK_SECONDS` (default 1 s).

Huey's periodic tasks resolve to the minute, too coarse for "sendNow within a tick", so each
consumer process runs this loop in a thread. Every tick runs the registered jobs; a job claims due
rows from the database with one conditional UPDATE and enqueues their work, so several workers
ticking at once never do the same work twice. The composition root installs the jobs (`set_jobs`);
each does a bounded amount of work per tick, so one busy job cannot starve the others.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from service.accounts import choices as connect_choices
from service.identity import sessions
from service.kit import clock, idempotency, ratelimit
from storage.db import connection, db
from storage.models import SchedulerState

log = logging.getLogger("switchboard.scheduler")

TickJob = Callable[[], None]
_jobs: list[tuple[str, TickJob]] = []


def set_jobs(jobs: list[TickJob]) -> None:
    _jobs[:] = [(f"{fn.__module__}.{fn.__qualname__}", fn) for fn in jobs]


def _record_tick() -> None:
    with db.atomic():
        SchedulerState.insert(name="last_tick", value=clock.iso(clock.now()), updated_at=clock.now()).on_conflict(
            conflict_target=[SchedulerState.name],
            update={SchedulerState.value: clock.iso(clock.now()), SchedulerState.updated_at: clock.now()},
        ).execute()


_housekeeping_every = 60
_ticks = 0


def housekeeping() -> None:
    """Expired idempotency records and old rate-limit windows go about once a minute."""
    global _ticks
    _ticks += 1
    if _ticks % _housekeeping_every == 1:
        with db.atomic():
            idempotency.forget_expired()
            ratelimit.forget_old_windows()
            sessions.forget_expired()
            connect_choices.forget_expired()
        _record_tick()


def tick() -> None:
    with connection():
        for name, job in list(_jobs):
            try:
                job()
            except Exception:  # one failing job must not stop the others or the loop
                log.exception("scheduler job %s failed", name)


class Ticker:
    def __init__(self, interval: float) -> None:
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="switchboard-scheduler", daemon=True)

    def start(self) -> Ticker:
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            tick()
            self._stop.wait(self.interval)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
