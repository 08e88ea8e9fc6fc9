"""The shapes of webhook endpoints and their deliveries: what `/v1` takes and answers."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from kit.shapes import LEFT_OUT, Body, HttpsUrl, Instant, NullableInstant, PageQuery, Record

STATUSES = ("QUEUED", "RETRYING", "DELIVERED", "FAILED")
MAX_URL_LENGTH = 2048

Url = Annotated[HttpsUrl, Field(max_length=MAX_URL_LENGTH, description=(
    "Absolute https URL. Must resolve to public addresses (unless the operator allows private ones); "
    "redirects are not followed."))]
EventNames = Annotated[list[Annotated[str, Field(min_length=1, max_length=64)]], Field(description=(
    "Event names from `GET /v1/webhooks/events`. Omitted or `[]`: every event, also ones added later. An "
    "unknown name is refused (422). Duplicates are dropped."))]
Description = Annotated[str, Field(max_length=500)] | None


# -- requests ----------------------------------------------------------------------------------


class CreateWebhook(Body):
    url: Url
    events: EventNames = LEFT_OUT
    description: Description = None


class UpdateWebhook(Body):
    """Any subset: only the fields sent change (`model_dump(exclude_unset=True)`)."""

    url: Url = LEFT_OUT
    events: EventNames = LEFT_OUT
    description: Description = None
    enabled: bool = Field(LEFT_OUT, description=(
        "A disabled endpoint gets no new deliveries; deliveries already queued for it end `FAILED` when their "
        "turn comes (redeliver them after enabling it again)."))


class WebhookRef(Body):
    """An MCP tool's argument naming one endpoint (on /v1, the path)."""

    webhook_id: Annotated[str, Field(min_length=1, max_length=64)]


class DeliveryQuery(PageQuery):
    status: Literal[STATUSES] = LEFT_OUT  # type: ignore[valid-type]
    event: str = Field(LEFT_OUT, min_length=1, max_length=64,
                       description="An event name; an unknown one is refused (422).")


# -- records -----------------------------------------------------------------------------------


def _names(value: Any) -> Any:
    return [] if value is None else value


class Webhook(Record):
    id: str
    url: str
    events: Annotated[list[str], BeforeValidator(_names)] = Field(
        description="`[]`: every event, also ones added later.")
    description: str | None
    enabled: bool
    created_at: Instant
    updated_at: Instant


class WebhookCreated(Webhook):
    secret: str = Field(description=(
        "`whsec_` + 32 random bytes in standard base64; shown in this answer only. `x-service-signature` is "
        "keyed with the whole string (Stripe's scheme); `webhook-signature` with the base64-decoded bytes after "
        "`whsec_` (Standard Webhooks)."))


class WebhookDeleted(Record):
    id: str
    deleted: bool


class WebhookSecret(Record):
    secret: str = Field(description=(
        "The new secret, shown only here. The previous one keeps signing alongside (a second `v1=`) for 24 hours."))


class WebhookDelivery(Record):
    id: str
    # The row names its endpoint `endpoint` and the event's type `event_type`.
    webhook_id: str = Field(validation_alias="endpoint_id", serialization_alias="webhookId")
    event_id: str
    event: str = Field(validation_alias="event_type", serialization_alias="event", description="The event type.")
    status: Literal[STATUSES]  # type: ignore[valid-type]
    attempts: int = Field(ge=0)
    response_status: int | None = Field(description="HTTP status of the last attempt's answer.")
    last_error: str | None = Field(description="Why the last attempt failed.")
    next_attempt_at: NullableInstant
    delivered_at: NullableInstant
    created_at: Instant
    updated_at: Instant


class WebhookEventType(Record):
    name: str
    description: str


class WebhookEventCatalogue(Record):
    data: list[WebhookEventType]
