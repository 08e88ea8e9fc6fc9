"""Posts, their per-account targets (work rows of the engine) and media uploads."""

from peewee import Database

from storage.models import Media, Post, PostTarget

_WORK_INDEX = (
    "CREATE INDEX IF NOT EXISTS post_target_work ON post_target (next_attempt_at) "
    "WHERE status IN ('queued', 'publishing')"
)


def apply(database: Database) -> None:
    database.create_tables([Media, Post, PostTarget], safe=True)
    database.execute_sql(_WORK_INDEX)
