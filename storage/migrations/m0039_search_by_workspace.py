"""PostgreSQL's search table indexed by workspace (and profile), beside its words.

A search looks its whole words up in the GIN index and checks a begun last word on their
conversations' documents (`storage/hot_inbox.py`). A word in most conversations of every workspace
would have every one of them checked: with this index the planner starts from the workspace's own
conversations instead when they are the fewer, so a search costs what the workspace holds, not
what everyone does. On 10⁶ rows of history, `message 30` (a word in every conversation) read
7,718 buffers without it and 62 with it (docs/benchmarks.md).

SQLite's index holds the workspace as one of its words (`scope`, migration 38): nothing to do there.
"""

from peewee import Database

from storage.db import is_postgres


def apply(database: Database) -> None:
    if is_postgres():
        database.execute_sql("CREATE INDEX IF NOT EXISTS conversation_search_workspace"
                             " ON conversation_search (workspace_id, profile_id)")
