"""Find secrets kept in the clear: in a database (every table, every column) and in data-dir files."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from storage.db import connection, db, is_postgres

# What a secret of each kind looks like, so that any one (not only those a test knows) is found. Each
# must start and end on a boundary: encrypted values are base64url text, where a short prefix such as
# `cs_` followed by forty letters turns up by chance. Each pattern opens with its literal prefix and
# checks the boundary before it just after (a look-behind over the prefix): a pattern that opens with
# a look-behind is tried at every byte, a literal is searched for, some twenty times faster over the
# few hundred megabytes of data the session's scan reads.
_E = rb"(?![A-Za-z0-9_-])"


def _bounded(prefix: bytes) -> bytes:
    """`prefix`, not preceded by a token character."""
    return re.escape(prefix) + rb"(?<![A-Za-z0-9_-]" + re.escape(prefix) + rb")"


PATTERNS = {
    "API key": re.compile(_bounded(b"sk_") + rb"[0-9a-f]{64}" + _E),
    "media upload token": re.compile(_bounded(b"upl_") + rb"[0-9a-f]{64}" + _E),
    "webhook secret": re.compile(_bounded(b"whsec_") + rb"[A-Za-z0-9+/_-]{43}"),
    "OAuth access token": re.compile(_bounded(b"sbat_") + rb"[A-Za-z0-9_-]{43}" + _E),
    "OAuth refresh token": re.compile(_bounded(b"sbrt_") + rb"[A-Za-z0-9_-]{43}" + _E),
    "OAuth client secret": re.compile(_bounded(b"cs_") + rb"[A-Za-z0-9_-]{43}" + _E),
    "platform token": re.compile(rb"(?:" + _bounded(b"IGAA") + rb"|" + _bounded(b"IGQ") + rb"|" + _bounded(b"EAA")
                                 + rb"[AUPWLS])[A-Za-z0-9]{40}" + _E),
    # The bot's id (five digits or more) before `:AA`, checked after the literal is found.
    "Telegram bot token": re.compile(rb":AA(?<=[0-9]{5}:AA)[A-Za-z0-9_-]{30,}"),
}


def readable_tables() -> list[str]:
    """Every table whose rows can be read. A contentless full-text table (SQLite's `content=''`)
    keeps no values, only its index, which is in its shadow tables, listed and read here."""
    contentless: set[str] = set()
    if not is_postgres():
        contentless = {name for (name,) in db.execute_sql(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE ?", ("%content=''%",)).fetchall()}
    return [table for table in db.get_tables() if table not in contentless]


def database_text() -> bytes:
    """Every value of every table, as bytes: what anyone who reads the database sees."""
    out: list[bytes] = []
    with connection():
        for table in readable_tables():
            for row in db.execute_sql(f'SELECT * FROM "{table}"').fetchall():
                for value in row:
                    if isinstance(value, bytes | bytearray | memoryview):
                        out.append(bytes(value))
                    elif value is not None:
                        out.append(str(value).encode("utf-8", "replace"))
    return b"\n".join(out)


def files_text(paths: Iterable[Path]) -> bytes:
    return b"\n".join(path.read_bytes() for path in paths if path.is_file())


def findings(blob: bytes, *, known: Iterable[str] = ()) -> list[str]:
    found = [f"{kind}: {match.group(0)[:12]!r}..." for kind, pattern in PATTERNS.items()
             for match in pattern.finditer(blob)]
    found += [f"known secret {secret[:10]}..." for secret in known if secret.encode() in blob]
    return found
