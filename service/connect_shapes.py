"""The shapes of connecting accounts: OAuth's start and callback, and the pasted-token bodies."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from service.shapes import LEFT_OUT, Body, Id, Query, Record


class StartConnectQuery(Query):
    profile_id: Id
    redirect_url: str = Field(LEFT_OUT, json_schema_extra={"format": "uri"}, description=(
        "Where to send the person afterwards, with `?accountId=...` added. https, or http on localhost."))


class CallbackQuery(Query):
    """What the platform sends back; a missing or bad `state` is answered 400 by the service."""

    code: str = LEFT_OUT
    state: str = LEFT_OUT
    error: str = LEFT_OUT


class TokenConnection(Body):
    """A body that connects with pasted credentials: the profile, and the platform's own fields."""

    profile_id: Id

    def credentials(self) -> dict[str, str]:
        """The pasted fields, by the names the platform adapters take (`botToken`, `wabaId`, ...)."""
        return self.model_dump(by_alias=True, exclude={"profile_id"})


class ConnectTelegram(TokenConnection):
    bot_token: Annotated[str, Field(min_length=1, max_length=200)]


class ConnectWhatsApp(TokenConnection):
    phone_number_id: Annotated[str, Field(min_length=1, max_length=64)]
    waba_id: Annotated[str, Field(min_length=1, max_length=64)]
    access_token: Annotated[str, Field(min_length=1, max_length=4096)]


class ConnectStart(Record):
    auth_url: str = Field(json_schema_extra={"format": "uri"})
    state: str


class WebhookSubscription(Record):
    account_id: str
    subscribed: bool
    fields: list[str]
