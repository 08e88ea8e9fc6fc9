"""The adapter contract: capabilities, value types, the error tree and the `Adapter` Protocol.

Errors raised by every adapter (the service maps them, tasks act on them)::

    PlatformFailure                 .message is safe to show a user: never a token
    ├── RetryLater                  .delay_seconds: try the same call again later (429, 5xx, timeouts)
    ├── ReauthRequired              the stored credentials were refused: flag the account `needsReauth`
    ├── Rejected                    .reason, .code: the platform refused this call for good
    │   ├── OutsideMessagingWindow  the contact's last inbound message is too old (24 h rule)
    │   ├── FieldRefused            .field: one value given at connect was refused (a channel)
    │   └── ButtonRefused           internal: the platform refused the button; the adapter resends as text
    ├── Unsupported                 the platform has no such operation (see `Capabilities`)
    └── PartlyPublished             the post is live (.platform_post_id) but a later part of it (a
                                    thread's next post, a first comment) failed: published, never again

An adapter never retries a side effect by itself (a DM, a post) except the one documented case:
a button the platform refused is sent again as plain text, which cannot duplicate anything because
the refused call delivered nothing.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:
    from platforms.inbound import InboundEvent
    from platforms.rules import InboxRules, PostRules

PLATFORMS: tuple[str, ...] = (
    "instagram",
    "whatsapp",
    "tiktok",
    "telegram",
    "youtube",
    "x",
    "facebook",
    "meta_ads",
    "linkedin",
)

BUTTON_LABEL_LIMIT = 20

PostMedia = Literal["required_image_or_video", "required_video", "optional", "none"]
ButtonKind = Literal["template", "cta_url", "inline_keyboard"]


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


@dataclass(frozen=True)
class Capabilities:
    """What a platform offers, as data: the service validates and paces with it."""

    dm: bool = False
    dm_text_limit: int | None = None
    post_text_limit: int | None = None
    # The text limit of a post with media, where it is shorter (a Telegram caption: 1,024).
    post_caption_limit: int | None = None
    post_media: PostMedia = "none"
    button: ButtonKind | None = None
    button_label_limit: int = BUTTON_LABEL_LIMIT
    messaging_window_hours: int | None = None
    templates: bool = False  # approved message templates, which reach a contact outside the window
    messages_per_second: float | None = None
    comments: bool = False
    private_replies: bool = False
    publish: bool = False
    delete_post: bool = False
    oauth: bool = False
    inbound_webhooks: bool = False
    followers: bool = False
    conversations_listing: bool = False
    # The platform lists the account's recent posts (`recent_posts`): a publish whose answer was
    # lost is reconciled against that list, after `publish_settle_seconds` (the platform's own
    # processing time), instead of waiting for a person.
    post_listing: bool = False
    publish_settle_seconds: float = 10.0
    # How many UTC days of the account's past follower counts the platform gives (`follower_history`),
    # today included: what connecting an account backfills. 0: none (the daily snapshots start the line).
    follower_history_days: int = 0
    max_media: int | None = None  # items in one post (Instagram's carousel: 10)
    video_posts: bool = True  # False where the adapter publishes text and images only
    # Attachments a direct message takes (`send_dm_media`): the kinds ("image", "video"), how many one
    # message carries, and the text limit as their caption. Empty: text (and a button) only.
    dm_media: tuple[str, ...] = ()
    dm_max_media: int = 1
    dm_caption_limit: int | None = None
    # What a conversation is on the platform: a private thread of direct messages, or (YouTube) a
    # public comment thread under one of the account's videos, where a message is a reply.
    conversation_kind: Literal["direct", "comment_thread"] = "direct"
    # How a contact's messages reach the service: the platform's webhook, polling on the work engine
    # (`inbox_page`), or the webhook where one is subscribed and polling otherwise (X).
    inbound: Literal["webhook", "poll", "webhook_or_poll"] | None = None

    def post_limit(self, *, with_media: bool) -> int | None:
        """How long a post's text may be, with or without media."""
        if with_media and self.post_caption_limit is not None:
            return self.post_caption_limit
        return self.post_text_limit

    def as_dict(self) -> dict[str, Any]:
        """camelCase keys, as `/v1/accounts` shows them under `capabilities`."""
        return {_camel(name): getattr(self, name) for name in self.__dataclass_fields__}


@dataclass
class AccountContext:
    """One connected account as the service hands it to an adapter for one call."""

    platform_account_id: str
    credentials: dict[str, Any]

    def secrets(self) -> list[str]:
        """Every string credential, for redaction of anything that leaves the adapter."""
        return [value for value in self.credentials.values() if isinstance(value, str) and len(value) >= 6]


@dataclass(frozen=True)
class Button:
    label: str
    url: str


@dataclass(frozen=True)
class MediaItem:
    url: str
    content_type: str
    size: int

    @property
    def is_video(self) -> bool:
        return self.content_type.startswith("video/")

    @property
    def is_image(self) -> bool:
        return self.content_type.startswith("image/")


@dataclass(frozen=True)
class SentMessage:
    platform_message_id: str
    fallback_used: bool = False
    payload: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PublishedPost:
    platform_post_id: str
    url: str | None = None


@dataclass(frozen=True)
class PublishPending:
    """A multi-step publish not finished yet: call `publish_step` again with `progress` after
    `poll_after` seconds. `repeatable`: the next step may safely run twice (a status poll, or a step
    before anything is public), so a worker lost during it is simply run again."""

    progress: dict[str, Any]
    poll_after: float
    repeatable: bool = True


@dataclass(frozen=True)
class RecentPost:
    """One of the account's recent posts as the platform lists it (for reconciliation, and for a
    person picking posts: `published_at` as the platform writes it, ISO 8601, where it gives one)."""

    platform_post_id: str
    text: str | None
    url: str | None = None
    published_at: str | None = None


@dataclass(frozen=True)
class FollowerPoint:
    """The account's follower count at the end of one UTC day, as the platform gives it."""

    day: dt.date
    followers: int


@dataclass(frozen=True)
class ConnectedIdentity:
    """What connecting produced. `credentials` is what the service encrypts and stores."""

    platform_account_id: str
    username: str | None
    display_name: str | None
    credentials: dict[str, Any]
    subscribed_fields: tuple[str, ...] = ()


ChoiceKind = Literal["page", "ad_account", "organization", "channel", "member"]


@dataclass(frozen=True)
class GrantChoice:
    """One thing an OAuth grant reaches (a Facebook Page, an ad account, a LinkedIn organization or
    the member, a YouTube channel), with the complete identity that connecting it would store."""

    kind: ChoiceKind
    identity: ConnectedIdentity


class PlatformFailure(Exception):
    """Base of every adapter error; `message` is safe for users and logs (never a token)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class RetryLater(PlatformFailure):
    def __init__(self, message: str, delay_seconds: float = 30.0) -> None:
        super().__init__(message)
        self.delay_seconds = float(delay_seconds)


class ReauthRequired(PlatformFailure):
    pass


class GrantRefused(PlatformFailure):
    """The platform refused the credentials of one of the account's separate grants (TikTok's
    messaging grant), not the account's own: only that grant is refreshed, or needs connecting again."""

    def __init__(self, message: str, grant: str) -> None:
        super().__init__(message)
        self.grant = grant


class GrantRequired(PlatformFailure):
    """The operation needs a separate grant the account does not hold (never connected, or refused
    for good): a person connects it as a second step; the account itself stays connected."""

    def __init__(self, message: str, grant: str) -> None:
        super().__init__(message)
        self.grant = grant


class Indeterminate(PlatformFailure):
    """The request went out and no answer came back (a read timeout, a dropped connection): the
    platform may or may not have acted on it. Irreversible work (a message to a person) must not be
    repeated blindly after this."""


class Rejected(PlatformFailure):
    def __init__(self, reason: str, code: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.code = code


class OutsideMessagingWindow(Rejected):
    pass


class FieldRefused(Rejected):
    """One value given to `connect_with_token` was refused (a Telegram channel the bot cannot post
    to); `field` names it as the connect request does."""

    field: ClassVar[str] = ""


class ButtonRefused(Rejected):
    pass


class Unsupported(PlatformFailure):
    pass


class PartlyPublished(PlatformFailure):
    """The post itself is live, a later part of it is not (a thread stopped, a first comment was
    refused). The target is `published` with this id and the message as its error: publishing it
    again would duplicate what is live."""

    def __init__(self, message: str, platform_post_id: str, url: str | None = None) -> None:
        super().__init__(message)
        self.platform_post_id = platform_post_id
        self.url = url


def cut_label(label: str, limit: int = BUTTON_LABEL_LIMIT) -> str:
    """Cut a button label to the platforms' title limit (characters, not bytes)."""
    return label[:limit]


def fallback_text(text: str, button: Button) -> str:
    """The plain-text rendering of a button: the URL on its own line after the text."""
    return f"{text}\n{button.url}" if text else button.url


@runtime_checkable
class Adapter(Protocol):
    """One platform's real HTTP API behind one synchronous interface.

    Every method takes what it needs as arguments (credentials in `AccountContext`), holds no state
    between calls but configuration and the shared HTTP client, and is safe to call from many
    threads at once. Failures are the error tree of this module; an operation the platform lacks
    raises `Unsupported` (its `capabilities` say so beforehand).
    """

    platform: ClassVar[str]
    display_name: ClassVar[str]  # how a person reads the platform's name ("TikTok")
    capabilities: ClassVar[Capabilities]
    # Credential fields (ISO instants) of tokens that cannot be renewed once they lapse: they must be
    # refreshed before (Instagram's and Facebook's 60-day tokens). Short-lived ones with a refresh
    # token are renewed when refused instead.
    lapsing_credentials: ClassVar[tuple[str, ...]]
    # Separate grants an account may add to its own as a second step, each under its name in the
    # credentials (TikTok's `messaging`: TikTok API for Business's own authorization).
    grants: ClassVar[tuple[str, ...]]
    # Separate products connected by an app of their own, each a connect of its own (LinkedIn's
    # `organizations`: the Community Management API, which must be the only product of its app).
    products: ClassVar[tuple[str, ...]]
    # The rules that differ per platform beyond the capabilities (`platforms/<name>/rules.py`).
    post_rules: ClassVar[PostRules]
    inbox_rules: ClassVar[InboxRules]
    token_field: ClassVar[str]
    webhook_subscription: ClassVar[bool]
    webhook_check_refused: ClassVar[str]
    webhook_secret_from_service_key: ClassVar[bool]

    def webhook_check(self, params: Mapping[str, str]) -> str | dict[str, str] | None:
        """The answer to the platform's GET subscription check of `/hooks/{platform}` (Meta's
        `hub.challenge` as text, X's CRC `response_token` as JSON), or None: refused."""
        ...

    def verify_webhook(self, headers: Mapping[str, str], raw_body: bytes, query: Mapping[str, str]) -> bool:
        """True only for a webhook that provably comes from the platform (constant-time compares)."""
        ...

    def parse_webhook(self, payload: dict[str, Any], query: Mapping[str, str]) -> list[InboundEvent]:
        """Normalised events of one verified webhook body; each event's `dedupe_key` is the same on every
        delivery of the same event. Unknown parts are ignored, never an error."""
        ...

    def send_dm(
        self, account: AccountContext, *, recipient: str, text: str, button: Button | None = None
    ) -> SentMessage:
        """Send a direct message to `recipient` (the platform's id of the contact).

        A button is rendered natively (Meta button template `web_url`, WhatsApp interactive
        `cta_url`, Telegram inline keyboard `url`), its label cut to 20 characters. When the platform
        refuses the button, or has none, the message goes as plain text with the URL on its own line
        after the text and `fallback_used` is true. Outside the 24 h window: `OutsideMessagingWindow`.
        """
        ...

    def send_dm_media(
        self, account: AccountContext, *, recipient: str, text: str, media: MediaItem, button: Button | None = None
    ) -> SentMessage:
        """`send_dm` with one attachment (a kind in `capabilities.dm_media`) that the platform fetches
        from `media.url`, the text as its caption, in one platform call; the button as `send_dm`
        renders it (or the URL after the caption). `Unsupported` where `dm_media` is empty."""
        ...

    def private_reply(
        self, account: AccountContext, *, comment_id: str, text: str, button: Button | None = None
    ) -> SentMessage:
        """A DM to the author of a comment, addressed by the comment (Instagram, Facebook)."""
        ...

    def send_template(
        self, account: AccountContext, *, recipient: str, name: str, language: str, parameters: list[str],
        header_media_url: str | None = None, button_parameters: list[str] | None = None,
        header_text: str | None = None,
    ) -> SentMessage:
        """An approved message template (WhatsApp), its body's parameters in order (a named template's
        in the order of its `parameterNames`), a media header's URL and its URL buttons' variables:
        the one message that reaches a contact outside the 24 h window."""
        ...

    def list_templates(self, account: AccountContext) -> list[dict[str, Any]]:
        """The account's approved templates: `{name, language, category, parameters}` (a count), with
        `parameterFormat` (POSITIONAL or NAMED), `parameterNames`, `headerFormat` (IMAGE, VIDEO,
        DOCUMENT or None) and `buttonParameters` (the indexes of URL buttons that take a variable)."""
        ...

    def public_reply(self, account: AccountContext, *, comment_id: str, text: str) -> str:
        """Answer under a comment, in public; returns the platform's id of the reply."""
        ...

    def publish_post(
        self, account: AccountContext, *, text: str, media: list[MediaItem], options: dict[str, Any]
    ) -> PublishedPost:
        """Publish one post now, on a platform that publishes in one call (Telegram, Facebook, Meta
        Ads): there it is the one step of `publish_step`. The multi-step platforms publish through
        `publish_step` alone. Never retried by the adapter (a retry could publish twice)."""
        ...

    def publish_step(
        self, account: AccountContext, *, text: str, media: list[MediaItem], options: dict[str, Any],
        progress: dict[str, Any] | None,
    ) -> PublishedPost | PublishPending:
        """One durable step of a publish: the first with `progress=None`, then each with the
        `progress` the previous step returned. Single-call platforms publish at once; multi-step ones
        (Instagram containers, TikTok's init then status, YouTube's resumable upload) return
        `PublishPending` instead of sleeping, and the service calls again when it is due (the work
        row's `next_attempt_at`), after a restart too. Never retried by the adapter."""
        ...

    def comment_on_post(self, account: AccountContext, *, platform_post_id: str, text: str) -> str:
        """A comment under one of the account's own posts (a post's first comment); returns its id.
        Never retried by the adapter: a comment posted twice shows twice."""
        ...

    def recent_posts(self, account: AccountContext) -> list[RecentPost]:
        """The account's most recent posts, newest first, where the platform lists them (else
        `Unsupported`): a publish whose answer was lost is looked for here before anything else."""
        ...

    def delete_post(self, account: AccountContext, *, platform_post_id: str) -> None:
        """Delete a post published earlier; deleting one that is already gone succeeds."""
        ...

    def follower_count(self, account: AccountContext) -> int:
        """The account's current follower (subscriber) count."""
        ...

    def follower_history(self, account: AccountContext, *, days: int) -> list[FollowerPoint]:
        """The account's follower count at the end of each of the last `days` UTC days (at most its
        `follower_history_days`; today's is the count now), oldest first, for the days the platform
        gives; `Unsupported` where it gives none for this account."""
        ...

    def publish_options(self, account: AccountContext) -> dict[str, Any]:
        """What the creator chooses before publishing (TikTok: fetched live; others: static)."""
        ...

    def list_conversations(self, account: AccountContext) -> list[dict[str, Any]]:
        """Raw conversations `[{id, updatedTime, participants: [{id, username}]}]` (Instagram)."""
        ...

    def contact_profile(self, account: AccountContext, *, contact_id: str) -> dict[str, Any]:
        """`{id, username, name}` of a contact known only by a scoped id (Instagram, Facebook)."""
        ...

    def inbox_page(self, account: AccountContext, *, page_token: str | None) -> dict[str, Any]:
        """One page, newest first, of what the platform lists of the account's inbox, as the
        platform answers it (X: `GET /2/dm_events`; YouTube: `commentThreads.list` with replies), for
        the platforms read by polling; `page_token` is the previous page's next token."""
        ...

    def inbox_threads(self, account: AccountContext, *, thread_ids: list[str]) -> dict[str, Any]:
        """Known threads read again by id, as `inbox_page` answers (YouTube: `commentThreads.list?id=`,
        up to 50): a new reply under a thread the newest-first listing no longer shows."""
        ...

    def business_messaging(self, account: AccountContext) -> bool:
        """Whether the account may use the platform's business messaging (TikTok: a Business
        Account; personal accounts have no messaging API)."""
        ...

    def subscribe_webhooks(self, account: AccountContext) -> list[str]:
        """(Re)apply the subscription to the platform's webhooks; returns the fields applied."""
        ...

    def authorize_url(self, *, state: str, redirect_uri: str) -> str:
        """The platform's consent page URL for the OAuth platforms."""
        ...

    def grant_authorize_url(self, grant: str, *, state: str, redirect_uri: str) -> str:
        """The consent page of one of the platform's separate grants (`grants`)."""
        ...

    def product_authorize_url(self, product: str, *, state: str, redirect_uri: str) -> str:
        """The consent page of one of the platform's separate products (`products`), with its own app."""
        ...

    def exchange_product_code(self, product: str, *, code: str, redirect_uri: str) -> list[GrantChoice]:
        """`exchange_code_choices` for a separate product's consent: what its grant reaches."""
        ...

    def exchange_grant_code(
        self, grant: str, account: AccountContext, *, code: str, redirect_uri: str
    ) -> dict[str, Any]:
        """Trade a separate grant's code for the account's credentials with that grant added (under
        the grant's name); refuses a grant of another platform account."""
        ...

    def refresh_grant(self, grant: str, account: AccountContext) -> dict[str, Any]:
        """The account's credentials with one separate grant's token refreshed."""
        ...

    def grant_account_id(self, grant: str, credentials: dict[str, Any]) -> str | None:
        """The account's own id under a separate grant, where its webhooks name that one."""
        ...

    def exchange_code(self, *, code: str, redirect_uri: str, state: str = "") -> ConnectedIdentity:
        """Trade an authorisation code for credentials and the account's identity.

        `state` is the value given to `authorize_url` (X derives its PKCE verifier from it).
        Meta accounts are subscribed to webhooks here already (see `ConnectedIdentity.subscribed_fields`).
        """
        ...

    def exchange_code_choices(self, *, code: str, redirect_uri: str, state: str = "") -> list[GrantChoice]:
        """Trade an authorisation code for everything the grant reaches, each with its own
        credentials, without connecting any (no webhook subscription yet). A platform whose grant
        is one identity answers `exchange_code`'s as the only choice."""
        ...

    def connect_choice(self, identity: ConnectedIdentity) -> ConnectedIdentity:
        """What connecting one chosen identity does on the platform (Facebook: subscribe the Page
        to the app's webhooks); returns it with the fields subscribed."""
        ...

    def refresh_credentials(self, account: AccountContext) -> dict[str, Any]:
        """New credentials to store. A refresh token the platform did not rotate is kept."""
        ...

    def connect_with_token(self, **fields: Any) -> ConnectedIdentity:
        """Connect with credentials the user pasted (Telegram `botToken`; WhatsApp
        `phoneNumberId`, `wabaId`, `accessToken`), validated against the platform."""
        ...
