"""When scheduled work is due: `scheduledFor` (with an offset, or naive plus an IANA `timezone`) as
the naive UTC instant storage keeps. Broadcasts and posts read their times here, so both follow the
contract's DST rules the same way.

- an offset or `Z`: that instant; `timezone` is kept only for display;
- naive: read in `timezone` (required then). A wall time that a spring-forward gap skips (02:30 on
  the night clocks jump from 02:00 to 03:00) moves forward by the gap (03:30); one that a fall-back
  overlap repeats (01:30 twice) takes the first occurrence (the earlier instant, still on summer time);
- more than `PAST_TOLERANCE` in the past, or outside the contract's bounds (1970-01-01 .. 9999-12-30
  in UTC, `kit.shapes.bounded_utc`): refused.
"""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from kit import clock
from kit.errors import FieldProblem, ValidationFailed
from kit.shapes import OUT_OF_BOUNDS, bounded_utc

PAST_TOLERANCE = dt.timedelta(seconds=60)


def zone(name: str) -> ZoneInfo | None:
    """The IANA zone of that name, or None (a path, an empty or an unknown name)."""
    if not name or name not in _names():
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None


def zone_named(name: str, field: str = "timezone") -> dt.tzinfo:
    """The one reading of a time zone that a person or a caller names, for every front door: UTC
    for no name, else the IANA zone, else a 422 naming `field`. (Handed to `ZoneInfo` as it came, a
    directory of the zone database (`Europe`) raised `IsADirectoryError`, a 300-character name
    `OSError`: 500s.)"""
    if not name:
        return dt.UTC
    found = zone(name) if len(name) <= 64 else None
    if found is None:
        raise ValidationFailed.field(field, "must be an IANA time zone name, e.g. Europe/Paris")
    return found


def local_instant_text(local: str, zone_name: str) -> str:
    """A wall time (an HTML `datetime-local` value, or one with its own offset) read in the named
    zone, as the ISO instant in UTC with `Z` that /v1 takes. A value that is no date and time, or
    whose instant falls outside what a datetime holds (years 1 and 9999 shifted by an offset), is
    given back as it came: the service's own check then refuses it, naming its field."""
    try:
        moment = dt.datetime.fromisoformat(local)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=zone_named(zone_name))
        return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (ValueError, OverflowError):
        return local


_zone_names: frozenset[str] | None = None


def zone_names() -> list[str]:
    """Every IANA zone `zone` accepts, sorted: the list a person picks a zone from."""
    return sorted(_names())


def _names() -> frozenset[str]:
    # Looked up in the list rather than tried: ZoneInfo also opens relative paths and odd keys.
    global _zone_names
    if _zone_names is None:
        _zone_names = frozenset(available_timezones())
    return _zone_names


def wall_time_to_utc(local: dt.datetime, tz: ZoneInfo) -> dt.datetime:
    """A naive wall time in `tz` as naive UTC, by the rules above.

    zoneinfo reads `fold=0` with the offset in force before a transition: in an overlap that is the
    first occurrence, and in a gap it lands the gap's length later on the wall clock (02:30 EST is
    03:30 EDT), which are exactly the two rules."""
    return local.replace(tzinfo=tz, fold=0).astimezone(dt.UTC).replace(tzinfo=None)


def due_at(scheduled_for: str | None, timezone: str | None, *, field: str = "scheduledFor",
           zone_field: str = "timezone") -> tuple[dt.datetime | None, list[FieldProblem]]:
    """The instant `scheduled_for` names (naive UTC), or the problems that make it unusable."""
    problems: list[FieldProblem] = []
    tz = None
    if timezone is not None:
        tz = zone(timezone)
        if tz is None:
            problems.append(FieldProblem(zone_field, "must be an IANA time zone name, e.g. Europe/Paris"))
    if scheduled_for is None:
        return None, problems
    try:
        parsed = dt.datetime.fromisoformat(scheduled_for.replace("Z", "+00:00"))
    except ValueError:
        return None, [*problems, FieldProblem(field, "must be an ISO 8601 date and time")]
    if parsed.tzinfo is None and tz is None:
        if timezone is None:
            problems.append(FieldProblem(field, "needs an offset (e.g. Z) or a timezone"))
        return None, problems
    found = bounded_utc(parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=tz, fold=0))
    if found is None:
        return None, [*problems, FieldProblem(field, OUT_OF_BOUNDS)]
    instant = found
    if instant < clock.now() - PAST_TOLERANCE:
        problems.append(FieldProblem(field, "must not be in the past"))
    return (instant if not problems else None), problems


# The instants a query's window may name: what both databases store and Python can shift by a day.
EARLIEST = dt.datetime(1970, 1, 1)
LATEST = dt.datetime(9999, 12, 30, 23, 59, 59)


def query_instant(value: str | None, field: str, problems: list[FieldProblem]) -> dt.datetime | None:
    """A query's `from`/`to` (an ISO 8601 instant with Z or an offset) as naive UTC, or None when
    not given; a value that is not one is added to `problems` (all of a request's at once)."""
    if value is None:
        return None
    try:
        parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        if parsed.tzinfo is None:
            raise ValueError(value)
        moment = parsed.astimezone(dt.UTC).replace(tzinfo=None)
    except (ValueError, OverflowError):
        problems.append(FieldProblem(field, "must be an ISO 8601 instant with Z or an offset "
                                            "(2026-12-01T00:00:00Z)"))
        return None
    if not EARLIEST <= moment <= LATEST:
        problems.append(FieldProblem(field, "must lie between 1970-01-01 and 9999-12-30"))
        return None
    return moment
