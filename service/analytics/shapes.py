"""The shapes of follower analytics: what `/v1/analytics/followers` and the MCP tool take and answer."""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, WithJsonSchema
from typing_extensions import TypedDict

from kit.shapes import LEFT_OUT, OUT_OF_BOUNDS, Id, Query, Record, day_in_bounds, rule
from service.accounts.shapes import PLATFORMS

GRANULARITIES = ("day", "week", "month")
SOURCES = ("all", "service", "external")
MAX_WINDOW_DAYS = 366
DEFAULT_WINDOW_DAYS = 30


def _date(value: Any) -> Any:
    # Only the contract's `YYYY-MM-DD` (no week dates, no times), and a day that exists.
    if isinstance(value, str):
        if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", value):
            raise rule("must be a date (YYYY-MM-DD)")
        try:
            value = dt.date.fromisoformat(value)
        except ValueError:
            raise rule("must be a date that exists (YYYY-MM-DD)") from None
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        if not day_in_bounds(value):
            raise rule(OUT_OF_BOUNDS)
        return value
    raise rule("must be a date (YYYY-MM-DD)")


Date = Annotated[dt.date, BeforeValidator(_date), WithJsonSchema({
    "type": "string", "format": "date", "description": "YYYY-MM-DD, from 1970-01-01 to 9999-12-30 (else 422)."})]


class FollowersQuery(Query):
    profile_id: Id = Field(LEFT_OUT, description="Only the accounts of this profile.")
    account_id: Id = Field(LEFT_OUT, description="Only this account.")
    platform: Literal[PLATFORMS] = Field(LEFT_OUT, description="Only accounts of this platform (lower case).")  # type: ignore[valid-type]
    source: Literal[SOURCES] = Field(  # type: ignore[valid-type]
        LEFT_OUT, description="Which posts `posts` counts: `all` (default), `service` (published through "
                              "Switchboard) or `external` (made on the platform itself). The follower series "
                              "is the same for every source.")
    from_date: Date = Field(LEFT_OUT, description="First day of the window (UTC); default 30 days before today.")
    to_date: Date = Field(LEFT_OUT, description="Last day of the window (UTC), included; default today. The "
                                                "window is at most 366 days.")
    granularity: Literal[GRANULARITIES] = Field(  # type: ignore[valid-type]
        LEFT_OUT, description="One series point per `day` (default), `week` (dated its Monday) or `month` "
                              "(dated its first day).")


# -- records -----------------------------------------------------------------------------------


class FollowerPoint(TypedDict):
    """One bucket of a follower series. A typed dict rather than a record: an answer holds up to 366
    of them an account, and a model instance each would cost more than reading the rows."""

    date: Annotated[str, Field(description="The bucket: the day, the week's Monday or the month's first day "
                                           "(YYYY-MM-DD). The first and last buckets may start before or end "
                                           "after the window; only the window's days count.")]
    followers: Annotated[int | None, Field(description="The last follower count taken in the bucket's days of "
                                                       "the window; null when none was taken then.")]
    change: Annotated[int | None, Field(description="`followers` minus the latest earlier bucket of the window "
                                                    "that has a count; null for the first bucket with a count, or "
                                                    "when this one has none.")]


class PostCounts(Record):
    count: int = Field(ge=0, description="Posts of the account published in the window, of the `source` asked.")
    likes: int = Field(ge=0)
    comments: int = Field(ge=0)
    shares: int = Field(ge=0)


class AccountFollowers(Record):
    account_id: str
    platform: Literal[PLATFORMS]  # type: ignore[valid-type]
    series: list[FollowerPoint]
    current_followers: int | None = Field(description="The last count taken in the window (at or before "
                                                      "`toDate`); null when none was.")
    growth: int | None = Field(description="The last count of the window minus the first; null without a count.")
    growth_percent: float | None = Field(description="`growth` as a percentage of the window's first count, "
                                                     "rounded to 2 decimals; null when that count is 0 or "
                                                     "unknown.")
    posts: PostCounts


class FollowerAnalytics(Record):
    """Follower counts over a window, per account, from the daily snapshots; and the account's posts."""

    from_date: str
    to_date: str
    granularity: Literal[GRANULARITIES]  # type: ignore[valid-type]
    source: Literal[SOURCES]  # type: ignore[valid-type]
    accounts: list[AccountFollowers]
