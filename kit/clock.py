"""Time in one place: naive UTC in storage, ISO 8601 with `Z` on the wire."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

# Added to the wall clock: zero in production. Tests of schedules (a sequence step due in a day, a
# broadcast across a DST change) move it forward instead of sleeping; every due time the service
# computes and every "is it due" check reads `now()`, so work falls due exactly as it would later.
_offset = timedelta(0)
_offset_seconds = 0.0  # the same, for `epoch()`: every request reads it


def now() -> datetime:
    """The current instant as a naive UTC datetime (what storage keeps)."""
    return datetime.now(UTC).replace(tzinfo=None) + _offset


def epoch() -> float:
    """The current instant in seconds since the epoch (windows counted in whole seconds)."""
    return time.time() + _offset_seconds


def epoch_of(moment: datetime) -> float:
    """A stored instant (naive UTC) in `epoch()`'s seconds."""
    return moment.replace(tzinfo=UTC).timestamp()


def advance(seconds: float) -> None:
    """Move this process's clock forward (tests only; see `_offset`)."""
    global _offset, _offset_seconds
    _offset += timedelta(seconds=seconds)
    _offset_seconds = _offset.total_seconds()


def reset() -> None:
    global _offset, _offset_seconds
    _offset = timedelta(0)
    _offset_seconds = 0.0


def iso(value: datetime | None) -> str | None:
    if value is None:
        return None
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_iso(text: str) -> datetime | None:
    """An ISO 8601 instant (`Z` or an offset; naive taken as UTC) as naive UTC; None if it is not one."""
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    return value
