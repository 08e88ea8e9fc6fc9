"""An inbound message keeps its attachments, and the reactions, edit and deletion that name it."""

from peewee import Database
from playhouse.migrate import PostgresqlMigrator, SqliteMigrator, migrate

from storage.db import is_postgres
from storage.models import Message

_COLUMNS = ("attachments", "reactions", "edited_at", "deleted_at")


def apply(database: Database) -> None:
    migrator = PostgresqlMigrator(database) if is_postgres() else SqliteMigrator(database)
    present = {column.name for column in database.get_columns("message")}
    for name in _COLUMNS:
        if name not in present:
            migrate(migrator.add_column("message", name, Message._meta.fields[name]))
