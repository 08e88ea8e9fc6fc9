"""The one Huey of the service.

It exists at import so tasks can be declared with `@huey.task()`, but its storage is chosen at
start-up from `SWITCHBOARD_QUEUE_URL` by `configure()`: SqliteHuey in its own file for the
embedded setup, RedisHuey for `redis://`. Huey is only the nudge: durable work lives in database
rows that a sweeper re-enqueues (Huey loses a task whose consumer dies).
"""

from __future__ import annotations

import secrets
import time
from pathlib import Path
from urllib.parse import urlsplit

from huey import Huey
from huey.consumer import Consumer
from huey.storage import MemoryStorage, RedisStorage, SqliteStorage
from redis.exceptions import TimeoutError as RedisTimeout

from kit import files
from kit.settings import Settings

huey = Huey("switchboard", results=False, utc=True, storage_class=MemoryStorage)


class WakeableRedisStorage(RedisStorage):
    """Huey's Redis storage whose idle consumer threads a stop wakes at once.

    Each idle thread waits in BRPOP on the queue and on a list of this process's own (`WAKE_KEY`);
    `wake` pushes items there, so a graceful stop need not wait out `read_timeout`, and the wait
    can be long: an idle thread costs a command every `read_timeout` seconds instead of five a
    second. The queue is named first, so a task waiting there is taken before a wake-up. The key is
    the process's, not the storage object's: threads started on one configured storage still hear
    a wake-up sent through the next one (tests configure it again while a consumer runs).
    """

    def dequeue(self) -> bytes | None:
        try:
            found = self.conn.brpop([self.queue_key, WAKE_KEY], timeout=self.read_timeout)
        except RedisTimeout:
            return None
        if found is None or found[0] == WAKE_KEY_BYTES:
            return None
        return found[1]  # type: ignore[no-any-return]

    def wake(self, count: int) -> None:
        # The key expires: a wake-up no thread took (it was busy, and stopped without waiting) goes.
        with self.conn.pipeline() as pipe:
            pipe.lpush(WAKE_KEY, *([b"wake"] * count))
            pipe.expire(WAKE_KEY, 60)
            pipe.execute()


WAKE_KEY = f"huey.redis.switchboard.wake.{secrets.token_hex(8)}"
WAKE_KEY_BYTES = WAKE_KEY.encode()


# An idle consumer thread waits this long in BRPOP before it looks again (at its stop flag: a stop
# wakes it sooner, see `WakeableRedisStorage`). Under the Redis client's own socket timeout (5 s by
# default in redis-py 8), which would cut a longer wait with an error.
READ_TIMEOUT = 4.0


def build_storage(url: str) -> MemoryStorage | SqliteStorage | RedisStorage:
    parts = urlsplit(url)
    if parts.scheme == "sqlite":
        path = parts.path[1:] if parts.path.startswith("//") else parts.path
        files.private_file(Path(path))
        return SqliteStorage("switchboard", filename=path, journal_mode="wal", timeout=10)
    if parts.scheme in {"redis", "rediss"}:
        return WakeableRedisStorage("switchboard", url=url, blocking=True, read_timeout=READ_TIMEOUT)
    if parts.scheme == "memory":
        return MemoryStorage("switchboard")
    raise ValueError(f"unsupported queue URL scheme: {parts.scheme!r}")


def configure(settings: Settings) -> Huey:
    huey.storage = build_storage(settings.queue_url)
    return huey


def ping() -> bool:
    """True when the queue's storage answers."""
    try:
        huey.storage.queue_size()
        return True
    except Exception:
        return False


class WakingConsumer(Consumer):
    """A consumer whose stop wakes its threads waiting on Redis (`WakeableRedisStorage`)."""

    def stop(self, graceful: bool = False) -> None:
        self.stop_flag.set()
        storage = self.huey.storage
        # Another consumer of this process (a test's second app) may take a wake-up meant for ours:
        # it only goes back to waiting. So wake whoever is still waiting, a few times over.
        for _ in range(3):
            waiting = [thread for _, thread in self.worker_threads if thread.is_alive()]
            if not waiting or not isinstance(storage, WakeableRedisStorage):
                break
            try:
                storage.wake(len(waiting))
            except Exception:  # Redis gone: the threads' BRPOP fails and they stop anyway
                break
            deadline = time.monotonic() + 0.5
            for thread in waiting:
                thread.join(max(0.0, deadline - time.monotonic()))
        super().stop(graceful=graceful)


class EmbeddedConsumer(WakingConsumer):
    """A consumer that lives inside another server's process: it leaves signals to that server."""

    def _set_signal_handlers(self) -> None:
        pass


# Nothing enqueues a delayed or periodic Huey task (a row's `next_attempt_at` says when work is due,
# and the scheduler's tick hands it out), so Huey's own scheduler thread need only look once a minute
# (its longest interval) at a schedule that stays empty, not once a second.
HUEY_SCHEDULER_SECONDS = 60


def consumer(*, workers: int, embedded: bool) -> Consumer:
    # An idle consumer polls SQLite at most every 0.1 s (Redis blocks on BRPOP instead): nudged work
    # such as a just-committed webhook event starts within that, not at the next scheduler tick.
    cls = EmbeddedConsumer if embedded else WakingConsumer
    return cls(huey, workers=workers, worker_type="thread", periodic=False, initial_delay=0.05,
               max_delay=0.1, backoff=1.5, check_worker_health=True, scheduler_interval=HUEY_SCHEDULER_SECONDS)
