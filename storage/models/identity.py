"""Tenants and people: workspaces, profiles, users, API keys, dashboard sessions and OAuth records."""

from __future__ import annotations

from peewee import BooleanField, CharField, CompositeKey, DateTimeField, ForeignKeyField

from kit.clock import now
from storage.models.base import BaseModel, JSONField


class Workspace(BaseModel):
    id = CharField(primary_key=True, max_length=40)
    name = CharField(max_length=200)
    post_approval = BooleanField(default=False)  # a member's posts wait for an owner's or admin's approval
    created_at = DateTimeField(default=now)
    updated_at = DateTimeField(default=now)
    # An MCP client that can ask the person (elicitation) confirms before a tool reaches people.
    confirm_before_reaching_people = BooleanField(default=True)


class User(BaseModel):
    id = CharField(primary_key=True, max_length=40)
    email = CharField(max_length=320, unique=True)  # stored lower-cased
    password_hash = CharField(max_length=255, null=True)  # null for identity-provider-only users
    email_verified = BooleanField(default=False)
    oidc_subject = CharField(max_length=255, null=True, unique=True)
    name = CharField(max_length=200, null=True)  # as the person gave it (an invitation's sign-up)
    # The IANA zone the dashboard shows this person's times in; null until their browser first says
    # (its sign-in form, or their first page), then theirs to change on their profile.
    time_zone = CharField(max_length=64, null=True)
    created_at = DateTimeField(default=now)
    updated_at = DateTimeField(default=now)


class Membership(BaseModel):
    user = ForeignKeyField(User, on_delete="CASCADE", backref="memberships")
    user_id: str  # the foreign key column, for type checkers
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE", backref="memberships")
    workspace_id: str  # the foreign key column, for type checkers
    role = CharField(max_length=16)  # owner | admin | member | viewer (service.identity.roles)
    # A member or viewer limited to some profiles: their ids; null: every profile of the workspace.
    profile_ids = JSONField(null=True)
    created_at = DateTimeField(default=now)

    class Meta:
        primary_key = CompositeKey("user", "workspace")


class Invitation(BaseModel):
    """An invitation to join a workspace: a single-use link, valid 7 days. Only the SHA-256 of the
    link's token is kept; the link itself is shown once to the inviter (and e-mailed)."""

    id = CharField(primary_key=True, max_length=40)
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE", index=True)
    workspace_id: str  # the foreign key column, for type checkers
    email = CharField(max_length=320)  # lower-cased
    role = CharField(max_length=16)
    profile_ids = JSONField(null=True)
    token_hash = CharField(max_length=64, unique=True)
    invited_by = CharField(max_length=40, null=True)  # the inviting user's id (null: an API key)
    created_at = DateTimeField(default=now)
    expires_at = DateTimeField()
    accepted_at = DateTimeField(null=True)
    accepted_by = CharField(max_length=40, null=True)
    revoked_at = DateTimeField(null=True)


class Profile(BaseModel):
    id = CharField(primary_key=True, max_length=40)
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE", backref="profiles", index=True)
    workspace_id: str  # the foreign key column, for type checkers
    name = CharField(max_length=200)
    created_at = DateTimeField(default=now)
    updated_at = DateTimeField(default=now)


class ApiKey(BaseModel):
    id = CharField(primary_key=True, max_length=40)
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE", backref="api_keys", index=True)
    workspace_id: str  # the foreign key column, for type checkers
    name = CharField(max_length=200)
    secret_hash = CharField(max_length=64, unique=True)  # SHA-256 hex of the whole key
    prefix = CharField(max_length=16)  # "sk_" + first 8 hex, for people to recognise a key
    scope = CharField(max_length=16)  # full | profiles
    profile_ids = JSONField(default=list)
    permission = CharField(max_length=16)  # read-write | read
    created_at = DateTimeField(default=now)
    updated_at = DateTimeField(default=now)
    last_used_at = DateTimeField(null=True)
    expires_at = DateTimeField(null=True)
    revoked_at = DateTimeField(null=True)


class DashboardSession(BaseModel):
    """A person's signed-in dashboard session. The cookie carries a random id; only its SHA-256 is
    here, so a session ends for every process the moment its row goes (sign-out, a password
    change, removal from a workspace)."""

    id_hash = CharField(primary_key=True, max_length=64)
    user = ForeignKeyField(User, on_delete="CASCADE", index=True)
    user_id: str  # the foreign key column, for type checkers
    created_at = DateTimeField(default=now)
    expires_at = DateTimeField(index=True)


class OAuthClient(BaseModel):
    """A client registered through RFC 7591 dynamic registration.

    Clients identified by a Client ID Metadata Document (an https URL) are not stored: their
    metadata is fetched when needed and the grant keeps a copy of the name shown at consent.
    """

    client_id = CharField(primary_key=True, max_length=64)
    secret_hash = CharField(max_length=64, null=True)  # SHA-256 of the secret; null for public clients
    client_name = CharField(max_length=200, null=True)  # attacker-controlled: always escaped when shown
    redirect_uris = JSONField(default=list)
    grant_types = JSONField(default=list)
    response_types = JSONField(default=list)
    scope = CharField(max_length=200, null=True)
    token_endpoint_auth_method = CharField(max_length=32)
    metadata = JSONField(default=dict)  # everything else the client registered, echoed as given
    created_at = DateTimeField(default=now)


class OAuthGrant(BaseModel):
    """One person's consent to one client in one workspace: the "connected app".

    Every token descends from a grant; revoking the grant (dashboard, reuse of a refresh token,
    reuse of a code) revokes all of its tokens in the same transaction.
    """

    id = CharField(primary_key=True, max_length=40)
    client_id = CharField(max_length=2048, index=True)
    client_name = CharField(max_length=200, null=True)
    user = ForeignKeyField(User, on_delete="CASCADE", index=True)
    user_id: str  # the foreign key column, for type checkers
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE", index=True)
    workspace_id: str  # the foreign key column, for type checkers
    scope = CharField(max_length=200)
    resource = CharField(max_length=2048)
    created_at = DateTimeField(default=now)
    last_used_at = DateTimeField(null=True)
    revoked_at = DateTimeField(null=True)
    revoked_reason = CharField(max_length=32, null=True)  # dashboard | refresh_reuse | code_reuse | revocation


class OAuthCode(BaseModel):
    """An authorisation code: single use, 10 minutes, stored as a SHA-256 hash."""

    code_hash = CharField(primary_key=True, max_length=64)
    client_id = CharField(max_length=2048)
    client_name = CharField(max_length=200, null=True)
    user = ForeignKeyField(User, on_delete="CASCADE")
    user_id: str  # the foreign key column, for type checkers
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE")
    workspace_id: str  # the foreign key column, for type checkers
    redirect_uri = CharField(max_length=2048)
    scope = CharField(max_length=200)
    resource = CharField(max_length=2048)
    code_challenge = CharField(max_length=128)
    code_challenge_method = CharField(max_length=8)
    expires_at = DateTimeField()
    used_at = DateTimeField(null=True)
    grant_id = CharField(max_length=40, null=True)  # the grant it was exchanged for, to revoke on reuse
    created_at = DateTimeField(default=now)


class OAuthToken(BaseModel):
    """An access token and the refresh token issued with it, both stored as SHA-256 hashes."""

    id = CharField(primary_key=True, max_length=40)
    grant = ForeignKeyField(OAuthGrant, on_delete="CASCADE", backref="tokens", index=True)
    grant_id: str  # the foreign key column, for type checkers
    client_id = CharField(max_length=2048)
    user = ForeignKeyField(User, on_delete="CASCADE")
    user_id: str  # the foreign key column, for type checkers
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE")
    workspace_id: str  # the foreign key column, for type checkers
    scope = CharField(max_length=200)
    resource = CharField(max_length=2048)
    access_hash = CharField(max_length=64, unique=True)
    refresh_hash = CharField(max_length=64, unique=True, null=True)
    access_expires_at = DateTimeField()
    refresh_expires_at = DateTimeField(null=True)
    refresh_used_at = DateTimeField(null=True)  # set when rotated: presenting it again is reuse
    revoked_at = DateTimeField(null=True)
    created_at = DateTimeField(default=now)


class AuditEntry(BaseModel):
    """One change or sign-in: who did it (a user, an API key, an OAuth client acting for a user, or
    the system), what, to what, and from where. Written in the transaction of the change itself.
    Ids begin with their millisecond: the primary key reads newest first and finds the old ones."""

    id = CharField(primary_key=True, max_length=40)
    workspace = CharField(max_length=40, null=True)  # null: a sign-in that named no workspace
    at = DateTimeField(default=now)
    actor_type = CharField(max_length=16)  # user | key | oauth_client | system
    actor_id = CharField(max_length=2048, null=True)
    actor_label = CharField(max_length=400, null=True)
    user_id = CharField(max_length=40, null=True)  # the person behind a session or an OAuth client
    action = CharField(max_length=64)
    target_type = CharField(max_length=32, null=True)
    target_id = CharField(max_length=2048, null=True)
    ip = CharField(max_length=64, null=True)
    details = JSONField(null=True)

    class Meta:
        indexes = ((("workspace", "id"), False),)
