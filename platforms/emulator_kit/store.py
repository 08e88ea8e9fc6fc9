"""The sandbox's own SQLite file, so that a restart changes nothing a caller can see.

The emulator works on its in-memory state (`EmulatorState`) and writes what a request changed
here before that request's answer leaves (see `persist.py`): accounts (with their posts, uploads
and webhook settings), their contacts and comments (rows of their own: one account may have
thousands, and an account's row is written again whenever it is looked up), tokens and authorisation
codes (as SHA-256 digests only), the sent log, faults and latency. Id counters are handed out in
blocks reserved here first, so no id is ever handed out twice, even after a crash. The stdlib
`sqlite3` keeps `platforms/` free of our storage layer; one connection, guarded by a lock, serves
the process.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS accounts (platform TEXT NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL,
                                     PRIMARY KEY (platform, id));
CREATE TABLE IF NOT EXISTS contacts (platform TEXT NOT NULL, account_id TEXT NOT NULL, id TEXT NOT NULL,
                                     data TEXT NOT NULL, PRIMARY KEY (platform, account_id, id));
CREATE TABLE IF NOT EXISTS comments (platform TEXT NOT NULL, account_id TEXT NOT NULL, id TEXT NOT NULL,
                                     data TEXT NOT NULL, PRIMARY KEY (platform, account_id, id));
-- Tokens and authorisation codes keyed by their SHA-256 (`state.token_digest`), never in the clear.
CREATE TABLE IF NOT EXISTS tokens (value TEXT PRIMARY KEY, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS codes (value TEXT PRIMARY KEY, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sent (seq INTEGER PRIMARY KEY AUTOINCREMENT, platform TEXT NOT NULL, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS faults (platform TEXT PRIMARY KEY, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS latency (platform TEXT PRIMARY KEY, milliseconds INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, next INTEGER NOT NULL);
"""


@dataclass
class Batch:
    """What one request changed, already serialised (JSON text), ready to be written."""

    accounts: dict[tuple[str, str], str] = field(default_factory=dict)
    contacts: dict[tuple[str, str, str], str] = field(default_factory=dict)
    comments: dict[tuple[str, str, str], str] = field(default_factory=dict)
    tokens: dict[str, str] = field(default_factory=dict)
    codes: dict[str, str] = field(default_factory=dict)
    sent: list[tuple[str, str]] = field(default_factory=list)
    faults: dict[str, str] = field(default_factory=dict)
    latency: dict[str, int] = field(default_factory=dict)
    # Rows to delete: tokens and codes an earlier file kept in the clear, by their clear key.
    dropped_tokens: set[str] = field(default_factory=set)
    dropped_codes: set[str] = field(default_factory=set)

    def __bool__(self) -> bool:
        return any((self.accounts, self.contacts, self.comments, self.tokens, self.codes, self.sent, self.faults,
                    self.latency, self.dropped_tokens, self.dropped_codes))


@dataclass
class Loaded:
    accounts: list[dict[str, Any]]
    contacts: list[tuple[str, str, dict[str, Any]]]
    comments: list[tuple[str, str, dict[str, Any]]]
    tokens: list[dict[str, Any]]
    codes: dict[str, dict[str, Any]]
    sent: list[tuple[str, dict[str, Any]]]
    faults: dict[str, list[dict[str, Any]]]
    latency: dict[str, int]


class StateStore:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        # Created owner-only: it holds what the sandbox's tokens can do, if not the tokens.
        with contextlib.suppress(FileExistsError):
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=5)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        # What a row held before it was replaced or deleted is overwritten, not left in free space:
        # a token an earlier file kept in the clear is gone from the disk once rewritten as a digest.
        self._db.execute("PRAGMA secure_delete=ON")
        self._db.executescript(SCHEMA)

    def load(self) -> Loaded:
        with self._lock:
            rows = self._db.execute
            return Loaded(
                accounts=[json.loads(d) for (d,) in rows("SELECT data FROM accounts")],
                contacts=[(p, a, json.loads(d)) for p, a, d in rows("SELECT platform, account_id, data FROM contacts")],
                comments=[(p, a, json.loads(d)) for p, a, d in rows("SELECT platform, account_id, data FROM comments")],
                tokens=[json.loads(d) for (d,) in rows("SELECT data FROM tokens")],
                codes={v: json.loads(d) for v, d in rows("SELECT value, data FROM codes")},
                sent=[(p, json.loads(d)) for p, d in rows("SELECT platform, data FROM sent ORDER BY seq")],
                faults={p: json.loads(d) for p, d in rows("SELECT platform, data FROM faults")},
                latency=dict(rows("SELECT platform, milliseconds FROM latency").fetchall()),
            )

    def reserve(self, name: str, size: int, start: int) -> int:
        """Reserve the next `size` values of counter `name` (first use starts at `start`); return the first."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                row = self._db.execute("SELECT next FROM counters WHERE name = ?", (name,)).fetchone()
                first = start if row is None else int(row[0])
                self._db.execute(
                    "INSERT INTO counters (name, next) VALUES (?, ?) "
                    "ON CONFLICT (name) DO UPDATE SET next = excluded.next",
                    (name, first + size),
                )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return first

    def write(self, batch: Batch) -> None:
        if not batch:
            return
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                upsert = "INSERT OR REPLACE INTO {} VALUES ({})"
                self._db.executemany("DELETE FROM tokens WHERE value = ?", [(v,) for v in batch.dropped_tokens])
                self._db.executemany("DELETE FROM codes WHERE value = ?", [(v,) for v in batch.dropped_codes])
                self._db.executemany(
                    upsert.format("accounts", "?, ?, ?"), [(p, i, d) for (p, i), d in batch.accounts.items()]
                )
                self._db.executemany(
                    upsert.format("contacts", "?, ?, ?, ?"), [(*key, d) for key, d in batch.contacts.items()]
                )
                self._db.executemany(
                    upsert.format("comments", "?, ?, ?, ?"), [(*key, d) for key, d in batch.comments.items()]
                )
                self._db.executemany(upsert.format("tokens", "?, ?"), batch.tokens.items())
                self._db.executemany(upsert.format("codes", "?, ?"), batch.codes.items())
                self._db.executemany("INSERT INTO sent (platform, data) VALUES (?, ?)", batch.sent)
                self._db.executemany(upsert.format("faults", "?, ?"), batch.faults.items())
                self._db.executemany(upsert.format("latency", "?, ?"), batch.latency.items())
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def scrub(self) -> None:
        """Fold the write-ahead log into the file and empty it, so that no earlier version of a page
        (one that held a token in the clear) stays in it."""
        with self._lock:
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        with self._lock:
            self._db.close()
