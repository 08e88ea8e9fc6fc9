"""The work engine: outbound messages become claimable work rows, idempotency keys are reserved
before their request runs, and accounts get a shared send pace."""

from peewee import Database
from playhouse.migrate import PostgresqlMigrator, SqliteMigrator, migrate

from storage.db import is_postgres
from storage.models import IdempotencyRecord, Message, PaceSlot

# Only outbound messages waiting for, or in, a platform call: a small slice of a large table.
_WORK_INDEX = (
    "CREATE INDEX IF NOT EXISTS message_work ON message (next_attempt_at) WHERE status IN ('pending', 'sending')"
)


def _columns(database: Database, table: str) -> dict[str, bool]:
    return {column.name: column.null for column in database.get_columns(table)}


def apply(database: Database) -> None:
    migrator = PostgresqlMigrator(database) if is_postgres() else SqliteMigrator(database)
    steps = []
    present = _columns(database, "message")
    for name in ("attempts", "next_attempt_at", "claimed_until", "claim_token", "nudged_at"):
        if name not in present:
            steps.append(migrator.add_column("message", name, Message._meta.fields[name]))
    present = _columns(database, "idempotency_record")
    for name in ("owner", "locked_until", "resource_id"):
        if name not in present:
            steps.append(migrator.add_column("idempotency_record", name, IdempotencyRecord._meta.fields[name]))
    for name in ("status", "body"):
        if not present[name]:
            steps.append(migrator.drop_not_null("idempotency_record", name))
    migrate(*steps)
    database.execute_sql(_WORK_INDEX)
    database.create_tables([PaceSlot], safe=True)
