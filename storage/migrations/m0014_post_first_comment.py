"""A post target keeps the outcome of its first comment (`options.firstComment`)."""

from peewee import Database
from playhouse.migrate import PostgresqlMigrator, SqliteMigrator, migrate

from storage.db import is_postgres
from storage.models import PostTarget


def apply(database: Database) -> None:
    migrator = PostgresqlMigrator(database) if is_postgres() else SqliteMigrator(database)
    if "first_comment" not in {column.name for column in database.get_columns("post_target")}:
        migrate(migrator.add_column("post_target", "first_comment", PostTarget._meta.fields["first_comment"]))
