"""The scheduler's sweep asks one question of every kind before sweeping any: a message whose task
was lost is still handed out again, a send whose worker died is still settled `unknown`, and a tick
with nothing to do sweeps no kind at all."""

from __future__ import annotations

import datetime as dt

import pytest

from service.engine import core as engine
from service.inbox import work as inbox_work
from storage.db import connection, db
from storage.models import Message
from tasks import engine as engine_tasks
from tests.support.factories import queue_message


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
