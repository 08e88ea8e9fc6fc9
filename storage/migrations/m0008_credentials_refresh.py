"""Accounts say in the clear when their long-lived credentials lapse, so they are renewed in time."""

from peewee import Database
from playhouse.migrate import PostgresqlMigrator, SqliteMigrator, migrate

from storage.db import is_postgres
from storage.models import Account


def apply(database: Database) -> None:
    migrator = PostgresqlMigrator(database) if is_postgres() else SqliteMigrator(database)
    present = {column.name for column in database.get_columns("account")}
    steps = [
        migrator.add_column("account", name, Account._meta.fields[name])
        for name in ("credentials_expire_at", "credentials_checked_at")
        if name not in present
    ]
    migrate(*steps)
    database.execute_sql("CREATE INDEX IF NOT EXISTS account_credentials_expire_at ON account (credentials_expire_at)")
