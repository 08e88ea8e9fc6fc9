"""A workspace setting: an assistant asks the person before a tool messages or publishes to people
(on by default; an owner turns it off with `PATCH /v1/workspaces/{id}/settings`)."""

from peewee import Database
from playhouse.migrate import PostgresqlMigrator, SqliteMigrator, migrate

from storage.db import is_postgres
from storage.models import Workspace

COLUMN = "confirm_before_reaching_people"


def apply(database: Database) -> None:
    migrator = PostgresqlMigrator(database) if is_postgres() else SqliteMigrator(database)
    if COLUMN not in {column.name for column in database.get_columns("workspace")}:
        migrate(migrator.add_column("workspace", COLUMN, Workspace._meta.fields[COLUMN]))
