"""An account's recurring chores (credential renewal, the daily follower count) and a post's
deletions on its platforms become rows of the work engine, so they are claimed, leased and swept
like every other kind of durable work.

Chore rows are made by the chores themselves when they arm one (for every account, old or new), and
deletion rows by a delete request, so both tables start empty and no existing data moves.
"""

from peewee import Database

from storage.models import AccountChore, PostDeletion


def apply(database: Database) -> None:
    database.create_tables([AccountChore, PostDeletion], safe=True)
