"""Roles for teams: `owner`, `admin`, `member`, `viewer`, a member limited to some profiles, people's
names, invitations (single-use links, kept as hashes) and the audit log.

Until now every member could do everything, so today's members become `admin` (owners stay owners):
no one loses a right by upgrading. A change of a person's role or profiles moves the OAuth token
epoch (migration 16) in its own transaction, so an MCP token checked before never keeps more than
the person's role now gives.
"""

from peewee import CharField, Database
from playhouse.migrate import PostgresqlMigrator, SqliteMigrator, migrate

from storage.db import is_postgres
from storage.models import AuditEntry, Invitation
from storage.models.base import JSONField


def _has_column(database: Database, table: str, column: str) -> bool:
    return any(col.name == column for col in database.get_columns(table))


def apply(database: Database) -> None:
    migrator = PostgresqlMigrator(database) if is_postgres() else SqliteMigrator(database)
    if not _has_column(database, "membership", "profile_ids"):
        migrate(migrator.add_column("membership", "profile_ids", JSONField(null=True)))
    if not _has_column(database, "user", "name"):
        migrate(migrator.add_column("user", "name", CharField(max_length=200, null=True)))
    database.create_tables([Invitation, AuditEntry], safe=True)
    database.execute_sql("UPDATE membership SET role = 'admin' WHERE role = 'member'")
    if is_postgres():
        database.execute_sql("DROP TRIGGER IF EXISTS membership_role_changed ON membership")
        database.execute_sql(
            "CREATE TRIGGER membership_role_changed AFTER UPDATE OF role, profile_ids ON membership"
            " FOR EACH STATEMENT EXECUTE FUNCTION oauth_token_epoch_bump()")
    else:
        database.execute_sql(
            "CREATE TRIGGER IF NOT EXISTS membership_role_changed AFTER UPDATE OF role, profile_ids ON membership"
            " BEGIN UPDATE oauth_token_epoch SET value = value + 1 WHERE id = 1; END")
