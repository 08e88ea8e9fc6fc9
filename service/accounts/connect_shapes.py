"""The shapes of connecting accounts: OAuth's start and callback, and the pasted-token bodies."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, RootModel

from kit.shapes import LEFT_OUT, Body, Id, Instant, Query, Record
from service.accounts.shapes import Account


class StartConnectQuery(Query):
    profile_id: Id
    redirect_url: str = Field(LEFT_OUT, json_schema_extra={"format": "uri"}, description=(
        "Where to send the person afterwards, with `?accountId=...` added. https, or http on localhost."))
    product: Literal["organizations"] = Field(LEFT_OUT, description=(
        "A separate product with an app of its own: LinkedIn `organizations` (the Community Management API's "
        "app, `SWITCHBOARD_LINKEDIN_ORG_CLIENT_ID`), whose grant reaches the organizations the member "
        "administers; without it LinkedIn connects the member."))


class StartGrantQuery(Query):
    redirect_url: str = Field(LEFT_OUT, json_schema_extra={"format": "uri"}, description=(
        "Where to send the person afterwards, with `?accountId=...&grant=...` added. https, or http on localhost."))


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
# Meta's Business Messaging API document takes `Authorization: Bearer [A-Za-z0-9-_.]+`, and its ids
# (a phone number's, a WABA's) as digits: anything else is refused here, before any call.
AccessToken = Annotated[str, Field(min_length=1, max_length=4096, pattern=r"^[A-Za-z0-9._-]+$",
                                   description="Letters, digits, `.`, `_` and `-`, as Meta's tokens are.")]
GraphId = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[0-9]+$", description="Digits.",
                               examples=["106540352242922"])]


TelegramChannel = Annotated[str, Field(
    min_length=2, max_length=40, pattern=r"^(@[A-Za-z][A-Za-z0-9_]{3,31}|-100[0-9]{1,16})$",
    description="A channel the bot administers with the right to post: `@name` or its id `-100…`.")]


class ConnectTelegram(TokenConnection):
    bot_token: BotToken
    channel: TelegramChannel = LEFT_OUT


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


# -- choosing what a grant reaches ---------------------------------------------------------------

ChoiceKind = Literal["page", "ad_account", "organization", "channel", "member"]
SelectionToken = Annotated[str, Field(min_length=1, max_length=200, description=(
    "The `selection` a callback answered (or added to `redirectUrl`) when the grant reached several things."))]


class ChoicesQuery(Query):
    selection: SelectionToken


class Choose(Body):
    selection: SelectionToken
    ids: Annotated[list[Annotated[str, Field(min_length=1, max_length=128)]],
                   Field(min_length=1, max_length=100, description="The `id`s of the choices to connect, each once.")]


class Choice(Record):
    id: str = Field(description="The platform's id of the Page, ad account, organization or channel.")
    name: str | None
    kind: ChoiceKind = Field(description=(
        "`page` (Facebook), `ad_account` (Meta Ads), `organization` or `member` (LinkedIn: its organizations "
        "and the person), `channel` (YouTube)."))


class Choices(Record):
    data: list[Choice]
    platform: str
    expires_at: Instant


class SelectionOffered(Record):
    """The callback's answer when the grant reaches several things; choose with
    `POST /v1/connect/{platform}/choices`."""

    selection: str
    platform: str
    expires_at: Instant
    choices: list[Choice]


class ChosenAccounts(Record):
    data: list[Account]


class CallbackAnswer(RootModel[Account | SelectionOffered]):
    """The callback's 200: the account connected, or the selection to choose from."""
