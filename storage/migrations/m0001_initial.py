"""Tenancy, keys, idempotency, rate limits, the event outbox and scheduler state."""

from peewee import Database

from storage.models import (
    Account,
    ApiKey,
    Event,
    IdempotencyRecord,
    Membership,
    Profile,
    RateLimitCounter,
    SchedulerState,
    User,
    Workspace,
)


def apply(database: Database) -> None:
    database.create_tables(
        [
            Workspace,
            User,
            Membership,
            Profile,
            Account,
            ApiKey,
            IdempotencyRecord,
            RateLimitCounter,
            Event,
            SchedulerState,
        ],
        safe=True,
    )
