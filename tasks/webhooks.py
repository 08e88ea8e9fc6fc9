"""The scheduler's job for the event outbox: events past their retention go (service/webhooks/retention.py).

One look a minute; while a look finds a whole batch, a batch every tick, so that a backlog (the
first days after an upgrade, or a retention shortened) drains at up to a thousand events a second
without one tick holding up the other jobs.
"""

from __future__ import annotations

from collections.abc import Callable

from service.webhooks import retention


class Retention:
    def __init__(self, forget: Callable[[], int], every: int = 60, batch: Callable[[], int] | None = None) -> None:
        self.forget = forget  # deletes a batch, returns how many
        self.every = every  # ticks between looks when nothing is behind
        self.batch = batch or (lambda: retention.BATCH)  # a whole batch deleted: more are behind it
        self.ticks = 0
        self.behind = False

    def __call__(self) -> None:
        self.ticks += 1
        if self.behind or self.ticks % self.every == 1:
            self.behind = self.forget() == self.batch()


_job = Retention(retention.forget_old_events)


def forget_old_events() -> None:
    _job()
