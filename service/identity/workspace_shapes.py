"""The shapes of workspaces and their profiles."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from kit.shapes import LEFT_OUT, Body, Instant, Record

Name = Annotated[str, Field(min_length=1, max_length=200)]


class NoArguments(Body):
    """A tool that takes no arguments (and refuses any)."""


class WorkspaceSettings(Record):
    confirm_before_reaching_people: bool = Field(description=(
        "An MCP client that can ask the person (elicitation) asks before a tool messages or publishes to "
        "people: a broadcast or a post sent now, a direct message, a delete. On by default."))
    post_approval: bool = Field(description=(
        "A member's post waits as `pending_approval` until an owner or admin approves or rejects it. Off by "
        "default; changed by owners and admins."))


class UpdateWorkspaceSettings(Body):
    confirm_before_reaching_people: bool = LEFT_OUT
    post_approval: Annotated[bool, Field(strict=True)] = LEFT_OUT


class CreateProfile(Body):
    name: Name


class UpdateProfile(Body):
    name: Name = LEFT_OUT


class Profile(Record):
    id: str
    workspace_id: str
    name: str
    created_at: Instant
    updated_at: Instant


class ProfileDeleted(Record):
    id: str
    deleted: bool


class ProfileRef(Record):
    id: str
    name: str


class Workspace(Record):
    id: str
    name: str
    role: Literal["owner", "admin", "member", "viewer"] = Field(description=(
        "The caller's role. A person (an MCP connection) has their role in the workspace; an API key acts "
        "as `owner` when it has scope `full` and permission `read-write`, else as `member`."))
    profiles: list[ProfileRef]
    created_at: Instant
    updated_at: Instant


class WorkspaceList(Record):
    data: list[Workspace]
