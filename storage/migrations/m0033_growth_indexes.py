"""Indexes that keep the scheduler's tick and the posts' window flat as other workspaces' history grows.

`post_target_work` (next_attempt_at, for queued and publishing rows) could not serve the tick's
"is anything due?" read nor the sweep: they ask for `queued` or `unknown` rows that are due and for
`publishing` rows whose lease ran out, which neither database can prove lie within that partial
index, so each read scanned the table. `post_target_due` leads with the status: each arm reads
only its own statuses' rows, and a due row by its `next_attempt_at`.

`post_target_live` serves the window of `GET /v1/posts?from=&to=` and the calendar (a post is shown
on the day one of its targets went live): it scanned every workspace's targets.
"""

from peewee import Database

_STATEMENTS = (
    "CREATE INDEX IF NOT EXISTS post_target_due ON post_target (status, next_attempt_at)",
    "DROP INDEX IF EXISTS post_target_work",
    "CREATE INDEX IF NOT EXISTS post_target_live ON post_target (workspace_id, published_at)",
)


def apply(database: Database) -> None:
    for statement in _STATEMENTS:
        database.execute_sql(statement)
