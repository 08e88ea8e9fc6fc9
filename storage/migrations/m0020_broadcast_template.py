"""A WhatsApp broadcast may send an approved template instead of text."""

from peewee import Database
from playhouse.migrate import PostgresqlMigrator, SqliteMigrator, migrate

from storage.db import is_postgres
from storage.models import Broadcast


def apply(database: Database) -> None:
    migrator = PostgresqlMigrator(database) if is_postgres() else SqliteMigrator(database)
    if "template" not in {column.name for column in database.get_columns("broadcast")}:
        migrate(migrator.add_column("broadcast", "template", Broadcast._meta.fields["template"]))
