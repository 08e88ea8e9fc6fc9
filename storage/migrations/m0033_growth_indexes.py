"""Indexes that keep the scheduler's tick and the posts' window flat as other workspaces' history
grows, and autovacuum's thresholds for the tables every message writes.

`post_target_work` (next_attempt_at, for queued and publishing rows) could not serve the tick's
"is anything due?" read nor the sweep: they ask for `queued` or `unknown` rows that are due and for
`publishing` rows whose lease ran out, which neither database can prove lie within that partial
index, so each read scanned the table. `post_target_due` leads with the status: each arm reads
only its own statuses' rows, and a due row by its `next_attempt_at`.

`post_target_live` serves the window of `GET /v1/posts?from=&to=` and the calendar (a post is shown
on the day one of its targets went live): it scanned every workspace's targets.

`broadcast_sending` holds the broadcasts being sent, which the tick's completion job reads each
second: it read every broadcast ever made.

On PostgreSQL, the tables each message, event and delivery updates are vacuumed and analysed after
2 % of their rows changed (and after 5 % inserted) rather than the server's default 20 %: on a table
of millions of rows, 20 % is hundreds of thousands of dead entries that the outbox's dispatch and
the sweep step over from the oldest (docs/operations.md). A server that runs autovacuum applies
them; one that does not ignores them.
"""

from peewee import Database

from storage.db import is_postgres

_STATEMENTS = (
    "CREATE INDEX IF NOT EXISTS post_target_due ON post_target (status, next_attempt_at)",
    "DROP INDEX IF EXISTS post_target_work",
    "CREATE INDEX IF NOT EXISTS post_target_live ON post_target (workspace_id, published_at)",
    "CREATE INDEX IF NOT EXISTS broadcast_sending ON broadcast (id) WHERE status = 'sending'",
)
_BUSY_TABLES = ("message", "conversation", "event", "webhook_delivery", "post_target", "account_chore",
                "broadcast_recipient", "inbox_poll")
_AUTOVACUUM = ("autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02, "
               "autovacuum_vacuum_insert_scale_factor = 0.05")


def apply(database: Database) -> None:
    for statement in _STATEMENTS:
        database.execute_sql(statement)
    if is_postgres():
        for table in _BUSY_TABLES:
            database.execute_sql(f"ALTER TABLE {table} SET ({_AUTOVACUUM})")
