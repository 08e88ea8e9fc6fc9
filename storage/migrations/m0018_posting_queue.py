"""Each account's posting queue (weekly slots that `addToQueue` fills)."""

from peewee import Database

from storage.models import PostingQueue


def apply(database: Database) -> None:
    database.create_tables([PostingQueue], safe=True)
