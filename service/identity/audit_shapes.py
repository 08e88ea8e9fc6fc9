"""The shapes of the audit log."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from kit.shapes import LEFT_OUT, Instant, PageQuery, Record


class AuditActor(Record):
    type: Literal["user", "key", "oauth_client", "system"]
    id: str | None
    label: str | None


class AuditTarget(Record):
    type: str | None
    id: str | None


class AuditEntry(Record):
    id: str
    at: Instant
    actor: AuditActor
    action: str = Field(description="`object.past_tense`: `key.created`, `member.invited`, `signin.failed`, ...")
    target: AuditTarget
    ip: str | None
    details: dict[str, Any] | None = None


class AuditQuery(PageQuery):
    action: Annotated[str, Field(min_length=1, max_length=64)] = LEFT_OUT
    actor_id: Annotated[str, Field(min_length=1, max_length=2048)] = LEFT_OUT
    from_: Annotated[str, Field(alias="from", min_length=1, max_length=64, examples=["2026-12-01T00:00:00Z"])] = Field(
        LEFT_OUT, alias="from", description="An instant: only rows at or after it.")
    to: Annotated[str, Field(min_length=1, max_length=64, examples=["2027-01-01T00:00:00Z"])] = Field(
        LEFT_OUT, description="An instant: only rows before it.")
