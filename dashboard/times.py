"""Times as a person reads them: in their own zone (or the zone a thing belongs to, such as a
queue's), in words ("Tue 1 Dec, 09:00"), with a relative hint where it helps ("in 2 h", "3 min
ago"), inside `<time datetime="...Z">` so the machine value stays on the page.

One filter, `when`, does it for every template; `text` is the same words for a flash message. The
zone is the signed-in person's (`views.render` puts it in every page's context as `person_zone`).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from jinja2 import pass_context
from jinja2.runtime import Context
from markupsafe import Markup

from kit import clock, scheduling

# A hint further out than this says little the date does not ("in 40 d"): the date alone then.
HINT_WITHIN = dt.timedelta(days=7)


def instant(value: Any) -> dt.datetime | None:
    """A stored or /v1 time (a naive UTC datetime, an aware one, or ISO text) as naive UTC."""
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC).replace(tzinfo=None) if value.tzinfo is not None else value
    if isinstance(value, str) and value:
        return clock.parse_iso(value)
    return None


def zone(name: str | None) -> dt.tzinfo:
    """The zone of that name; UTC for none or a name that is no longer a zone (never a 500)."""
    return scheduling.zone(name or "") or dt.UTC


def relative(moment: dt.datetime, now: dt.datetime) -> str:
    """ "3 min ago", "in 2 h", "just now"; "" further than `HINT_WITHIN` either way."""
    seconds = int((moment - now).total_seconds())
    span = abs(seconds)
    if span < 60:
        return "just now"
    if span >= HINT_WITHIN.total_seconds():
        return ""
    amount = f"{span // 60} min" if span < 3600 else f"{span // 3600} h" if span < 86400 else f"{span // 86400} d"
    return f"in {amount}" if seconds > 0 else f"{amount} ago"


def readable(moment: dt.datetime, where: dt.tzinfo, now: dt.datetime) -> str:
    """ "Tue 1 Dec, 09:00" in `where` (the year too when it is not this year's)."""
    local = moment.replace(tzinfo=dt.UTC).astimezone(where)
    this_year = now.replace(tzinfo=dt.UTC).astimezone(where).year
    day = f"{local:%a} {local.day} {local:%b}" + ("" if local.year == this_year else f" {local.year}")
    return f"{day}, {local:%H:%M}"


def _full(moment: dt.datetime, where: dt.tzinfo, zone_name: str) -> str:
    local = moment.replace(tzinfo=dt.UTC).astimezone(where)
    return f"{local:%A} {local.day} {local:%B %Y}, {local:%H:%M} {zone_name} ({moment:%H:%M} UTC)"


def text(value: Any, zone_name: str | None, *, hint: bool = True) -> str:
    """The time as words in the zone, with its hint: for a flash message (no markup)."""
    moment = instant(value)
    if moment is None:
        return ""
    now = clock.now()
    shown = readable(moment, zone(zone_name), now)
    near = relative(moment, now) if hint else ""
    return f"{shown} ({near})" if near else shown


def when_markup(value: Any, person_zone: str, zone_name: str | None = None, *, short: bool = False,
                hint: bool = True) -> Markup:
    """`<time>` with the UTC instant, the time in words in the person's zone (or `zone_name`, named
    when it is not theirs: a queue's slots in the queue's zone) and the relative hint. `short`: the
    hint alone where there is one (a list row), the words in the title either way. `hint=False`
    in a partial that refreshes itself: its HTML then changes only when its content does, so a
    screen reader is not read the whole thread again each minute."""
    moment = instant(value)
    if moment is None:
        return Markup("")
    name = zone_name or person_zone or "UTC"
    where, now = zone(name), clock.now()
    shown, near = readable(moment, where, now), relative(moment, now) if hint else ""
    own = "" if name == person_zone else f" ({name})"
    words = near if short and near else f"{shown}{own}" + (f" · {near}" if near and not short else "")
    return Markup('<time datetime="{}" title="{}">{}</time>').format(
        clock.iso(moment), _full(moment, where, name), words)


@pass_context
def when(context: Context, value: Any, zone_name: str | None = None, short: bool = False,
         hint: bool = True) -> Markup:
    """The template filter: `{{ post.scheduledFor|when }}`, `{{ slot|when(queue.timezone) }}`."""
    return when_markup(value, str(context.get("person_zone") or "UTC"), zone_name, short=short, hint=hint)
