"""Daily follower snapshots per connected account, for follower analytics."""

from peewee import Database

from storage.models import FollowerSnapshot


def apply(database: Database) -> None:
    database.create_tables([FollowerSnapshot], safe=True)
