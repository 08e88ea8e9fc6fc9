"""An outbound direct message may carry attachments (`mediaIds`)."""

from peewee import Database
from playhouse.migrate import PostgresqlMigrator, SqliteMigrator, migrate

from storage.db import is_postgres
from storage.models import Message


def apply(database: Database) -> None:
    migrator = PostgresqlMigrator(database) if is_postgres() else SqliteMigrator(database)
    if "media_ids" not in {column.name for column in database.get_columns("message")}:
        migrate(migrator.add_column("message", "media_ids", Message._meta.fields["media_ids"]))
