"""The bases of every model: JSON kept as text, one database handle, and the work engine's columns."""

from __future__ import annotations

import json
from typing import Any

from peewee import CharField, DateTimeField, IntegerField, Model, TextField

from kit.clock import now
from storage.db import db

# `json.dumps` with these options builds an encoder per call; this one is built once (the same text).
_TO_TEXT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


class JSONField(TextField):
    def db_value(self, value: Any) -> str | None:
        return None if value is None else _TO_TEXT(value)

    def python_value(self, value: Any) -> Any:
        return None if value is None else json.loads(value)


class BaseModel(Model):
    class Meta:
        database = db
        legacy_table_names = False


class WorkModel(BaseModel):
    """A table whose rows are durable work of the engine (service/engine/core.py), with its columns.

    `status` is the row's own (each table names its states; a subclass may give it a default);
    `next_attempt_at` says when it is due (null: not due at all); `claimed_until` is the lease of the
    worker doing it now and `claim_token` that worker's mark, so an outcome from a worker that lost
    its lease changes nothing; `nudged_at` keeps the sweeper from enqueueing a row again every tick
    while its task waits in the queue. Only the engine writes the claim's columns.
    """

    status = CharField(max_length=16)
    attempts = IntegerField(default=0)
    next_attempt_at = DateTimeField(null=True)
    claimed_until = DateTimeField(null=True)
    claim_token = CharField(max_length=32, null=True)
    nudged_at = DateTimeField(null=True)
    updated_at = DateTimeField(default=now)
