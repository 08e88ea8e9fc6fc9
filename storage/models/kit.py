"""Small shared records of the service: idempotency keys, rate-limit windows, scheduler state."""

from __future__ import annotations

from peewee import CharField, CompositeKey, DateTimeField, IntegerField, TextField

from kit.clock import now
from storage.models.base import BaseModel


class IdempotencyRecord(BaseModel):
    """An `Idempotency-Key` of one credential: reserved before its request runs, then its first answer,
    replayed for the same key and body within 24 hours.

    While the request runs, `status` is null and `locked_until` is its lease; `resource_id` names what
    the request created as soon as that commits, so a retry after a crash finds it instead of making
    a second one. `body` is encrypted (an answer may carry a secret shown once).
    """

    key_id = CharField(max_length=40)  # the API key (or token) that sent it
    idempotency_key = CharField(max_length=255)
    request_hash = CharField(max_length=64)
    status = IntegerField(null=True)  # null while the first request runs
    body = TextField(null=True)
    owner = CharField(max_length=32, null=True)  # the running request's token
    locked_until = DateTimeField(null=True)
    resource_id = CharField(max_length=40, null=True)
    created_at = DateTimeField(default=now, index=True)

    class Meta:
        primary_key = CompositeKey("key_id", "idempotency_key")


class RateLimitCounter(BaseModel):
    """Requests of one key in one fixed one-minute window; shared by every API process."""

    key_id = CharField(max_length=40)
    window_start = IntegerField()  # unix seconds, a multiple of 60
    count = IntegerField(default=0)

    class Meta:
        primary_key = CompositeKey("key_id", "window_start")


class SchedulerState(BaseModel):
    """Small shared facts of the scheduler (its last tick), for health and operators."""

    name = CharField(primary_key=True, max_length=64)
    value = TextField(null=True)
    updated_at = DateTimeField(default=now)
