"""The shapes of API keys: what `/v1` and the dashboard take and answer."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from kit.shapes import LEFT_OUT, Body, Id, Instant, NullableInstant, Record

SCOPES = ("full", "profiles")
PERMISSIONS = ("read-write", "read")


class CreateApiKey(Body):
    name: Annotated[str, Field(min_length=1, max_length=200)]
    scope: Literal[SCOPES] = Field(  # type: ignore[valid-type]
        "full", description="`full`: every profile, also later ones (default).")
    profile_ids: list[Id] = Field(LEFT_OUT, description="Required with scope `profiles`.")
    permission: Literal[PERMISSIONS] = Field("read-write", description="Default `read-write`.")  # type: ignore[valid-type]
    expires_in_days: Annotated[int, Field(ge=1, le=3650)] = LEFT_OUT


def _listed(value: Any) -> Any:
    return [] if value is None else value


class _Key(Record):
    id: str
    name: str
    prefix: str = Field(description="`sk_` and the first 8 hex characters of the key.")
    scope: Literal[SCOPES]  # type: ignore[valid-type]
    profile_ids: Annotated[list[str], BeforeValidator(_listed)]
    permission: Literal[PERMISSIONS]  # type: ignore[valid-type]
    expires_at: NullableInstant


class ApiKey(_Key):
    created_at: Instant
    updated_at: Instant
    last_used_at: NullableInstant
    revoked_at: NullableInstant


class ApiKeyCreated(_Key):
    key: str = Field(description="The secret; shown in this answer only.")
    created_at: Instant
    updated_at: Instant


class ApiKeyRevoked(Record):
    id: str
    revoked_at: Instant
