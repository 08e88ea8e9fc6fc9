"""An account's id under a separate grant (TikTok messaging's `open_id`, which its Business
Messaging webhooks name), in the clear so a webhook finds its account."""

from peewee import Database
from playhouse.migrate import PostgresqlMigrator, SqliteMigrator, migrate

from storage.db import is_postgres
from storage.models import Account


def apply(database: Database) -> None:
    migrator = PostgresqlMigrator(database) if is_postgres() else SqliteMigrator(database)
    present = {column.name for column in database.get_columns("account")}
    if "grant_account_id" not in present:
        migrate(migrator.add_column("account", "grant_account_id", Account._meta.fields["grant_account_id"]))
    indexed = {tuple(index.columns) for index in database.get_indexes("account")}
    if ("platform", "grant_account_id") not in indexed:
        migrate(migrator.add_index("account", ("platform", "grant_account_id"), False))
