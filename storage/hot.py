"""Hand-written SQL for the statements every request runs (key lookup, rate count).

Peewee builds its SQL anew on every call, which costs more than running the statement itself
(measured: ~0.3 ms of Python for a ~0.02 ms SQLite lookup). These few statements are compiled
once per database and run with `execute_sql`; everything else uses the models.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from functools import lru_cache
from typing import Any, NamedTuple

from storage.db import db
from storage.models import ApiKey


class KeyRow(NamedTuple):
    id: str
    workspace_id: str
    secret_hash: str
    scope: str
    profile_ids: list[str]
    permission: str
    last_used_at: datetime | None
    expires_at: datetime | None
    revoked_at: datetime | None


@lru_cache(maxsize=8)
def _sql(template: str, param: str) -> str:
    return template.replace("?", param)


def _run(template: str, params: tuple[Any, ...]) -> Any:
    return db.execute_sql(_sql(template, db.param), params)


def find_api_key(secret_hash: str) -> KeyRow | None:
    row = _run(
        "SELECT id, workspace_id, secret_hash, scope, profile_ids, permission, last_used_at, expires_at, revoked_at"
        " FROM api_key WHERE secret_hash = ?",
        (secret_hash,),
    ).fetchone()
    if row is None:
        return None
    return KeyRow(
        id=row[0],
        workspace_id=row[1],
        secret_hash=row[2],
        scope=row[3],
        profile_ids=ApiKey.profile_ids.python_value(row[4]) or [],
        permission=row[5],
        last_used_at=ApiKey.last_used_at.python_value(row[6]),
        expires_at=ApiKey.expires_at.python_value(row[7]),
        revoked_at=ApiKey.revoked_at.python_value(row[8]),
    )


def count_request(credential_id: str, window_start: int, tokens: int = 1) -> int:
    """Add `tokens` to this credential's window and return the new count, atomically."""
    row = _run(
        "INSERT INTO rate_limit_counter (key_id, window_start, count) VALUES (?, ?, ?)"
        " ON CONFLICT (key_id, window_start) DO UPDATE SET count = rate_limit_counter.count + excluded.count"
        " RETURNING count",
        (credential_id, window_start, tokens),
    ).fetchone()
    return int(row[0])


class Prepared:
    """A Peewee query built and compiled once, then run many times with new string values.

    `build` receives one placeholder string per named parameter and returns a query; the SQL it
    compiles to is kept per database, and each call swaps the placeholders in the parameter list
    for the real values. The cursor is read by the query's own wrapper, so rows come back as the
    same model instances (joins included) that running the query would give.
    """

    def __init__(self, build: Callable[..., Any], *names: str) -> None:
        self.build = build
        self.names = names
        self._compiled: dict[int, tuple[Any, str, list[Any]]] = {}

    def _compile(self) -> tuple[Any, str, list[Any]]:
        key = id(db.obj)
        if key not in self._compiled:
            marks = {name: f"\x00:{name}:\x00" for name in self.names}
            query = self.build(**marks)
            sql, params = query.sql()
            lookup = {mark: name for name, mark in marks.items()}
            slots = [_Slot(lookup[p]) if isinstance(p, str) and p in lookup else p for p in params]
            self._compiled[key] = (query, sql, slots)
        return self._compiled[key]

    def __call__(self, **values: str) -> Any:
        query, sql, slots = self._compile()
        params = [values[slot.name] if isinstance(slot, _Slot) else slot for slot in slots]
        return query._get_cursor_wrapper(db.execute_sql(sql, params))

    def first(self, **values: str) -> Any:
        for row in self(**values):
            return row
        return None


class _Slot(NamedTuple):
    name: str
