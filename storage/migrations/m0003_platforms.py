"""OAuth connect state (single use) and inbound platform events (stored once)."""

from peewee import Database

from storage.models import ConnectState, InboundRecord


def apply(database: Database) -> None:
    database.create_tables([ConnectState, InboundRecord], safe=True)
