"""Server-side dashboard sessions: a signed cookie alone could not be ended before it expired."""

from peewee import Database

from storage.models import DashboardSession


def apply(database: Database) -> None:
    database.create_tables([DashboardSession], safe=True)
