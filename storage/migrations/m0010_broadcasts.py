"""Broadcasts and their recipients; a scheduled broadcast is a work row of the engine."""

from peewee import Database

from storage.models import Broadcast, BroadcastRecipient

# Only broadcasts the engine may still have to start or fan out: a small slice of the table.
_WORK_INDEX = (
    "CREATE INDEX IF NOT EXISTS broadcast_work ON broadcast (next_attempt_at) WHERE status IN ('scheduled', 'sending')"
)


def apply(database: Database) -> None:
    database.create_tables([Broadcast, BroadcastRecipient], safe=True)
    database.execute_sql(_WORK_INDEX)
