"""SQLite's search index takes a new message's words alone, instead of its conversation's whole
document again.

Migration 32 kept one contentless FTS5 document per conversation and, for every new message, deleted
the document by giving all its words again and inserted it anew: each message read its
conversation's texts twice and indexed them twice, so a message cost more the longer its
conversation (0.38 ms in a conversation of 10 messages, 4.3 ms in one of 1,000; a broadcast's
fan-out grew with its conversations, docs/benchmarks.md).

A contentless FTS5 table with `columnsize=0` keeps no record of a row but its index entries, so a
row may be inserted again under a rowid it already holds: its words join the ones there. A new
message now inserts its own text under its conversation's rowid, and nothing else. The index merges
entries for the same word and rowid by keeping the newest one's columns, so the two columns must
never share a word (a message saying "telegram" would otherwise take the word out of `scope`):
`scope`'s words each begin with `_`, which the tokenizer keeps inside a word (`tokenchars`), and
every text given to `document` has its `_` made a space, where `unicode61` cut it anyway. A search's
words are cut at anything but letters and digits (`storage/hot_inbox.py`), so they never hold one.

What removes words still gives the document as it was and writes it again (an edit, a message the
contact deleted, a renamed contact, a deleted conversation): the words a document holds are exactly
its contact's and its visible messages', however many times it was added to.

PostgreSQL's document already takes a new message's words alone (migration 32): nothing to do there.
"""

from peewee import Database

from storage.db import is_postgres

_TABLE = ("CREATE VIRTUAL TABLE conversation_search USING fts5(scope, document, content='', columnsize=0,"
          " detail=column, tokenize=\"unicode61 remove_diacritics 2 tokenchars '_'\", prefix='2 3')")
# `scope`: the conversation's workspace, profile, account and platform, one word each, each `_`-led.
_SCOPE = ("'_' || {c}.workspace_id || ' _' || {c}.profile_id || ' _' || {c}.account_id || ' _' || {c}.platform")


def _text(value: str) -> str:
    """A text as `document` takes it: its `_` a space (a `_` would join words into one)."""
    return f"replace({value}, '_', ' ')"


_CONTACT = _text("coalesce({c}.contact_name, '') || ' ' || coalesce({c}.contact_handle, '')")
# The visible text of a conversation's messages; `{skip}` leaves out one row (the one changing).
_BODY = _text("coalesce((SELECT group_concat(m.text, ' ') FROM message m WHERE m.conversation_id = {c}.id"
              " AND m.text IS NOT NULL AND m.deleted_at IS NULL{skip}), '')")


def _row(c: str, *, skip: str = "", extra: str = "") -> str:
    """The rowid, scope and whole document of the conversation row aliased `c`, as SQL."""
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
_OLD_TEXT = f" || ' ' || CASE WHEN {_OLD_VISIBLE} THEN {_text('old.text')} ELSE '' END"
_NEW_ROW = f"SELECT {_row('new')}"
_OLD_ROW = f"SELECT 'delete', {_row('old')}"
_NEW_MESSAGE = f"SELECT c.rowid, NULL, {_text('new.text')} FROM conversation c WHERE c.id = new.conversation_id"  # noqa: S608 - no input

TRIGGERS = [
    # A conversation starts with its contact only (its messages follow it).
    f"CREATE TRIGGER conversation_search_started AFTER INSERT ON conversation BEGIN {_insert(_NEW_ROW)} END",
    # Before the row goes: its messages are still there to give the document's words.
    f"CREATE TRIGGER conversation_search_ended BEFORE DELETE ON conversation BEGIN {_delete(_OLD_ROW)} END",
    "CREATE TRIGGER conversation_search_renamed AFTER UPDATE OF contact_name, contact_handle,"
    " workspace_id, profile_id, account_id, platform ON conversation"
    " WHEN old.contact_name IS NOT new.contact_name OR old.contact_handle IS NOT new.contact_handle"
    " OR old.workspace_id IS NOT new.workspace_id OR old.profile_id IS NOT new.profile_id"
    " OR old.account_id IS NOT new.account_id OR old.platform IS NOT new.platform"
    f" BEGIN {_delete(_OLD_ROW)} {_insert(_NEW_ROW)} END",
    # A new message: its own words, under its conversation's rowid (no scope: the first row gave it).
    "CREATE TRIGGER conversation_search_message_added AFTER INSERT ON message"
    f" WHEN new.text IS NOT NULL AND new.deleted_at IS NULL BEGIN {_insert(_NEW_MESSAGE)} END",
    f"CREATE TRIGGER conversation_search_message_removed AFTER DELETE ON message WHEN {_OLD_VISIBLE}"
    f" BEGIN {_replace('old.conversation_id', extra=_OLD_TEXT)} END",
    "CREATE TRIGGER conversation_search_message_changed AFTER UPDATE OF text, deleted_at ON message"
    " WHEN old.text IS NOT new.text OR old.deleted_at IS NOT new.deleted_at"
    f" BEGIN {_replace('new.conversation_id', skip=_THIS_ONE, extra=_OLD_TEXT)} END",
]
FILL = _insert(f"SELECT {_row('c')} FROM conversation c").rstrip(";")  # noqa: S608 - no input

# Migration 32's table (its scope's words without `_`) and triggers.
_RETIRED = [
    *(f"DROP TRIGGER IF EXISTS conversation_search_{name}"
      for name in ("started", "ended", "renamed", "message_added", "message_removed", "message_changed")),
    "DROP TABLE IF EXISTS conversation_search",
]


def rebuild(database: Database) -> None:
    """Every document again, from the rows (after a bulk load without the triggers, or a VACUUM)."""
    database.execute_sql("INSERT INTO conversation_search (conversation_search) VALUES ('delete-all')")
    database.execute_sql(FILL)
    database.execute_sql("INSERT INTO conversation_search (conversation_search) VALUES ('optimize')")


def apply(database: Database) -> None:
    if is_postgres():
        return
    for statement in [*_RETIRED, _TABLE, *TRIGGERS]:
        database.execute_sql(statement)
    database.execute_sql(FILL)
    database.execute_sql("INSERT INTO conversation_search (conversation_search) VALUES ('optimize')")
