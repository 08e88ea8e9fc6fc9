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

from storage.hot import run

# The columns of a conversation record, in the order `page` returns them.
COLUMNS = (
    "id", "account_id", "platform", "contact_handle", "contact_name", "external_conversation_id",
    "last_message_at", "last_inbound_at", "unread_count", "status", "created_at", "updated_at",
)
_SELECT = ", ".join(COLUMNS)


@dataclass(frozen=True)
class Filters:
    workspace_id: str
    profile_ids: tuple[str, ...] | None = None  # None: every profile
    account_id: str | None = None
    platform: str | None = None  # lower case, as stored
    unread: bool = False  # only conversations with inbound messages since the last reply


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
    return " AND ".join(parts), params


def total(filters: Filters) -> int:
    """How many conversations match: a sum over the per-account counts (see `ConversationCount`)."""
    if filters.profile_ids == ():
        return 0
    where, params = _where(filters)
    if filters.unread:
        # The per-account counts know nothing of unread: count the rows (few are unread at a time,
        # and the filter's walk stops at the workspace's own index range).
        row = run(f"SELECT COUNT(*) FROM conversation WHERE {where}", tuple(params)).fetchone()  # noqa: S608 - placeholders only
        return int(row[0])
    row = run(f"SELECT COALESCE(SUM(total), 0) FROM conversation_count WHERE {where}", tuple(params)).fetchone()  # noqa: S608 - placeholders only
    return int(row[0])


def page(filters: Filters, *, limit: int, offset: int) -> list[tuple[Any, ...]]:
    """One page, newest activity first, as tuples of `COLUMNS`.

    A deferred join: the inner query walks only the covering index (filter, activity_at, id) past
    the OFFSET, and whole rows are read for the page alone, so page 1000 costs about what page 1 does.
    """
    if filters.profile_ids == ():
        return []
    where, params = _where(filters)
    sql = (
        f"SELECT {_SELECT} FROM conversation WHERE id IN ("  # noqa: S608 - placeholders only
        f"SELECT id FROM conversation WHERE {where} ORDER BY activity_at DESC, id DESC LIMIT ? OFFSET ?)"
        " ORDER BY activity_at DESC, id DESC"
    )
    return list(run(sql, (*params, limit, offset)).fetchall())
