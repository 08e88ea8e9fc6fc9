"""The send pace of each connected account, shared by every process and worker.

Platforms cap how fast one account may send (Telegram about 30 messages a second per bot, WhatsApp
80 per number) and answer 429 past it. Every sender asks `reserve()` for a slot first: the pace is
a GCRA (a "theoretical arrival time" per account): a slot at `max(now, next_slot, paused_until)`,
and `next_slot` moves one interval on. A caller waits until its slot, or, when that is further off
than it is willing to wait, gets nothing reserved and comes back later. A platform's `Retry-After`
`pause()`s the account for everyone.

Where the pace is kept: a row per account in the database on the embedded setup (one SQLite file,
one process), and Redis on the scale-out setup (several workers, one shared clock: Redis's own).
"""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass
from typing import Any, Protocol

from peewee import Case

from kit import metrics
from kit.settings import Settings
from storage import hot
from storage.db import db, is_postgres
from storage.models import PaceSlot


@dataclass(frozen=True)
class Slot:
    wait: float  # seconds until the slot (0: send now)
    granted: bool  # False: the slot is further than the caller would wait, and nothing was reserved


class Backend(Protocol):
    def reserve(self, account_id: str, interval: float, max_wait: float) -> Slot: ...

    def pause(self, account_id: str, seconds: float) -> None: ...


class StoragePacer:
    """The pace in the `pace_slot` table: one statement per reservation, in a short write transaction.

    The upsert takes the slot only when it is within the caller's wait; otherwise it returns nothing
    and changes nothing, and a read says how long the wait would be.
    """

    _RESERVE = (
        "INSERT INTO pace_slot (account_id, next_slot, paused_until) VALUES (?, ?, 0) "
        "ON CONFLICT (account_id) DO UPDATE SET "
        "next_slot = {greatest}(?, pace_slot.next_slot, pace_slot.paused_until) + ? "
        "WHERE {greatest}(?, pace_slot.next_slot, pace_slot.paused_until) - ? <= ? "
        "RETURNING next_slot"
    )
    _RESERVE_PG = _RESERVE.format(greatest="GREATEST")
    _RESERVE_SQLITE = _RESERVE.format(greatest="MAX")

    def reserve(self, account_id: str, interval: float, max_wait: float) -> Slot:
        now = time.time()
        sql = self._RESERVE_PG if is_postgres() else self._RESERVE_SQLITE
        # A write transaction of its own, unless the caller's (a message's claim) is one already: a
        # savepoint would be two more statements for nothing that could fail apart.
        with contextlib.nullcontext() if db.in_transaction() else db.atomic():
            row = hot.run(sql, (account_id, now + interval, now, interval, now, now, max_wait)).fetchone()
            if row is not None:
                return Slot(max(0.0, float(row[0]) - interval - now), True)
            held = PaceSlot.get(PaceSlot.account_id == account_id)
        return Slot(max(now, held.next_slot, held.paused_until) - now, False)

    def pause(self, account_id: str, seconds: float) -> None:
        until = time.time() + seconds
        with db.atomic():
            PaceSlot.insert(account_id=account_id, paused_until=until).on_conflict(
                conflict_target=[PaceSlot.account_id],
                update={PaceSlot.paused_until: _greatest(PaceSlot.paused_until, until)},
            ).execute()


def _greatest(column: Any, value: float) -> Any:
    return Case(None, [(column < value, value)], column)


# KEYS[1]: the account's hash. ARGV: interval, max wait (seconds). Redis's clock decides, so workers on
# several machines share one. Answers the wait as a string, negative when nothing was reserved.
_RESERVE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local interval = tonumber(ARGV[1])
local max_wait = tonumber(ARGV[2])
local next_slot = tonumber(redis.call('HGET', KEYS[1], 'next') or '0')
local paused = tonumber(redis.call('HGET', KEYS[1], 'paused') or '0')
local start = math.max(now, next_slot, paused)
local wait = start - now
if wait > max_wait then
  return tostring(-wait - 0.000001)
end
if interval > 0 then
  redis.call('HSET', KEYS[1], 'next', tostring(start + interval))
  redis.call('EXPIRE', KEYS[1], 86400)
end
return tostring(wait)
"""

_PAUSE = """
local t = redis.call('TIME')
local until_ = tonumber(t[1]) + tonumber(t[2]) / 1000000 + tonumber(ARGV[1])
local paused = tonumber(redis.call('HGET', KEYS[1], 'paused') or '0')
if until_ > paused then
  redis.call('HSET', KEYS[1], 'paused', tostring(until_))
  redis.call('EXPIRE', KEYS[1], 86400)
end
return 1
"""


class RedisPacer:
    def __init__(self, url: str) -> None:
        import redis

        self.client = redis.Redis.from_url(url)
        self._reserve = self.client.register_script(_RESERVE)
        self._pause = self.client.register_script(_PAUSE)
        self._held = threading.local()

    @staticmethod
    def _key(account_id: str) -> str:
        return f"switchboard:pace:{account_id}"

    def reserve(self, account_id: str, interval: float, max_wait: float) -> Slot:
        key, args = self._key(account_id), (repr(interval), repr(max_wait))
        answer = self._reserve_held(key, args)
        if answer is None:
            answer = self._reserve(keys=[key], args=list(args))
        value = float(answer)
        return Slot(-value, False) if value < 0 else Slot(value, True)

    def _reserve_held(self, key: str, args: tuple[str, str]) -> Any:
        """The script's answer through this thread's own connection (`EVALSHA` straight on it), or
        None when that failed in any way (the script not loaded yet, the connection lost): the
        client's usual call follows, which loads the script and retries on a fresh connection. A
        reservation whose answer was lost may then count twice: the account's next slot is one
        interval later, never earlier.

        Why: one message reserves once, and through the client (its pool's get and release, retries,
        instrumentation) a reservation cost the sender ~235,000 instructions, ~90,000 this way; the
        connection is the pool's kind, made with the pool's settings (address, TLS, timeouts)."""
        connection = getattr(self._held, "connection", None)
        if connection is None:
            pool = self.client.connection_pool
            connection = self._held.connection = pool.connection_class(**pool.connection_kwargs)
        try:
            connection.send_command("EVALSHA", self._reserve.sha, 1, key, *args)
            return connection.read_response()
        except Exception:  # any failure: the usual call decides
            connection.disconnect()
            return None

    def pause(self, account_id: str, seconds: float) -> None:
        self._pause(keys=[self._key(account_id)], args=[repr(seconds)])


_backend: Backend = StoragePacer()


def configure(settings: Settings) -> Backend:
    """Keep the pace where every process that sends can see it: Redis when the queue is Redis."""
    global _backend
    scheme = settings.queue_url.split("://", 1)[0]
    _backend = RedisPacer(settings.queue_url) if scheme in {"redis", "rediss"} else StoragePacer()
    return _backend


# Platforms count in rolling windows, and a message leaves a little after its slot (thread wake-up,
# the network): pacing this much under the published rate keeps that jitter from tipping a window
# over into a 429, which would pause the account for a whole second.
PACE_MARGIN = 0.97


def reserve(account_id: str, per_second: float | None, *, max_wait: float) -> Slot:
    """A slot to send one message for the account, at most `max_wait` seconds from now."""
    interval = 1.0 / (per_second * PACE_MARGIN) if per_second else 0.0
    slot = _backend.reserve(account_id, interval, max_wait)
    metrics.pacing_wait(slot.granted, slot.wait)
    return slot


def pause(account_id: str, seconds: float) -> None:
    """No message of the account before `seconds` from now (the platform said to slow down)."""
    if seconds > 0:
        _backend.pause(account_id, seconds)
