"""An idle consumer thread waits long on Redis (a command every `READ_TIMEOUT` seconds, not five a
second), and a graceful stop wakes it instead of waiting that out."""

from __future__ import annotations

import threading
import time

import pytest
from redis import ConnectionPool

from tasks import queue
from tests.conftest import QUEUE_URL

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
