"""Shared machinery of the adapters: defaults that raise `Unsupported`, the button fallback,
credential helpers."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
from collections.abc import Callable, Mapping
from typing import Any, ClassVar
from urllib.parse import urlencode

import httpx2

from kit import clock
from platforms.base import (
    AccountContext,
    Button,
    ButtonRefused,
    Capabilities,
    ChoiceKind,
    ConnectedIdentity,
    FollowerPoint,
    GrantChoice,
    MediaItem,
    PlatformFailure,
    PublishedPost,
    PublishPending,
    RecentPost,
    Rejected,
    RetryLater,
    SentMessage,
    Unsupported,
    fallback_text,
)
from platforms.http import PlatformHTTP, generic_failure
from platforms.inbound import InboundEvent
from platforms.registry import PlatformConfig
from platforms.rules import InboxRules, PostRules


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def granted_credentials(answer: dict[str, Any]) -> dict[str, Any]:
    """The credentials an OAuth 2 token endpoint's answer grants (its access and refresh tokens,
    when the access token lapses, the scope)."""
    return {
        "accessToken": answer["access_token"],
        "refreshToken": answer.get("refresh_token"),
        "expiresAt": expires_at(answer.get("expires_in")),
        "scope": answer.get("scope"),
    }


def expires_at(expires_in: Any) -> str | None:
    """ISO instant from an `expires_in` seconds count (None when the platform gave none)."""
    try:
        seconds = int(expires_in)
    except (TypeError, ValueError):
        return None
    return iso(utcnow() + dt.timedelta(seconds=seconds))


def credentials_expiring(credentials: dict[str, Any], *, within_seconds: int = 300) -> bool:
    """True when the stored `expiresAt` is within `within_seconds` (refresh before using)."""
    value = credentials.get("expiresAt")
    if not isinstance(value, str):
        return False
    try:
        when = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return when - utcnow() < dt.timedelta(seconds=within_seconds)


def pkce_verifier(secret: str, state: str) -> str:
    """A PKCE code verifier derived from the OAuth `state`: no storage between the two legs."""
    import base64

    digest = hmac.new(secret.encode(), f"pkce:{state}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def pkce_challenge(verifier: str) -> str:
    import base64

    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


def utc_today() -> dt.date:
    return clock.now().date()


def counts_from_gains(current: int, gains: dict[dt.date, int], days: int) -> list[FollowerPoint]:
    """Each of the last `days` UTC days' count, oldest first, from the count now and the followers
    gained each day (Instagram's and LinkedIn's history is gains per day, not totals): a day ends with
    today's count less what came after it. A day the platform gave no gain for counts as none gained."""
    today = utc_today()
    points = [FollowerPoint(today, current)]
    count = current
    for back in range(1, days):
        count -= gains.get(today - dt.timedelta(days=back - 1), 0)
        points.append(FollowerPoint(today - dt.timedelta(days=back), max(0, count)))
    return points[::-1]


class BaseAdapter:
    """Defaults: every operation the platform lacks raises `Unsupported`."""

    platform: ClassVar[str] = ""
    display_name: ClassVar[str] = ""  # how a person reads the platform's name ("TikTok")
    capabilities: ClassVar[Capabilities] = Capabilities()
    lapsing_credentials: ClassVar[tuple[str, ...]] = ()
    grants: ClassVar[tuple[str, ...]] = ()
    products: ClassVar[tuple[str, ...]] = ()
    post_rules: ClassVar[PostRules] = PostRules()
    inbox_rules: ClassVar[InboxRules] = InboxRules()
    # The field of `connect_with_token` that holds the secret a person pasted (named in a refusal).
    token_field: ClassVar[str] = "accessToken"  # noqa: S105 (a field name)
    # Whether a person may (re)apply the account's subscription to the platform's webhooks.
    webhook_subscription: ClassVar[bool] = False
    # Why a webhook subscription check (`webhook_check`) was refused.
    webhook_check_refused: ClassVar[str] = "The verify token does not match."
    # Whether the secret the platform's webhooks carry derives from the service's own key (set with
    # `subscribe_webhooks`), so that a key rotation sets it again with the newest key.
    webhook_secret_from_service_key: ClassVar[bool] = False

    @staticmethod
    def classify(response: httpx2.Response, secrets: list[str]) -> PlatformFailure:
        """The platform's error mapping; each adapter replaces it."""
        return generic_failure(response, secrets)

    def __init__(self, config: PlatformConfig, client: httpx2.Client) -> None:
        self.config = config
        self.http = PlatformHTTP(client, platform=self.platform)
        self.endpoints = config.endpoint(self.platform)

    # -- webhooks (each platform's `inbound.py`) -------------------------------------------
    def webhook_check(self, params: Mapping[str, str]) -> str | dict[str, str] | None:
        """The answer to the platform's GET subscription check, or None (refused)."""
        return None

    def verify_webhook(self, headers: Mapping[str, str], raw_body: bytes, query: Mapping[str, str]) -> bool:
        """True only for a webhook that provably comes from the platform."""
        return False

    def parse_webhook(self, payload: dict[str, Any], query: Mapping[str, str]) -> list[InboundEvent]:
        """Normalised events of one verified webhook body (unknown parts are ignored, never an error)."""
        return []

    # -- helpers ---------------------------------------------------------------------------
    def _call(
        self, method: str, url: str, *, secrets: list[str] | tuple[str, ...] = (), **kwargs: Any
    ) -> httpx2.Response:
        return self.http.request(method, url, classify=self.classify, secrets=secrets, **kwargs)

    def _read_media(self, item: MediaItem, start: int | None = None, end: int | None = None) -> bytes:
        """The media's bytes, or those of [start, end) (one chunk of a video, asked with `Range`)."""
        headers = {} if start is None else {"Range": f"bytes={start}-{(end or item.size) - 1}"}
        try:
            source = self.http.client.get(item.url, headers=headers)
        except httpx2.TransportError:
            raise RetryLater("the media could not be read", 30.0) from None
        if not source.is_success:
            raise Rejected(f"the media could not be read (HTTP {source.status_code})", "media_unreadable")
        if start is not None and source.status_code != 206:  # the server ignored the range
            return source.content[start:end]
        return source.content

    def _unsupported(self, what: str) -> Unsupported:
        return Unsupported(f"{self.platform} does not support {what}")

    def _with_button_fallback(
        self,
        text: str,
        button: Button | None,
        send_native: Callable[[Button], SentMessage],
        send_text: Callable[[str], SentMessage],
    ) -> SentMessage:
        """Native button first; a refusal (or no native button) sends text with the URL after it."""
        if button is None:
            return send_text(text)
        if self.capabilities.button is not None:
            try:
                return send_native(button)
            except ButtonRefused:
                pass
        sent = send_text(fallback_text(text, button))
        return SentMessage(sent.platform_message_id, True, sent.payload)

    @staticmethod
    def _as_button_refusal(failure: Rejected) -> ButtonRefused:
        return ButtonRefused(failure.reason, failure.code)

    def _authorize(self, path: str, params: dict[str, str]) -> str:
        return f"{self.endpoints.auth}{path}?{urlencode(params)}"

    # -- the Adapter protocol's defaults ---------------------------------------------------
    def send_dm(
        self, account: AccountContext, *, recipient: str, text: str, button: Button | None = None
    ) -> SentMessage:
        raise self._unsupported("direct messages")

    def private_reply(
        self, account: AccountContext, *, comment_id: str, text: str, button: Button | None = None
    ) -> SentMessage:
        raise self._unsupported("private replies to comments")

    def send_dm_media(
        self, account: AccountContext, *, recipient: str, text: str, media: MediaItem, button: Button | None = None
    ) -> SentMessage:
        raise self._unsupported("attachments in direct messages")

    def public_reply(self, account: AccountContext, *, comment_id: str, text: str) -> str:
        raise self._unsupported("replies to comments")

    def inbox_page(self, account: AccountContext, *, page_token: str | None) -> dict[str, Any]:
        raise self._unsupported("reading the inbox by polling")

    def inbox_threads(self, account: AccountContext, *, thread_ids: list[str]) -> dict[str, Any]:
        raise self._unsupported("reading threads by id")

    def business_messaging(self, account: AccountContext) -> bool:
        return self.capabilities.dm

    def send_template(
        self, account: AccountContext, *, recipient: str, name: str, language: str, parameters: list[str],
        header_media_url: str | None = None, button_parameters: list[str] | None = None,
        header_text: str | None = None,
    ) -> SentMessage:
        raise self._unsupported("message templates")

    def list_templates(self, account: AccountContext) -> list[dict[str, Any]]:
        raise self._unsupported("message templates")

    def publish_post(
        self, account: AccountContext, *, text: str, media: list[MediaItem], options: dict[str, Any]
    ) -> PublishedPost:
        raise self._unsupported("publishing posts")

    def publish_step(
        self, account: AccountContext, *, text: str, media: list[MediaItem], options: dict[str, Any],
        progress: dict[str, Any] | None,
    ) -> PublishedPost | PublishPending:
        # A platform that publishes in one call has one step.
        return self.publish_post(account, text=text, media=media, options=options)

    def recent_posts(self, account: AccountContext) -> list[RecentPost]:
        raise self._unsupported("listing recent posts")

    def comment_on_post(self, account: AccountContext, *, platform_post_id: str, text: str) -> str:
        raise self._unsupported("commenting on its posts")

    def delete_post(self, account: AccountContext, *, platform_post_id: str) -> None:
        raise self._unsupported("deleting posts")

    def follower_count(self, account: AccountContext) -> int:
        raise self._unsupported("follower counts")

    def follower_history(self, account: AccountContext, *, days: int) -> list[FollowerPoint]:
        raise self._unsupported("past follower counts")

    def publish_options(self, account: AccountContext) -> dict[str, Any]:
        return {"platform": self.platform}

    def list_conversations(self, account: AccountContext) -> list[dict[str, Any]]:
        raise self._unsupported("listing conversations")

    def contact_profile(self, account: AccountContext, *, contact_id: str) -> dict[str, Any]:
        raise self._unsupported("contact profiles")

    def subscribe_webhooks(self, account: AccountContext) -> list[str]:
        raise self._unsupported("webhook subscriptions")

    def authorize_url(self, *, state: str, redirect_uri: str) -> str:
        raise self._unsupported("OAuth connection")

    def exchange_code(self, *, code: str, redirect_uri: str, state: str = "") -> ConnectedIdentity:
        raise self._unsupported("OAuth connection")

    def exchange_code_choices(self, *, code: str, redirect_uri: str, state: str = "") -> list[GrantChoice]:
        identity = self.exchange_code(code=code, redirect_uri=redirect_uri, state=state)
        return [GrantChoice(self.choice_kind, identity)]

    # What one of this platform's grant choices is, where its grant reaches one identity.
    choice_kind: ClassVar[ChoiceKind] = "page"

    def connect_choice(self, identity: ConnectedIdentity) -> ConnectedIdentity:
        return identity

    def refresh_credentials(self, account: AccountContext) -> dict[str, Any]:
        return dict(account.credentials)

    def grant_authorize_url(self, grant: str, *, state: str, redirect_uri: str) -> str:
        raise self._unsupported(f"a separate {grant} grant")

    def product_authorize_url(self, product: str, *, state: str, redirect_uri: str) -> str:
        raise self._unsupported(f"a separate {product} product")

    def exchange_product_code(self, product: str, *, code: str, redirect_uri: str) -> list[GrantChoice]:
        raise self._unsupported(f"a separate {product} product")

    def exchange_grant_code(
        self, grant: str, account: AccountContext, *, code: str, redirect_uri: str
    ) -> dict[str, Any]:
        raise self._unsupported(f"a separate {grant} grant")

    def refresh_grant(self, grant: str, account: AccountContext) -> dict[str, Any]:
        raise self._unsupported(f"a separate {grant} grant")

    def grant_account_id(self, grant: str, credentials: dict[str, Any]) -> str | None:
        return None

    def connect_with_token(self, **fields: Any) -> ConnectedIdentity:
        raise self._unsupported("connection with a pasted token")


def merge_refreshed(old: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    """Credentials after an OAuth refresh: a refresh token the platform did not return is kept."""
    new = dict(old)
    new["accessToken"] = answer["access_token"]
    if answer.get("refresh_token"):
        new["refreshToken"] = answer["refresh_token"]
    new["expiresAt"] = expires_at(answer.get("expires_in"))
    if answer.get("refresh_expires_in") or answer.get("refresh_token_expires_in"):
        new["refreshExpiresAt"] = expires_at(
            answer.get("refresh_expires_in") or answer.get("refresh_token_expires_in")
        )
    if answer.get("scope"):
        new["scope"] = answer["scope"]
    return new


def require(fields: dict[str, Any], *names: str) -> list[str]:
    values = []
    for name in names:
        value = fields.get(name)
        if not isinstance(value, str) or not value:
            raise Rejected(f"{name} is required", "missing_field")
        values.append(value)
    return values
