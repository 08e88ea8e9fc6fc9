"""The event outbox no longer checks its workspace with a foreign key on PostgreSQL.

PostgreSQL checks a foreign key by locking the referenced row (`FOR KEY SHARE`): every event
inserted locked its workspace's row, and events inserted at once by several sending threads share
that lock as a multixact, rewritten with each new holder on the workspace's page. Every sent
message inserts an event, so all of a workspace's sends met on one row: measured on a broadcast of
6,000 messages, the statement that records a message as sent took 244-260 µs without it against
280-318 µs with it, and the backends' CPU a message was 757-780 µs against 822-913 µs.

Nothing is lost by it: an event is written only in the transaction of the change it reports, with
that row's workspace, which its own foreign key has checked, and workspaces are never deleted (an
event of one would have gone with it). SQLite checks a foreign key without writing anything, and
dropping one there means rebuilding the table: it keeps it.
"""

from peewee import Database

from storage.db import is_postgres


def apply(database: Database) -> None:
    if is_postgres():
        database.execute_sql("ALTER TABLE event DROP CONSTRAINT IF EXISTS event_workspace_id_fkey")
