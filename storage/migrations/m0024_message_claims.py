"""A message's claim touches no index: the engine's work index holds the messages that have a
`next_attempt_at` instead of those in some statuses, and the indexes on columns that most messages
leave empty hold only the messages that have them.

On PostgreSQL an UPDATE that changes no indexed column, and finds room on the row's own page, is a
heap-only (HOT) update: it adds no entry to any of the table's indexes. A message's claim (its
status to `sending`, its lease and token) was the costliest statement of a send, because `status`
was in the work index's condition: measured on a broadcast of 6,000 messages, 690 µs and 107
buffers a claim, against 84 µs and 11 buffers once it is heap-only. The table keeps a fifth of each
new page free (`fillfactor`) so that the claim's new version fits beside the old one. A delivery
or read receipt, which moves only the status, becomes heap-only too.

The engine keeps the work index exact: a finished message's `next_attempt_at` is NULL, and the
sweep clears it on a message it marks lost (`Kind.due_indexed`); the rows an older version left
lost with one are cleared here.
"""

from peewee import Database

from storage.db import is_postgres

_STATEMENTS = (
    "UPDATE message SET next_attempt_at = NULL "
    "WHERE next_attempt_at IS NOT NULL AND status NOT IN ('pending', 'sending')",
    "DROP INDEX IF EXISTS message_work",
    "CREATE INDEX message_work ON message (next_attempt_at) WHERE next_attempt_at IS NOT NULL",
    # Unique where present: a private reply per comment (migration 11); NULLs never collided anyway.
    "DROP INDEX IF EXISTS message_comment_id",
    "CREATE UNIQUE INDEX message_comment_id ON message (comment_id) WHERE comment_id IS NOT NULL",
    # Receipts look messages up by the platform's id, which a message has once it is sent.
    "DROP INDEX IF EXISTS message_platform_message_id",
    "CREATE INDEX message_platform_message_id ON message (platform_message_id) "
    "WHERE platform_message_id IS NOT NULL",
)


def apply(database: Database) -> None:
    for statement in _STATEMENTS:
        database.execute_sql(statement)
    if is_postgres():
        database.execute_sql("ALTER TABLE message SET (fillfactor = 80)")
