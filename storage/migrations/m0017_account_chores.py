"""An account's recurring chores (credential renewal, the daily follower count) become rows of the
work engine, so they are claimed, leased and swept like every other kind of durable work.

Rows are made by the chores themselves when they arm one (for every account, old or new), so the
table starts empty and no account's data moves.
"""

from peewee import Database

from storage.models import AccountChore


def apply(database: Database) -> None:
    database.create_tables([AccountChore], safe=True)
