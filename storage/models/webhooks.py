"""The event outbox, customers' webhook endpoints and their deliveries."""

from __future__ import annotations

from peewee import BlobField, BooleanField, CharField, DateTimeField, ForeignKeyField, IntegerField, TextField

from kit.clock import now
from storage.models.base import BaseModel, JSONField, WorkModel
from storage.models.identity import Workspace


class Event(BaseModel):
    """The outbox: written in the transaction of the change that caused it, sent later by a worker."""

    id = CharField(primary_key=True, max_length=40)
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE", index=True)
    workspace_id: str  # the foreign key column, for type checkers
    type = CharField(max_length=64)
    data = JSONField()
    created_at = DateTimeField(default=now)
    # The undispatched are indexed in dispatch order (migration 26).
    dispatched_at = DateTimeField(null=True)


class WebhookEndpoint(BaseModel):
    """A customer's HTTPS endpoint for outbound events. Secrets are encrypted: they must be usable to sign."""

    id = CharField(primary_key=True, max_length=40)
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE", backref="webhook_endpoints", index=True)
    workspace_id: str  # the foreign key column, for type checkers
    url = TextField()
    events = JSONField(default=list)  # [] = every event, also ones added later
    description = TextField(null=True)
    enabled = BooleanField(default=True)
    secret = BlobField()  # encrypted `whsec_...`
    # Encrypted [{"secret", "expiresAt"}]: secrets replaced by a rotation, still signing until they expire.
    previous_secrets = BlobField(null=True)
    created_at = DateTimeField(default=now)
    updated_at = DateTimeField(default=now)


class WebhookDelivery(WorkModel):
    """One event to one endpoint: the durable unit of webhook work (Huey only nudges it).

    `claimed_until` is the lease of the worker sending it now; a worker that dies leaves the lease
    to expire and the sweeper hands the row to another. `nudged_at` only stops the sweeper from
    enqueueing the same row every tick while its task waits in the queue.
    """

    id = CharField(primary_key=True, max_length=40)
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE", index=True)
    workspace_id: str  # the foreign key column, for type checkers
    endpoint = ForeignKeyField(WebhookEndpoint, on_delete="CASCADE", backref="deliveries")
    endpoint_id: str  # the foreign key column, for type checkers
    event = ForeignKeyField(Event, on_delete="CASCADE")
    event_id: str  # the foreign key column, for type checkers
    event_type = CharField(max_length=64)  # copied from the event for the log's filter
    status = CharField(max_length=16, default="QUEUED")  # QUEUED | RETRYING | DELIVERED | FAILED
    response_status = IntegerField(null=True)
    last_error = TextField(null=True)
    delivered_at = DateTimeField(null=True)
    created_at = DateTimeField(default=now)
    updated_at = DateTimeField(default=now)

    class Meta:
        indexes = (
            (("status", "next_attempt_at"), False),  # the sweeper's due rows
            (("endpoint", "created_at"), False),  # the delivery log, newest first
        )
