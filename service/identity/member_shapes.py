"""The shapes of members and invitations: what `/v1` and the dashboard take and answer."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from kit.shapes import LEFT_OUT, Body, Id, Instant, NullableInstant, Record

RoleName = Literal["owner", "admin", "member", "viewer"]


def _none_is_all(value: Any) -> Any:
    return value


class Member(Record):
    user_id: str
    email: str
    name: str | None
    role: RoleName
    profile_ids: Annotated[list[str] | None, BeforeValidator(_none_is_all)] = Field(
        description="The profiles a member or viewer is limited to; null: every profile.")
    joined_at: Instant


class MemberList(Record):
    data: list[Member]


class ChangeMember(Body):
    role: RoleName = LEFT_OUT
    profile_ids: list[Id] | None = Field(LEFT_OUT, description="null: every profile (members and viewers only).")


class MemberRemoved(Record):
    user_id: str
    removed: bool


class CreateInvitation(Body):
    email: Annotated[str, Field(min_length=3, max_length=320)]
    role: RoleName = Field("member", description="Default `member`. An admin invites up to `admin`.")
    profile_ids: list[Id] = Field(LEFT_OUT, description="Limit a member or viewer to these profiles.")


class Invitation(Record):
    id: str
    email: str
    role: RoleName
    profile_ids: list[str] | None
    status: Literal["pending", "accepted", "revoked", "expired"]
    invited_by: str | None
    expires_at: Instant
    accepted_at: NullableInstant
    revoked_at: NullableInstant
    created_at: Instant


class InvitationCreated(Invitation):
    url: str = Field(description="The single-use link, valid 7 days; shown in this answer only.")
    emailed: bool = Field(description="Whether it was e-mailed (SMTP configured and the server took it).")
