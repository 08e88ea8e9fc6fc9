"""Daily follower snapshots."""

from __future__ import annotations

from peewee import CharField, CompositeKey, DateField, DateTimeField, ForeignKeyField, IntegerField

from kit.clock import now
from storage.models.accounts import Account
from storage.models.base import BaseModel


class FollowerSnapshot(BaseModel):
    """An account's follower count on one UTC day: one row per account and day, a re-take the same
    day updates it. The row is also the daily job's claim: `state` is `claimed` while a worker asks
    the platform, then `taken` (with `followers`), `refused` (the platform does not share the count
    for this account) or `failed` (it did not answer; tried again an hour later). Only `taken` rows
    carry a count, and only they reach the series."""

    account = ForeignKeyField(Account, on_delete="CASCADE", index=False)
    account_id: str  # the foreign key column, for type checkers
    date = DateField()
    followers = IntegerField(null=True)
    state = CharField(max_length=8, default="taken")  # claimed | taken | refused | failed
    taken_at = DateTimeField(default=now)  # when taken, or when last tried

    class Meta:
        primary_key = CompositeKey("account", "date")
