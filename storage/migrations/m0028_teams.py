"""Roles for teams: `owner`, `admin`, `member`, `viewer`, a member limited to some profiles, people's
names, invitations (single-use links, kept as hashes), the audit log, and the shared inbox (below).

Until now every member could do everything, so today's members become `admin` (owners stay owners):
no one loses a right by upgrading. A change of a person's role or profiles moves the OAuth token
epoch (migration 16) in its own transaction, so an MCP token checked before never keeps more than
the person's role now gives.
"""

from peewee import BooleanField, CharField, Database, DateTimeField, TextField
from playhouse.migrate import PostgresqlMigrator, SqliteMigrator, migrate

from storage.db import is_postgres
from storage.models import AuditEntry, ConversationLabel, ConversationNote, Invitation, SavedReply
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
    for table, column, field in (("workspace", "post_approval", BooleanField(default=False)),
                                 ("post", "approval", JSONField(null=True)),
                                 ("account", "health_notified_at", DateTimeField(null=True)),
                                 ("post", "rejection_reason", TextField(null=True))):
        if not _has_column(database, table, column):
            migrate(migrator.add_column(table, column, field))
    _shared_inbox(database, migrator)
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


# --- the shared inbox -----------------------------------------------------------------------------
# A conversation's status (open, resolved, snoozed until a time), its assignee and labels, internal
# notes, and search over contacts' names and handles and messages' text with what each database
# offers: FTS5 on SQLite (external-content tables fed by triggers, accents and case folded by the
# `unicode61` tokenizer; they follow the tables' rowids, which only a VACUUM renumbers: run
# `INSERT INTO message_fts(message_fts) VALUES('rebuild')` and the same for `conversation_fts`
# after one), and GIN indexes over `tsvector`s on PostgreSQL (accents folded by `unaccent`).

_CONVERSATION_INDEXES = [
    ("conversation_workspace_id_status_activity_at_id", "conversation (workspace_id, status, activity_at, id)"),
    ("conversation_workspace_id_assignee_id_activity_at_id",
     "conversation (workspace_id, assignee_id, activity_at, id)"),
    ("conversation_snoozed_until", "conversation (snoozed_until)"),
]

_SQLITE_SEARCH = [
    "CREATE VIRTUAL TABLE IF NOT EXISTS message_fts USING fts5(text, content='message', content_rowid='rowid',"
    " tokenize='unicode61 remove_diacritics 2', prefix='2 3')",
    "CREATE TRIGGER IF NOT EXISTS message_fts_inserted AFTER INSERT ON message WHEN new.text IS NOT NULL"
    " BEGIN INSERT INTO message_fts (rowid, text) VALUES (new.rowid, new.text); END",
    "CREATE TRIGGER IF NOT EXISTS message_fts_deleted AFTER DELETE ON message WHEN old.text IS NOT NULL"
    " BEGIN INSERT INTO message_fts (message_fts, rowid, text) VALUES ('delete', old.rowid, old.text); END",
    "CREATE TRIGGER IF NOT EXISTS message_fts_updated AFTER UPDATE OF text ON message BEGIN"
    " INSERT INTO message_fts (message_fts, rowid, text) SELECT 'delete', old.rowid, old.text"
    " WHERE old.text IS NOT NULL;"
    " INSERT INTO message_fts (rowid, text) SELECT new.rowid, new.text WHERE new.text IS NOT NULL; END",
    "INSERT INTO message_fts (message_fts) VALUES ('rebuild')",
    "CREATE VIRTUAL TABLE IF NOT EXISTS conversation_fts USING fts5(contact_name, contact_handle,"
    " content='conversation', content_rowid='rowid', tokenize='unicode61 remove_diacritics 2', prefix='2 3')",
    "CREATE TRIGGER IF NOT EXISTS conversation_fts_inserted AFTER INSERT ON conversation BEGIN"
    " INSERT INTO conversation_fts (rowid, contact_name, contact_handle)"
    " VALUES (new.rowid, new.contact_name, new.contact_handle); END",
    "CREATE TRIGGER IF NOT EXISTS conversation_fts_deleted AFTER DELETE ON conversation BEGIN"
    " INSERT INTO conversation_fts (conversation_fts, rowid, contact_name, contact_handle)"
    " VALUES ('delete', old.rowid, old.contact_name, old.contact_handle); END",
    "CREATE TRIGGER IF NOT EXISTS conversation_fts_updated AFTER UPDATE OF contact_name, contact_handle"
    " ON conversation BEGIN"
    " INSERT INTO conversation_fts (conversation_fts, rowid, contact_name, contact_handle)"
    " VALUES ('delete', old.rowid, old.contact_name, old.contact_handle);"
    " INSERT INTO conversation_fts (rowid, contact_name, contact_handle)"
    " VALUES (new.rowid, new.contact_name, new.contact_handle); END",
    "INSERT INTO conversation_fts (conversation_fts) VALUES ('rebuild')",
]

# `unaccent` is not immutable (its dictionary could change), so an index cannot use it directly:
# a wrapper naming the dictionary is, as PostgreSQL's own documentation advises.
_POSTGRES_SEARCH = [
    "CREATE EXTENSION IF NOT EXISTS unaccent",
    "CREATE OR REPLACE FUNCTION switchboard_fold(value text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE"
    " STRICT AS $$ SELECT public.unaccent('public.unaccent'::regdictionary, value) $$",
    "CREATE INDEX IF NOT EXISTS message_text_search ON message"
    " USING gin (to_tsvector('simple', switchboard_fold(coalesce(text, ''))))",
    "CREATE INDEX IF NOT EXISTS conversation_contact_search ON conversation"
    " USING gin (to_tsvector('simple', switchboard_fold(coalesce(contact_name, '') || ' ' ||"
    " coalesce(contact_handle, ''))))",
]


def _shared_inbox(database: Database, migrator: SqliteMigrator | PostgresqlMigrator) -> None:
    added = (("snoozed_until", DateTimeField(null=True)), ("assignee_id", CharField(max_length=40, null=True)),
             ("labels", JSONField(null=True)))
    for column, field in added:
        if not _has_column(database, "conversation", column):
            migrate(migrator.add_column("conversation", column, field))
    for name, what in _CONVERSATION_INDEXES:
        database.execute_sql(f"CREATE INDEX IF NOT EXISTS {name} ON {what}")
    database.create_tables([ConversationLabel, ConversationNote, SavedReply], safe=True)
    for statement in _POSTGRES_SEARCH if is_postgres() else _SQLITE_SEARCH:
        database.execute_sql(statement)
