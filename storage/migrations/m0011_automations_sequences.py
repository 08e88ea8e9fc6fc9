"""Comment automations (with their log, the commenters they wrote to and their public replies) and
sequences (with their enrolments); outbound messages may be private replies addressed by comment."""

from peewee import Database
from playhouse.migrate import PostgresqlMigrator, SqliteMigrator, migrate

from storage.db import is_postgres
from storage.models import (
    AutomationContact,
    AutomationLog,
    CommentAutomation,
    Enrollment,
    Message,
    PublicReply,
    Sequence,
)

# One private reply per comment, whichever automation sends it (the platforms take one).
_ONE_PRIVATE_REPLY = "CREATE UNIQUE INDEX IF NOT EXISTS message_comment_id ON message (comment_id)"
# One active enrolment per conversation and sequence: a trigger and a hand enrolling at once meet here.
_ONE_ACTIVE_ENROLMENT = (
    "CREATE UNIQUE INDEX IF NOT EXISTS enrollment_one_active ON enrollment (sequence_id, conversation_id) "
    "WHERE status = 'active'"
)


def apply(database: Database) -> None:
    migrator = PostgresqlMigrator(database) if is_postgres() else SqliteMigrator(database)
    if "comment_id" not in {column.name for column in database.get_columns("message")}:
        migrate(migrator.add_column("message", "comment_id", Message._meta.fields["comment_id"]))
    database.execute_sql(_ONE_PRIVATE_REPLY)
    database.create_tables(
        [CommentAutomation, AutomationLog, AutomationContact, PublicReply, Sequence, Enrollment], safe=True
    )
    database.execute_sql(_ONE_ACTIVE_ENROLMENT)
