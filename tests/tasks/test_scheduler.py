"""The scheduler's tick is the service's, not each worker's: whichever worker takes an interval's
turn runs the jobs, the others write nothing, and when the one ticking stops another takes over."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from storage.db import connection
from storage.models import SchedulerState
from tasks import scheduler


@pytest.fixture
def counted(service) -> Iterator[list[str]]:
    """The scheduler's jobs replaced by one that notes the thread it ran in."""
    import threading

    ran: list[str] = []
    saved = list(scheduler._jobs)
    scheduler.set_jobs([lambda: ran.append(threading.current_thread().name)])
    try:
        yield ran
    finally:
        scheduler._jobs[:] = saved


def _until(condition, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the scheduler did not get there"
        time.sleep(0.02)


def test_a_turn_is_taken_once_an_interval(service):
    with connection():
        assert scheduler.take_turn(60) is True  # no row yet: the first worker inserts it
        assert scheduler.take_turn(60) is False  # another worker, the same interval
        # The turn taken a whole interval ago (the worker that took it died or waited): free again.
        taken = float(SchedulerState.get_by_id(scheduler.TURN).value)
        SchedulerState.update(value=str(taken - 60)).where(SchedulerState.name == scheduler.TURN).execute()
        assert scheduler.take_turn(60) is True
        assert scheduler.take_turn(60) is False


def test_two_workers_ticking_run_the_jobs_once_an_interval(counted):
    # A long interval: each ticker's first tick is at its start, so both have asked for the turn of
    # the same interval once they have each asked once.
    first, second = scheduler.Ticker(60), scheduler.Ticker(60)
    first.start()
    second.start()
    try:
        _until(lambda: first.turns + first.passed >= 1 and second.turns + second.passed >= 1)
    finally:
        first.stop()
        second.stop()
    assert len(counted) == 1
    assert sorted([first.turns, second.turns]) == [0, 1]
    assert sorted([first.passed, second.passed]) == [0, 1]


def test_when_the_worker_ticking_stops_another_takes_the_turn(counted):
    first = scheduler.Ticker(0.3).start()
    try:
        _until(lambda: first.turns >= 2)
        second = scheduler.Ticker(0.3).start()
        try:
            _until(lambda: second.passed >= 1 or second.turns >= 1)
            first.stop()
            before = second.turns
            _until(lambda: second.turns >= before + 3)
        finally:
            second.stop()
    finally:
        first.stop()
    assert second.turns >= 3


def test_the_tick_outlives_a_database_that_refuses_connections(counted, monkeypatch):
    """A database restarting refuses the tick's connection: that tick is skipped, the next ones run.
    (Let through, the failure ended the scheduler's thread and every sweep of the worker with it.)"""
    from peewee import OperationalError

    refusals = [OperationalError("the database system is shutting down")] * 3

    def connecting():
        if refusals:
            raise refusals.pop()
        return connection()

    monkeypatch.setattr(scheduler, "connection", connecting)
    ticker = scheduler.Ticker(0.05).start()
    try:
        _until(lambda: len(counted) >= 2)
    finally:
        ticker.stop()
    assert refusals == []
