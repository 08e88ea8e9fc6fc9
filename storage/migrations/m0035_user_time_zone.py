"""A person's time zone: the dashboard shows every time in it. Null for everyone until their browser
first says which zone it is in."""

from peewee import CharField, Database
from playhouse.migrate import PostgresqlMigrator, SqliteMigrator, migrate

from storage.db import is_postgres


def apply(database: Database) -> None:
    migrator = PostgresqlMigrator(database) if is_postgres() else SqliteMigrator(database)
    if not any(column.name == "time_zone" for column in database.get_columns("user")):
        migrate(migrator.add_column("user", "time_zone", CharField(max_length=64, null=True)))
