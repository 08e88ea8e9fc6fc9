"""The service's health: whether its database and its queue answer, and when the scheduler last ticked.

The queue belongs to `tasks/`, which the service may not import: the composition root hands its
probe over at start-up (`configure`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from kit import clock
from kit.settings import VERSION
from kit.shapes import Record
from storage import db
from storage.models import SchedulerState

State = Literal["ok", "down"]


class Health(Record):
    status: State
    version: str
    database: State
    queue: State


_queue_answers: Callable[[], bool] = lambda: False  # noqa: E731 - until the composition root says


def configure(*, queue_answers: Callable[[], bool]) -> None:
    global _queue_answers
    _queue_answers = queue_answers


def report() -> Health:
    database: State = "ok" if db.ping() else "down"
    queue: State = "ok" if _queue_answers() else "down"
    status: State = "ok" if database == queue == "ok" else "down"
    return Health(status=status, version=VERSION, database=database, queue=queue)


def record_tick() -> None:
    """The scheduler's last tick, for operators (`scheduler_state`'s `last_tick`), in its own transaction."""
    moment = clock.now()
    with db.db.atomic():
        SchedulerState.insert(name="last_tick", value=clock.iso(moment), updated_at=moment).on_conflict(
            conflict_target=[SchedulerState.name],
            update={SchedulerState.value: clock.iso(moment), SchedulerState.updated_at: moment},
        ).execute()
