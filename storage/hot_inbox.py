"""Hand-written SQL for the inbox list, the one inbox read that runs on every screen refresh.

Through the models a page of 20 conversations cost ~5 ms of Python on 100k rows: Peewee builds
its SQL on every call and parses every timestamp with `strptime`, five per row. Here the SQL is a
few string joins and rows stay tuples; the record (`service/inbox_shapes.py`) renders timestamps
from the stored text directly.
Measured in bench/conversations.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from storage.db import db
from storage.hot import run

# The columns of a conversation record, in the order `page` returns them.
COLUMNS = (
    "id", "account_id", "platform", "contact_handle", "contact_name", "external_conversation_id",
    "last_message_at", "last_inbound_at", "unread_count", "status", "snoozed_until", "assignee_id", "labels",
    "created_at", "updated_at",
)
_SELECT = ", ".join(COLUMNS)


@dataclass(frozen=True)
class Filters:
    workspace_id: str
    profile_ids: tuple[str, ...] | None = None  # None: every profile
    account_id: str | None = None
    platform: str | None = None  # lower case, as stored
    unread: bool = False  # only conversations with inbound messages since the last reply
    status: str | None = None
    assignee_id: str | None = None  # "none": unassigned
    label: str | None = None
    words: tuple[str, ...] | None = None  # a search: every word is in the conversation (its contact or messages), the last begun

    @property
    def counted(self) -> bool:
        """Whether the per-account counts answer the total (filters they know nothing of: no)."""
        return not (self.unread or self.status or self.assignee_id or self.label or self.words is not None)


# Search (the shared inbox's `q`): what each database offers, never LIKE over every message. Both
# index one document per conversation (its contact and its messages' text, migration 32), so the
# index answers conversations, not messages to step from: SQLite's contentless FTS5 table by the
# conversation's rowid, PostgreSQL's GIN-indexed `conversation_search` by its id. The hits are then
# held to the list's own filters (workspace, a member's profiles...) and ordered as the list is.
_SQLITE_HITS = "rowid IN (SELECT rowid FROM conversation_search WHERE conversation_search MATCH ?)"
_POSTGRES_HITS = ("id IN (SELECT conversation_id FROM conversation_search"
                  " WHERE document @@ to_tsquery('simple', switchboard_fold(?)))")


def _hits(words: tuple[str, ...]) -> tuple[str, list[Any]]:
    """The search's condition. As a person types: every word but the last is a whole word, the
    last the start of one (a prefix over every word of the index costs far more than a word)."""
    *whole, last = words
    if db.obj.param == "?":
        return _SQLITE_HITS, [" ".join([*(f'"{word}"' for word in whole), f'"{last}"*'])]
    return _POSTGRES_HITS, [" & ".join([*whole, f"{last}:*"])]


def _where(filters: Filters) -> tuple[str, list[Any]]:
    parts, params = ["workspace_id = ?"], [filters.workspace_id]
    if filters.profile_ids is not None:
        parts.append(f"profile_id IN ({', '.join('?' * len(filters.profile_ids))})")
        params += filters.profile_ids
    if filters.account_id is not None:
        parts.append("account_id = ?")
        params.append(filters.account_id)
    if filters.platform is not None:
        parts.append("platform = ?")
        params.append(filters.platform)
    if filters.unread:
        parts.append("unread_count > 0")
    if filters.status is not None:
        parts.append("status = ?")
        params.append(filters.status)
    if filters.assignee_id == "none":
        parts.append("assignee_id IS NULL")
    elif filters.assignee_id is not None:
        parts.append("assignee_id = ?")
        params.append(filters.assignee_id)
    if filters.label is not None:
        parts.append("id IN (SELECT conversation_id FROM conversation_label WHERE workspace_id = ? AND label = ?)")
        params += [filters.workspace_id, filters.label]
    return " AND ".join(parts), params


def total(filters: Filters) -> int:
    """How many conversations match: a sum over the per-account counts (see `ConversationCount`)."""
    if filters.profile_ids == () or filters.words == ():
        return 0
    where, params = _where(filters)
    if filters.words:
        hits, values = _hits(filters.words)
        row = run(f"SELECT COUNT(*) FROM conversation WHERE {hits} AND {where}",  # noqa: S608 - placeholders only
                  (*values, *params)).fetchone()
        return int(row[0])
    if not filters.counted:
        # The per-account counts know nothing of unread, status, assignee, label or a search: count
        # the rows (the filter's walk stops at the workspace's own index range, or the search's hits).
        row = run(f"SELECT COUNT(*) FROM conversation WHERE {where}", tuple(params)).fetchone()  # noqa: S608 - placeholders only
        return int(row[0])
    row = run(f"SELECT COALESCE(SUM(total), 0) FROM conversation_count WHERE {where}", tuple(params)).fetchone()  # noqa: S608 - placeholders only
    return int(row[0])


def searched(filters: Filters, *, limit: int, offset: int) -> tuple[list[tuple[Any, ...]], int]:
    """A search's page and its total in one statement (the search's hits are found once, not once
    for the count and again for the page); the total is counted apart only past the last page."""
    if filters.profile_ids == () or not filters.words:
        return [], 0
    where, params = _where(filters)
    hits, values = _hits(filters.words)
    sql = (f"SELECT {_SELECT}, COUNT(*) OVER () FROM conversation"  # noqa: S608 - placeholders only
           f" WHERE {hits} AND {where} ORDER BY activity_at DESC, id DESC LIMIT ? OFFSET ?")
    rows = list(run(sql, (*values, *params, limit, offset)).fetchall())
    if not rows:
        return [], total(filters) if offset else 0
    return [row[:-1] for row in rows], int(rows[0][-1])


def page(filters: Filters, *, limit: int, offset: int) -> list[tuple[Any, ...]]:
    """One page, newest activity first, as tuples of `COLUMNS`.

    A deferred join: the inner query walks only the covering index (filter, activity_at, id) past
    the OFFSET, and whole rows are read for the page alone, so page 1000 costs about what page 1 does.
    """
    if filters.profile_ids == () or filters.words == ():
        return []
    where, params = _where(filters)
    sql = (
        f"SELECT {_SELECT} FROM conversation WHERE id IN ("  # noqa: S608 - placeholders only
        f"SELECT id FROM conversation WHERE {where} ORDER BY activity_at DESC, id DESC LIMIT ? OFFSET ?)"
        " ORDER BY activity_at DESC, id DESC"
    )
    return list(run(sql, (*params, limit, offset)).fetchall())
