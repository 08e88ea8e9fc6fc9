"""Connected platform accounts, the single-use connect states and the platform events they receive."""

from __future__ import annotations

from peewee import BlobField, BooleanField, CharField, DateTimeField, ForeignKeyField

from kit.clock import now
from storage.models.base import BaseModel, JSONField, WorkModel
from storage.models.identity import Profile, Workspace


class Account(BaseModel):
    id = CharField(primary_key=True, max_length=40)
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE", index=True)
    workspace_id: str  # the foreign key column, for type checkers
    profile = ForeignKeyField(Profile, on_delete="RESTRICT", backref="accounts", index=True)
    profile_id: str  # the foreign key column, for type checkers
    platform = CharField(max_length=16)
    platform_account_id = CharField(max_length=128)
    # Its id under a separate grant (TikTok messaging's `open_id`, the `business_id` its webhooks name).
    grant_account_id = CharField(max_length=128, null=True)
    username = CharField(max_length=255, null=True)
    display_name = CharField(max_length=255, null=True)
    status = CharField(max_length=16, default="connected")  # connected | disconnected
    needs_reauth = BooleanField(default=False)
    credentials = BlobField(null=True)  # encrypted; erased on disconnect
    # When credentials that cannot be renewed once lapsed (Instagram's, Facebook's long-lived
    # tokens) lapse, in the clear so a daily job can find them; and when it last tried.
    credentials_expire_at = DateTimeField(null=True, index=True)
    credentials_checked_at = DateTimeField(null=True)
    # When owners and admins were mailed that it needs reconnecting (once; a reconnect clears it).
    health_notified_at = DateTimeField(null=True)
    connected_at = DateTimeField(default=now)
    disconnected_at = DateTimeField(null=True)
    created_at = DateTimeField(default=now)
    updated_at = DateTimeField(default=now)

    class Meta:
        indexes = ((("profile", "platform", "platform_account_id"), True), (("platform", "grant_account_id"), False))


class ConnectState(BaseModel):
    """The single-use nonce inside a signed OAuth `state`: consumed by the first callback."""

    nonce = CharField(primary_key=True, max_length=64)
    created_at = DateTimeField(default=now, index=True)
    used_at = DateTimeField(null=True)


class InboundRecord(BaseModel):
    """One platform event for one account, stored once however often the platform delivers it."""

    id = CharField(primary_key=True, max_length=40)
    account = ForeignKeyField(Account, on_delete="CASCADE", index=True)
    account_id: str  # the foreign key column, for type checkers
    platform = CharField(max_length=16)
    kind = CharField(max_length=16)
    dedupe_key = CharField(max_length=255)
    event = JSONField()  # the normalised event
    received_at = DateTimeField(default=now)
    processed_at = DateTimeField(null=True, index=True)

    class Meta:
        indexes = ((("account", "dedupe_key"), True),)


class AccountChore(WorkModel):
    """A recurring chore of one account as a row of the work engine: `renewal` (refresh credentials
    that lapse for good) or `snapshot` (today's follower count). One row per account and chore, its
    id `<chore>_<account id>`: `idle` between runs, armed `due` when the account's own columns say
    the chore is due (service/accounts/work.py, service/analytics/work.py), back to `idle` once done.
    """

    id = CharField(primary_key=True, max_length=60)
    account = ForeignKeyField(Account, on_delete="CASCADE", index=True)
    account_id: str  # the foreign key column, for type checkers
    chore = CharField(max_length=16)  # renewal | snapshot | history
    status = CharField(max_length=16, default="idle")  # idle | due
    created_at = DateTimeField(default=now)

    class Meta:
        indexes = ((("chore", "status", "next_attempt_at"), False),)  # the sweeper's due rows


class ConnectSelection(BaseModel):
    """What one OAuth grant reaches when it reaches several things (Facebook Pages, ad accounts,
    LinkedIn organizations, YouTube channels), kept until the person chooses. Only a SHA-256 of the
    `selection` token handed out is kept; the choices with their platform tokens are encrypted like
    account credentials, and erased once chosen."""

    id = CharField(primary_key=True, max_length=64)  # sha256 hex of the token
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE", index=True)
    workspace_id: str  # the foreign key column, for type checkers
    profile = ForeignKeyField(Profile, on_delete="CASCADE", index=False)
    profile_id: str  # the foreign key column, for type checkers
    platform = CharField(max_length=16)
    choices = BlobField(null=True)  # encrypted JSON; null once used
    redirect_url = CharField(max_length=2048, null=True)
    created_at = DateTimeField(default=now)
    expires_at = DateTimeField(index=True)
    used_at = DateTimeField(null=True)
