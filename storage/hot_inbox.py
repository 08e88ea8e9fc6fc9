"""Hand-written SQL for the inbox list, the one inbox read that runs on every screen refresh.

Through the models a page of 20 conversations cost ~5 ms of Python on 100k rows: Peewee builds
its SQL on every call and parses every timestamp with `strptime`, five per row. Here the SQL is a
few string joins and rows stay tuples; the record (`service/inbox_shapes.py`) renders timestamps
from the stored text directly.
Measured in bench/conversations.py.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace
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
    # A search: each word in the conversation (its contact or any message), the last as begun when
    # it has two characters or more (`search_words`).
    words: tuple[str, ...] | None = None

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
_POSTGRES_FOUND = "document @@ to_tsquery('simple', switchboard_fold(?))"
# A short begun word after whole ones: the whole words are looked up in the index, and the begun
# one is checked on their conversations' documents alone (`|| ''` puts it out of the index's reach).
# In the index, `30:*` is every word of every workspace beginning with `30`, gathered before any is
# kept (`3:*` read 680 buffers on 10⁶ rows of history, where the whole word read 7:
# docs/benchmarks.md). From four characters a start names few words, and checking documents would
# cost more: a common whole word has thousands of conversations.
_SHORT_BEGUN = 3
_POSTGRES_FOUND_BEGUN = f"{_POSTGRES_FOUND} AND (document || ''::tsvector) @@ to_tsquery('simple', switchboard_fold(?))"
_POSTGRES_HITS = "id IN (SELECT conversation_id FROM conversation_search WHERE {found})"
_POSTGRES_FIRST = "WITH hits (hit) AS MATERIALIZED (SELECT conversation_id FROM conversation_search WHERE {found}) "
# Up to this many hits a page is their rows sorted; past it, the list's own index is walked newest
# first and each entry kept if it is a hit, which stops as soon as the page is full (a word in a
# quarter of the conversations fills page 1 after about 80 entries instead of sorting 25,000 rows).
SORT_UP_TO = 1000
# Past this many hits, fewer than `SORT_UP_TO`, the list is walked too when the hits are dense in it:
# the walk reads about (offset + limit) × listed ÷ found entries, the sort every hit's row. On 10⁶
# rows of history, a page of 20 of `question 3` sorted its 500 hits (2,077 buffers on PostgreSQL)
# in a workspace of 520 conversations, where the walk reads 21 entries.
_DENSE_FROM = 100
_ID = re.compile(r"[0-9a-z_]+")


def _sqlite_words(words: tuple[str, ...]) -> list[str]:
    """The words again, cut where SQLite's `unicode61` tokenizer may cut them: its tables are of
    Unicode 6.1, so a letter added since would split a word into a phrase, which an index without
    positions refuses. Unicode 3.2's letters and digits are letters and digits to it."""
    pieces: list[str] = []
    for word in words:
        run_ = "".join(c if unicodedata.ucd_3_2_0.category(c)[0] in "LN" else " " for c in word)
        pieces += run_.split()
    return pieces


def _token(value: str) -> str:
    """An id as the index's `scope` holds it: one word led by `_`, which no document's word holds
    (migration 38)."""
    return '"_' + value + '"'


def begun(word: str) -> bool:
    """Whether a search's last word is read as the start of one: from two characters. One character
    is a whole word: as a start it would match most conversations, and each database would gather
    every word of every workspace beginning with it before keeping the workspace's."""
    return len(word) >= 2


def _sqlite_terms(words: list[str]) -> str:
    """The words in `document` (the last the start of one, `begun`), as FTS5 reads them."""
    *whole, last = words
    final = f'"{last}"*' if begun(last) else f'"{last}"'
    return "document : (" + " ".join([*(f'"{word}"' for word in whole), final]) + ")"


def _sqlite_match(filters: Filters, terms: str) -> str:
    """The FTS5 query: the words, and the tenant and the other lasting filters in `scope`."""
    scope = [filters.workspace_id]
    if filters.account_id is not None:
        scope.append(filters.account_id)
    if filters.platform is not None:
        scope.append(filters.platform)
    parts = [f"scope : {_token(value)}" for value in scope]
    if filters.profile_ids is not None:
        parts.append(f"scope : ({' OR '.join(_token(profile) for profile in filters.profile_ids)})")
    return " AND ".join([*parts, terms])


def _scoped_by_index(filters: Filters) -> bool:
    """Whether the index's `scope` holds every filter, so that it counts the hits alone: only the
    tenant, account and platform filters, each a well-formed id (anything else matches no row, and
    the rows say so)."""
    values = [filters.workspace_id, filters.account_id, filters.platform, *(filters.profile_ids or ())]
    return (not (filters.unread or filters.status or filters.assignee_id or filters.label)
            and all(value is None or _ID.fullmatch(value) for value in values))


@dataclass(frozen=True)
class _Search:
    """A search, as a condition on `conversation` (with its parameters) for each way of reading it."""

    hits: str
    values: tuple[str, ...]
    terms: str = ""  # SQLite: the words alone, without the tenant
    found: str = ""  # PostgreSQL: the condition on `conversation_search`


def _search(filters: Filters) -> _Search | None:
    """None when no word is left to look for."""
    if not filters.words:
        return None
    if db.obj.param == "?":
        words = _sqlite_words(filters.words)
        if not words:
            return None
        terms = _sqlite_terms(words)
        return _Search(_SQLITE_HITS, (_sqlite_match(filters, terms),), terms)
    *whole, last = filters.words
    values: tuple[str, ...]
    if not begun(last):
        found, values = _POSTGRES_FOUND, (" & ".join(filters.words),)
    elif whole and len(last) <= _SHORT_BEGUN:
        found, values = _POSTGRES_FOUND_BEGUN, (" & ".join(whole), " & ".join([*whole, f"{last}:*"]))
    else:
        found, values = _POSTGRES_FOUND, (" & ".join([*whole, f"{last}:*"]),)
    # Held to the workspace here already: the hits, found first, are the workspace's alone.
    found, values = f"{found} AND workspace_id = ?", (*values, filters.workspace_id)
    return _Search(_POSTGRES_HITS.format(found=found), values, found=found)


def _search_total(filters: Filters, search: _Search | None) -> int:
    if search is None:
        return 0
    if search.terms and _scoped_by_index(filters):
        return _fts_count(search.values[0])
    if not search.terms and _scoped_by_index(filters) and filters.account_id is None and filters.platform is None:
        # PostgreSQL: the search's table knows each conversation's workspace and profile.
        sql = f"SELECT COUNT(*) FROM conversation_search WHERE {search.found}"  # noqa: S608 - placeholders only
        params: list[Any] = list(search.values)
        if filters.profile_ids is not None:
            sql += f" AND profile_id IN ({', '.join('?' * len(filters.profile_ids))})"
            params += filters.profile_ids
        return int(run(sql, tuple(params)).fetchone()[0])
    where, params = _where(filters)
    first = _POSTGRES_FIRST.format(found=search.found)
    counted = (f"SELECT COUNT(*) FROM conversation WHERE {search.hits} AND {where}" if search.terms  # noqa: S608 - placeholders only
               else f"{first}SELECT COUNT(*) FROM conversation JOIN hits ON hit = id WHERE {where}")  # noqa: S608 - placeholders only
    row = run(counted, (*search.values, *params)).fetchone()
    return int(row[0])


def _fts_count(match: str) -> int:
    row = run("SELECT COUNT(*) FROM conversation_search WHERE conversation_search MATCH ?", (match,)).fetchone()
    return int(row[0])


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
    if filters.words:
        return _search_total(filters, _search(filters))
    where, params = _where(filters)
    if not filters.counted:
        # The per-account counts know nothing of unread, status, assignee, label or a search: count
        # the rows (the filter's walk stops at the workspace's own index range, or the search's hits).
        row = run(f"SELECT COUNT(*) FROM conversation WHERE {where}", tuple(params)).fetchone()  # noqa: S608 - placeholders only
        return int(row[0])
    row = run(f"SELECT COALESCE(SUM(total), 0) FROM conversation_count WHERE {where}", tuple(params)).fetchone()  # noqa: S608 - placeholders only
    return int(row[0])


def _walked(filters: Filters, found: int, wanted: int) -> bool:
    """Whether a search's page is found by walking the list (see `SORT_UP_TO`, `_DENSE_FROM`); the
    list's size is asked only where its per-account counts answer it."""
    if found > SORT_UP_TO:
        return True
    listed = replace(filters, words=None)
    if found <= _DENSE_FROM or not listed.counted:
        return False
    return found * found > wanted * total(listed)


def searched(filters: Filters, *, limit: int, offset: int) -> tuple[list[tuple[Any, ...]], int]:
    """A search's page and its total: the total first (SQLite's index counts a workspace's hits
    without reading a row), then the page: the hits' rows sorted when they are few, else the list's
    own index walked newest first, keeping the hits, until the page is full (`_walked`)."""
    if filters.profile_ids == () or not filters.words:
        return [], 0
    search = _search(filters)
    found = _search_total(filters, search)
    if search is None or offset >= found:
        return [], found
    where, params = _where(filters)
    order = "ORDER BY activity_at DESC, id DESC"
    if not _walked(filters, found, offset + limit):
        if search.terms:
            sql = f"SELECT {_SELECT} FROM conversation WHERE {search.hits} AND {where} {order} LIMIT ? OFFSET ?"  # noqa: S608 - placeholders only
        else:
            # PostgreSQL's planner, asked for 20 rows in order, would walk the list and test every
            # conversation for a rare word: the hits are found first.
            sql = (f"{_POSTGRES_FIRST.format(found=search.found)}SELECT {_SELECT} FROM conversation"  # noqa: S608 - placeholders only
                   f" JOIN hits ON hit = id WHERE {where} {order} LIMIT ? OFFSET ?")
        return list(run(sql, (*search.values, *params, limit, offset)).fetchall()), found
    hits, values = search.hits, search.values
    if search.terms:
        # `+rowid` keeps SQLite's planner from starting at the hits: the walk starts at the index.
        # The walk holds the hits to the workspace itself, so when most of the words' hits are the
        # workspace's, they are kept without it (the index intersects the workspace's word, which
        # its every conversation holds, at about three times the cost).
        hits = "+" + hits
        if 2 * found >= _fts_count(search.terms):
            values = (search.terms,)
    sql = (f"SELECT {_SELECT} FROM conversation WHERE id IN (SELECT id FROM conversation"  # noqa: S608 - placeholders only
           f" WHERE {where} AND {hits} {order} LIMIT ? OFFSET ?) {order}")
    return list(run(sql, (*params, *values, limit, offset)).fetchall()), found


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
