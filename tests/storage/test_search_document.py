"""SQLite's search index adds each new message's words to its conversation's document (migration
38), and rewrites the document only where words go: whatever mix of changes a conversation sees,
a search finds exactly the conversations whose contact or visible messages hold its words, within
the workspace and platform asked."""

from __future__ import annotations

import random
import re
import unicodedata

import pytest

from storage import hot_inbox
from storage.db import connection, db
from storage.models import Workspace
from tests.conftest import PG_BASE
from tests.support.factories import add_account, add_profile

pytestmark = pytest.mark.skipif(bool(PG_BASE), reason="PostgreSQL's document is a tsvector computed again")

WORDS = ["telegram", "x", "scarf", "order", "ws_a", "parcel", "zoë", "lisbon", "b_c", "souza"]
NOW = "2026-01-01 00:00:00"


def _words(text: str | None) -> set[str]:
    folded = "".join(c for c in unicodedata.normalize("NFD", (text or "").lower()) if not unicodedata.combining(c))
    return set(re.findall(r"[^\W_]+", folded))


class _Inbox:
    def __init__(self, rng: random.Random, workspaces: list[str], accounts: dict[str, dict[str, str]]) -> None:
        self.rng, self.workspaces, self.accounts = rng, workspaces, accounts
        self.conversations: list[str] = []
        self.made = 0

    def text(self) -> str | None:
        return " ".join(self.rng.choice(WORDS) for _ in range(self.rng.randint(0, 4))) if self.rng.random() > 0.1 else None

    def start(self) -> None:
        self.made += 1
        workspace = self.rng.choice(self.workspaces)
        platform = self.rng.choice(["telegram", "x"])
        profile, account = self.accounts[workspace]["profile"], self.accounts[workspace][platform]
        db.execute_sql("INSERT INTO conversation (id, workspace_id, profile_id, account_id, platform, contact_handle,"
                       " contact_name, activity_at, unread_count, status, created_at, updated_at)"
                       " VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, 'open', ?, ?)",
                       (f"conv_{self.made}", workspace, profile, account, platform, f"handle_{self.made}",
                        self.rng.choice(["Ana Souza", "Zoë x", None]), NOW, NOW, NOW))
        self.conversations.append(f"conv_{self.made}")

    def change(self) -> None:
        roll = self.rng.random()
        if roll < 0.5:
            self.made += 1
            db.execute_sql("INSERT INTO message (id, attempts, conversation_id, direction, text, status, source,"
                           " created_at, updated_at) VALUES (?, 0, ?, 'inbound', ?, 'received', 'platform', ?, ?)",
                           (f"msg_{self.made}", self.rng.choice(self.conversations), self.text(), NOW, NOW))
        elif roll < 0.6:
            db.execute_sql("UPDATE message SET text = ? WHERE id = (SELECT id FROM message ORDER BY random() LIMIT 1)",
                           (self.text(),))
        elif roll < 0.7:
            db.execute_sql("UPDATE message SET deleted_at = ? WHERE id = (SELECT id FROM message ORDER BY random()"
                           " LIMIT 1)", (NOW,))
        elif roll < 0.75:
            db.execute_sql("DELETE FROM message WHERE id = (SELECT id FROM message ORDER BY random() LIMIT 1)")
        elif roll < 0.85:
            db.execute_sql("UPDATE conversation SET contact_name = ? WHERE id = ?",
                           (self.rng.choice(["Ana Souza", "Lea telegram", None]), self.rng.choice(self.conversations)))
        elif roll < 0.9 and len(self.conversations) > 3:
            gone = self.conversations.pop(self.rng.randrange(len(self.conversations)))
            db.execute_sql("DELETE FROM conversation WHERE id = ?", (gone,))
        else:
            self.start()

    def expected(self, workspace: str, platform: str, word: str) -> set[str]:
        """The conversations a search for `word` (the start of one, from two characters) must find,
        from the rows."""
        found = set()
        rows = db.execute_sql("SELECT id, contact_name, contact_handle FROM conversation WHERE workspace_id = ?"
                              " AND platform = ?", (workspace, platform)).fetchall()
        for conversation, name, handle in rows:
            words = _words(name) | _words(handle)
            for (text,) in db.execute_sql("SELECT text FROM message WHERE conversation_id = ? AND text IS NOT NULL"
                                          " AND deleted_at IS NULL", (conversation,)).fetchall():
                words |= _words(text)
            if word in words or (len(word) > 1 and any(each.startswith(word) for each in words)):
                found.add(conversation)
        return found


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_search_finds_what_the_rows_hold_after_any_changes(service, seed):
    rng = random.Random(seed)
    with connection():
        accounts: dict[str, dict[str, str]] = {}
        for name in ("a", "b"):
            with db.atomic():
                workspace = Workspace.create(id=f"ws_{name}", name=name, created_at=NOW, updated_at=NOW).id
            profile = add_profile(workspace)
            accounts[workspace] = {"profile": profile, **{p: add_account(workspace, profile, p) for p in ("telegram", "x")}}
        inbox = _Inbox(rng, list(accounts), accounts)
        with db.atomic():
            for _ in range(6):
                inbox.start()
        for step in range(150):
            with db.atomic():
                for _ in range(rng.randint(1, 3)):
                    inbox.change()
            if step % 30 == 29:
                db.execute_sql("INSERT INTO conversation_search (conversation_search, rank) VALUES ('merge', 500)")
        for word in sorted(_words(" ".join([*WORDS, "ana handle lea"]))):
            for workspace in accounts:
                for platform in ("telegram", "x"):
                    filters = hot_inbox.Filters(workspace_id=workspace, platform=platform, words=(word,))
                    rows, total = hot_inbox.searched(filters, limit=1000, offset=0)
                    assert {row[0] for row in rows} == inbox.expected(workspace, platform, word), (word, platform)
                    assert total == len(rows)
