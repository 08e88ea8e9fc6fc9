"""Inboxes read by polling (YouTube's comment threads, X's DM events without a webhook) keep their
cursor per account, and YouTube's daily quota is counted per project and per account.

Both tables start empty: an account's row is made by its first poll, so no existing data moves.
"""

from peewee import Database

from storage.models import InboxPoll, PlatformQuota


def apply(database: Database) -> None:
    database.create_tables([InboxPoll, PlatformQuota], safe=True)
