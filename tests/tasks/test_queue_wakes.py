"""An idle consumer thread waits long on Redis (a command every `READ_TIMEOUT` seconds, not five a
second), and a graceful stop wakes it instead of waiting that out; the outbox's nudges are the
service's, not each process's."""

from __future__ import annotations

import threading
import time

import pytest
from redis import ConnectionPool

from service.webhooks.work import DISPATCH_WORK
from tasks import engine as engine_tasks
from tasks import queue
from tests.conftest import QUEUE_URL

DISPATCH = DISPATCH_WORK.name

pytestmark = pytest.mark.skipif(not QUEUE_URL, reason="the queue is on Redis only on the scale-out setup")


def test_a_task_waiting_is_taken_before_a_wake_up(service):
    storage = queue.huey.storage
    assert isinstance(storage, queue.WakeableRedisStorage)
    storage.enqueue(b"task")
    storage.wake(1)
    assert storage.dequeue() == b"task"
    assert storage.dequeue() is None  # the wake-up: nothing to do, look at the stop flag
    assert storage.conn.llen(queue.WAKE_KEY) == 0


def test_a_graceful_stop_wakes_the_threads_waiting_on_redis(service, monkeypatch):
    # An hour's wait (and no socket timeout to cut it): without the wake-up, the stop would hang that long.
    pool = ConnectionPool.from_url(service.queue_url, socket_timeout=None)
    monkeypatch.setattr(queue.huey, "storage", queue.WakeableRedisStorage("switchboard", connection_pool=pool,
                                                                          read_timeout=3600))
    storage = queue.huey.storage
    before = _waiting(storage)
    consumer = queue.consumer(workers=3, embedded=True)
    consumer.start()
    deadline = time.monotonic() + 30
    while _waiting(storage) < before + 3:  # every thread in BRPOP, not merely started
        assert time.monotonic() < deadline
        time.sleep(0.02)
    stopping = threading.Thread(target=consumer.stop, kwargs={"graceful": True})
    stopping.start()
    stopping.join(timeout=60)
    assert not stopping.is_alive()
    assert not any(thread.is_alive() for _, thread in consumer.worker_threads)


def _waiting(storage: queue.WakeableRedisStorage) -> int:
    """Connections of this Redis database blocked in BRPOP."""
    db = storage.conn.connection_pool.connection_kwargs.get("db", 0)
    return sum(1 for client in storage.conn.client_list() if client["cmd"] == "brpop" and int(client["db"]) == db)


def test_the_outbox_is_nudged_once_an_interval_for_the_whole_service(service, monkeypatch):
    # Every process that commits events nudges the outbox's dispatch, whose task takes whatever is
    # pending whoever wrote it: within an interval, another process's nudge adds no task.
    monkeypatch.setattr(engine_tasks, "NUDGE_INTERVAL", 30.0)  # no interval ends during the test
    monkeypatch.setattr(engine_tasks, "_last_nudge", {})
    storage = queue.huey.storage
    storage.flush_queue()
    key = engine_tasks.nudged_key(DISPATCH)
    storage.conn.delete(key)
    nudge = engine_tasks.batch_nudger(DISPATCH)

    nudge()
    assert storage.queue_size() == 1
    nudge()  # this process again: its own clock says no
    monkeypatch.setattr(engine_tasks, "_last_nudge", {})  # another process, with a clock of its own
    nudge()
    assert storage.queue_size() == 1
    assert 0 < storage.conn.pttl(key) <= 30_000  # the service's interval ends by itself

    storage.conn.delete(key)  # the interval over
    monkeypatch.setattr(engine_tasks, "_last_nudge", {})
    nudge()
    assert storage.queue_size() == 2
    storage.flush_queue()
