"""The one Huey of the service.

It exists at import so tasks can be declared with `@huey.task()`, but its storage is chosen at
start-up from `SWITCHBOARD_QUEUE_URL` by `configure()`: SqliteHuey in its own file for the
embedded setup, RedisHuey for `redis://`. Huey is only the nudge: durable work lives in database
rows that a sweeper re-enqueues (Huey loses a task whose consumer dies).
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from huey import Huey
from huey.consumer import Consumer
from huey.storage import MemoryStorage, RedisStorage, SqliteStorage

from service.kit.settings import Settings
from storage import files

huey = Huey("switchboard", results=False, utc=True, storage_class=MemoryStorage)


def build_storage(url: str) -> MemoryStorage | SqliteStorage | RedisStorage:
    parts = urlsplit(url)
    if parts.scheme == "sqlite":
        path = parts.path[1:] if parts.path.startswith("//") else parts.path
        files.private_file(Path(path))
        return SqliteStorage("switchboard", filename=path, journal_mode="wal", timeout=10)
    if parts.scheme in {"redis", "rediss"}:
        # An idle consumer thread waits in BRPOP for at most `read_timeout` seconds before it looks
        # at its stop flag: a graceful stop (every service and worker shutdown) waits that long.
        # A fraction of a second (Redis 6 or later) costs each idle thread five cheap commands a second.
        return RedisStorage("switchboard", url=url, blocking=True, read_timeout=0.2)
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


class EmbeddedConsumer(Consumer):
    """A consumer that lives inside another server's process: it leaves signals to that server."""

    def _set_signal_handlers(self) -> None:
        pass


def consumer(*, workers: int, embedded: bool) -> Consumer:
    # An idle consumer polls SQLite at most every 0.1 s (Redis blocks on BRPOP instead): nudged work
    # such as a just-committed webhook event starts within that, not at the next scheduler tick.
    cls = EmbeddedConsumer if embedded else Consumer
    return cls(huey, workers=workers, worker_type="thread", periodic=True, initial_delay=0.05,
               max_delay=0.1, backoff=1.5, check_worker_health=True)
