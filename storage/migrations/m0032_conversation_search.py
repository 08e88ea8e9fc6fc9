"""The shared inbox's search indexes one document per conversation: the contact's name and handle
and the text of its messages (a message the contact deleted on the platform leaves it).

Migration 28 indexed each message on its own, so a search found messages and then stepped from
each hit to its conversation: about 5 µs a hit, so a word in thousands of messages cost hundreds
of milliseconds (docs/benchmarks.md). With one document per conversation the index answers
conversations directly, and every word of a search may be anywhere in the conversation (the
contact's name in one place, an order number in a message).

Kept current by triggers, in the transaction of the change that moves it, whatever writes it:
- SQLite: a contentless FTS5 table (`detail=none`: no positions, no phrases needed) keyed by the
  conversation's rowid. A contentless table forgets its documents, so a change first deletes the
  old document by giving its exact words again (rebuilt from the messages, less or plus the row
  that changed) and then inserts the new one: a message costs reading its conversation's texts
  twice. Its rowids follow `conversation`'s, which only a VACUUM may renumber; `rebuild_sqlite`
  below builds the table again.
- PostgreSQL: a `conversation_search` row per conversation holding the conversation's distinct
  words as a stripped `tsvector` (GIN-indexed, accents folded by `switchboard_fold` of migration
  28), with its workspace and profile, so that a search counts a workspace's hits on this table
  alone. A new message appends its words; an edit, a deletion or a renamed contact computes the
  document again from the rows. A document holds at most 50,000 distinct words (a tsvector
  stops at 1 MB): a conversation past them is found by the ones it has.
"""

from peewee import Database

from storage.db import is_postgres

# -- SQLite ------------------------------------------------------------------------------------
# Two columns: `scope`, the conversation's workspace, profile, account (ids less their `_`, one word
# each) and platform, which never change; and `document`, its words. A search asks for its words in
# `document` and its tenant in `scope` (a column filter, so no text can pass for a tenant): the
# index counts the conversations of the workspace, or of a member's profiles, without a row read.
_SCOPE = ("replace({c}.workspace_id, '_', '') || ' ' || replace({c}.profile_id, '_', '') || ' ' ||"
          " replace({c}.account_id, '_', '') || ' ' || {c}.platform")
_CONTACT = "coalesce({c}.contact_name, '') || ' ' || coalesce({c}.contact_handle, '')"
# The visible text of a conversation's messages; `{skip}` leaves out one row (the one changing).
_BODY = ("coalesce((SELECT group_concat(m.text, ' ') FROM message m WHERE m.conversation_id = {c}.id"
         " AND m.text IS NOT NULL AND m.deleted_at IS NULL{skip}), '')")


def _row(c: str, *, skip: str = "", extra: str = "") -> str:
    """The rowid, scope and document of the conversation row aliased `c`, as SQL."""
    return (f"{c}.rowid, {_SCOPE.format(c=c)},"
            f" {_CONTACT.format(c=c)} || ' ' || {_BODY.format(c=c, skip=skip)}{extra}")


def _delete(values: str) -> str:
    return f"INSERT INTO conversation_search (conversation_search, rowid, scope, document) {values};"


def _insert(values: str) -> str:
    return f"INSERT INTO conversation_search (rowid, scope, document) {values};"


def _replace(conversation: str, *, skip: str = "", extra: str = "") -> str:
    """Delete a conversation's document as it was (its messages but `skip`, plus `extra`) and insert
    it as it is."""
    where = f"FROM conversation c WHERE c.id = {conversation}"
    return (_delete(f"SELECT 'delete', {_row('c', skip=skip, extra=extra)} {where}")
            + " " + _insert(f"SELECT {_row('c')} {where}"))


_THIS_ONE = " AND m.rowid <> new.rowid"
_OLD_VISIBLE = "old.text IS NOT NULL AND old.deleted_at IS NULL"
_OLD_TEXT = f" || ' ' || CASE WHEN {_OLD_VISIBLE} THEN old.text ELSE '' END"
_NEW_ROW = f"SELECT {_row('new')}"
_OLD_ROW = f"SELECT 'delete', {_row('old')}"

SQLITE_TABLE = ("CREATE VIRTUAL TABLE IF NOT EXISTS conversation_search USING fts5(scope, document, content='',"
                " columnsize=0, detail=column, tokenize='unicode61 remove_diacritics 2', prefix='2 3')")
SQLITE_TRIGGERS = [
    # A conversation starts with its contact only (its messages follow it).
    f"CREATE TRIGGER IF NOT EXISTS conversation_search_started AFTER INSERT ON conversation BEGIN {_insert(_NEW_ROW)}"
    " END",
    # Before the row goes: its messages are still there to give the document's words.
    "CREATE TRIGGER IF NOT EXISTS conversation_search_ended BEFORE DELETE ON conversation BEGIN"
    f" {_delete(_OLD_ROW)} END",
    "CREATE TRIGGER IF NOT EXISTS conversation_search_renamed AFTER UPDATE OF contact_name, contact_handle,"
    " workspace_id, profile_id, account_id, platform ON conversation"
    " WHEN old.contact_name IS NOT new.contact_name OR old.contact_handle IS NOT new.contact_handle"
    " OR old.workspace_id IS NOT new.workspace_id OR old.profile_id IS NOT new.profile_id"
    " OR old.account_id IS NOT new.account_id OR old.platform IS NOT new.platform"
    f" BEGIN {_delete(_OLD_ROW)} {_insert(_NEW_ROW)} END",
    "CREATE TRIGGER IF NOT EXISTS conversation_search_message_added AFTER INSERT ON message"
    " WHEN new.text IS NOT NULL AND new.deleted_at IS NULL"
    f" BEGIN {_replace('new.conversation_id', skip=_THIS_ONE)} END",
    f"CREATE TRIGGER IF NOT EXISTS conversation_search_message_removed AFTER DELETE ON message WHEN {_OLD_VISIBLE}"
    f" BEGIN {_replace('old.conversation_id', extra=_OLD_TEXT)} END",
    "CREATE TRIGGER IF NOT EXISTS conversation_search_message_changed AFTER UPDATE OF text, deleted_at ON message"
    " WHEN old.text IS NOT new.text OR old.deleted_at IS NOT new.deleted_at"
    f" BEGIN {_replace('new.conversation_id', skip=_THIS_ONE, extra=_OLD_TEXT)} END",
]
SQLITE_FILL = _insert(f"SELECT {_row('c')} FROM conversation c").rstrip(";")  # noqa: S608 - no input

# What migration 28 indexed message by message, and its triggers.
_SQLITE_RETIRED = [
    "DROP TRIGGER IF EXISTS message_fts_inserted", "DROP TRIGGER IF EXISTS message_fts_deleted",
    "DROP TRIGGER IF EXISTS message_fts_updated", "DROP TRIGGER IF EXISTS conversation_fts_inserted",
    "DROP TRIGGER IF EXISTS conversation_fts_deleted", "DROP TRIGGER IF EXISTS conversation_fts_updated",
    "DROP TABLE IF EXISTS message_fts", "DROP TABLE IF EXISTS conversation_fts",
]


def rebuild_sqlite(database: Database) -> None:
    """Every document again, from the rows (after a bulk load without the triggers, or a VACUUM)."""
    database.execute_sql("INSERT INTO conversation_search (conversation_search) VALUES ('delete-all')")
    database.execute_sql(SQLITE_FILL)
    database.execute_sql("INSERT INTO conversation_search (conversation_search) VALUES ('optimize')")


# -- PostgreSQL --------------------------------------------------------------------------------

POSTGRES = [
    "CREATE TABLE IF NOT EXISTS conversation_search ("
    " conversation_id VARCHAR(40) PRIMARY KEY REFERENCES conversation (id) ON DELETE CASCADE,"
    " workspace_id VARCHAR(40) NOT NULL, profile_id VARCHAR(40) NOT NULL, document tsvector NOT NULL)",
    "CREATE INDEX IF NOT EXISTS conversation_search_document ON conversation_search USING gin (document)",
    # The distinct words of a text, as the search's `to_tsquery('simple', switchboard_fold(...))` cuts them.
    "CREATE OR REPLACE FUNCTION switchboard_words(value text) RETURNS text[] LANGUAGE sql IMMUTABLE"
    " PARALLEL SAFE AS $$ SELECT tsvector_to_array(to_tsvector('simple', switchboard_fold(coalesce(value, ''))))"
    " $$",
    # A conversation's document from its rows: words gathered message by message (a tsvector of the
    # whole text would keep every word's positions, and stop at 1 MB long before the words do).
    "CREATE OR REPLACE FUNCTION switchboard_conversation_document(text) RETURNS tsvector"
    " LANGUAGE sql STABLE AS $$ SELECT array_to_tsvector(coalesce(array_agg(word), '{}')) FROM ("
    "  SELECT DISTINCT word FROM ("
    "   SELECT unnest(switchboard_words(coalesce(c.contact_name, '') || ' ' || coalesce(c.contact_handle, '')))"
    "    AS word FROM conversation c WHERE c.id = $1"
    "   UNION ALL SELECT unnest(switchboard_words(m.text)) FROM message m WHERE m.conversation_id = $1"
    "    AND m.text IS NOT NULL AND m.deleted_at IS NULL) every_word"
    "  LIMIT 50000) words $$",
    # Conversations computed again: their rows locked first, so the statement that computes them
    # reads, with a snapshot taken after the lock, every message committed before.
    "CREATE OR REPLACE FUNCTION switchboard_search_again(conversations text[]) RETURNS void LANGUAGE plpgsql AS $$"
    " BEGIN"
    "  PERFORM 1 FROM conversation_search WHERE conversation_id = ANY (conversations)"
    "   ORDER BY conversation_id FOR UPDATE;"
    "  UPDATE conversation_search s SET document = switchboard_conversation_document(s.conversation_id),"
    "   workspace_id = c.workspace_id, profile_id = c.profile_id FROM conversation c"
    "   WHERE c.id = s.conversation_id AND s.conversation_id = ANY (conversations);"
    " END $$",
    "CREATE OR REPLACE FUNCTION conversation_search_started() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
    "  INSERT INTO conversation_search (conversation_id, workspace_id, profile_id, document)"
    "   SELECT id, workspace_id, profile_id, array_to_tsvector(switchboard_words(coalesce(contact_name, '') || ' ' ||"
    "    coalesce(contact_handle, ''))) FROM added"
    "   ON CONFLICT (conversation_id) DO NOTHING;"
    "  RETURN NULL; END $$",
    "CREATE OR REPLACE FUNCTION conversation_search_renamed() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
    "  PERFORM switchboard_search_again(ARRAY[new.id::text]); RETURN NULL; END $$",
    # New messages append their words (most conversations take a message at a time; a broadcast
    # many conversations in one statement).
    "CREATE OR REPLACE FUNCTION conversation_search_messages_added() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
    "  UPDATE conversation_search s SET document = s.document || a.words FROM ("
    "   SELECT conversation_id, array_to_tsvector(array_agg(DISTINCT word)) AS words FROM ("
    "    SELECT conversation_id, unnest(switchboard_words(text)) AS word FROM added"
    "    WHERE text IS NOT NULL AND deleted_at IS NULL) each_word GROUP BY conversation_id) a"
    "  WHERE s.conversation_id = a.conversation_id AND length(s.document) < 50000;"
    "  RETURN NULL; END $$",
    "CREATE OR REPLACE FUNCTION conversation_search_messages_removed() RETURNS trigger LANGUAGE plpgsql AS $$"
    " BEGIN"
    "  PERFORM switchboard_search_again(ARRAY(SELECT DISTINCT conversation_id::text FROM removed"
    "   WHERE text IS NOT NULL AND deleted_at IS NULL));"
    "  RETURN NULL; END $$",
    "CREATE OR REPLACE FUNCTION conversation_search_message_changed() RETURNS trigger LANGUAGE plpgsql AS $$"
    " BEGIN PERFORM switchboard_search_again(ARRAY[new.conversation_id::text]); RETURN NULL; END $$",
    "DROP TRIGGER IF EXISTS conversation_search_started ON conversation",
    "CREATE TRIGGER conversation_search_started AFTER INSERT ON conversation REFERENCING NEW TABLE AS added"
    " FOR EACH STATEMENT EXECUTE FUNCTION conversation_search_started()",
    "DROP TRIGGER IF EXISTS conversation_search_renamed ON conversation",
    "CREATE TRIGGER conversation_search_renamed AFTER UPDATE OF contact_name, contact_handle, workspace_id,"
    " profile_id ON conversation FOR EACH ROW WHEN (old.contact_name IS DISTINCT FROM new.contact_name"
    " OR old.contact_handle IS DISTINCT FROM new.contact_handle OR old.workspace_id IS DISTINCT FROM new.workspace_id"
    " OR old.profile_id IS DISTINCT FROM new.profile_id)"
    " EXECUTE FUNCTION conversation_search_renamed()",
    "DROP TRIGGER IF EXISTS conversation_search_messages_added ON message",
    "CREATE TRIGGER conversation_search_messages_added AFTER INSERT ON message REFERENCING NEW TABLE AS added"
    " FOR EACH STATEMENT EXECUTE FUNCTION conversation_search_messages_added()",
    "DROP TRIGGER IF EXISTS conversation_search_messages_removed ON message",
    "CREATE TRIGGER conversation_search_messages_removed AFTER DELETE ON message REFERENCING OLD TABLE AS removed"
    " FOR EACH STATEMENT EXECUTE FUNCTION conversation_search_messages_removed()",
    "DROP TRIGGER IF EXISTS conversation_search_message_changed ON message",
    "CREATE TRIGGER conversation_search_message_changed AFTER UPDATE OF text, deleted_at ON message"
    " FOR EACH ROW WHEN (old.text IS DISTINCT FROM new.text OR old.deleted_at IS DISTINCT FROM new.deleted_at)"
    " EXECUTE FUNCTION conversation_search_message_changed()",
]
POSTGRES_FILL = (
    "INSERT INTO conversation_search (conversation_id, workspace_id, profile_id, document)"
    " SELECT id, workspace_id, profile_id, switchboard_conversation_document(id) FROM conversation"
    " ON CONFLICT (conversation_id) DO NOTHING"
)
_POSTGRES_RETIRED = ["DROP INDEX IF EXISTS message_text_search", "DROP INDEX IF EXISTS conversation_contact_search"]


def apply(database: Database) -> None:
    if is_postgres():
        for statement in [*_POSTGRES_RETIRED, *POSTGRES, POSTGRES_FILL]:
            database.execute_sql(statement)
        return
    for statement in [*_SQLITE_RETIRED, SQLITE_TABLE, *SQLITE_TRIGGERS]:
        database.execute_sql(statement)
    rebuild_sqlite(database)
