"""The shapes of connecting accounts: OAuth's start and callback, and the pasted-token bodies."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from service.kit.shapes import LEFT_OUT, Body, Id, Query, Record


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


# Credentials travel in a URL path (Telegram's token) or a header (the others): a control character,
# a space, a `/` or a non-ASCII letter there is never a real credential, and would break or redirect
# the request. Checked here, so it is a 422 on the field.
BotToken = Annotated[str, Field(min_length=1, max_length=200, pattern=r"^[0-9]{1,20}:[A-Za-z0-9_-]{1,178}$",
                                description="The token BotFather gives: `<bot id>:<secret>`.")]
AccessToken = Annotated[str, Field(min_length=1, max_length=4096, pattern=r"^[\x21-\x7e]+$",
                                   description="Printable ASCII, without spaces.")]
GraphId = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")]


class ConnectTelegram(TokenConnection):
    bot_token: BotToken


class ConnectWhatsApp(TokenConnection):
    phone_number_id: GraphId
    waba_id: GraphId
    access_token: AccessToken


class ConnectStart(Record):
    auth_url: str = Field(json_schema_extra={"format": "uri"})
    state: str


class WebhookSubscription(Record):
    account_id: str
    subscribed: bool
    fields: list[str]
