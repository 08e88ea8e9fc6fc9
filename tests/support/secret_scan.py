"""Find secrets kept in the clear: in a database (every table, every column) and in data-dir files."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from storage.db import connection, db

# What a secret of each kind looks like, so that any one (not only those a test knows) is found.
PATTERNS = {
    "API key": re.compile(rb"sk_[0-9a-f]{64}"),
    "webhook secret": re.compile(rb"whsec_[A-Za-z0-9+/_-]{40,}"),
    "OAuth access token": re.compile(rb"sbat_[A-Za-z0-9_-]{40,}"),
    "OAuth refresh token": re.compile(rb"sbrt_[A-Za-z0-9_-]{40,}"),
    "OAuth client secret": re.compile(rb"cs_[A-Za-z0-9_-]{40,}"),
    "platform token": re.compile(rb"(?:IGAA|IGQ|EAA[AUPWLS])[A-Za-z0-9]{40}"),
    "Telegram bot token": re.compile(rb"[0-9]{5,}:AA[A-Za-z0-9_-]{30,}"),
}


def database_text() -> bytes:
    """Every value of every table, as bytes: what anyone who reads the database sees."""
    out: list[bytes] = []
    with connection():
        for table in db.get_tables():
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
