"""Connecting platform accounts: OAuth with a signed single-use state, or a token for Telegram and WhatsApp."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from itsdangerous import BadSignature, URLSafeTimedSerializer

from kit import clock
from kit.errors import BadRequest, ValidationFailed
from kit.shapes import is_https_url
from platforms import registry
from platforms.base import ConnectedIdentity, FieldRefused, PlatformFailure, ReauthRequired, Rejected
from service.accounts import adapters, choices
from service.accounts import ops as accounts
from service.accounts.connect_shapes import ConnectStart, SelectionOffered, TokenConnection, WebhookSubscription
from service.accounts.shapes import Account as AccountRecord
from service.common import audit
from service.common.configured import Configured
from service.identity import workspaces
from service.identity.auth import Actor
from storage.db import db
from storage.models import Account, ConnectState

settings = Configured(__name__)  # handed in by the composition root (wire)

# What each platform's adapter declares: how it connects, and whether a person may (re)subscribe it.
OAUTH_PLATFORMS = registry.platforms_where(lambda adapter: adapter.capabilities.oauth)
SUBSCRIBABLE = registry.platforms_where(lambda adapter: adapter.webhook_subscription)
STATE_MAX_AGE = timedelta(minutes=15)


def _one_of(names: list[str]) -> str:
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else "".join(names)


def _serializer() -> URLSafeTimedSerializer:
    # itsdangerous signs with the last key and verifies with any: oldest first.
    return URLSafeTimedSerializer(list(reversed(settings().secret_keys)), salt="switchboard.connect-state")


def redirect_uri(platform: str) -> str:
    return f"{settings().base_url}/v1/connect/{platform}/callback"


def start_oauth(*, actor: Actor, platform: str, profile_id: str, redirect_url: str | None = None,
                product: str | None = None) -> ConnectStart:
    if platform not in OAUTH_PLATFORMS:
        raise ValidationFailed.field("platform", "connects with a token, not OAuth: use POST /v1/connect/" + platform)
    if product is not None and product not in adapters.adapter(platform).products:
        raise ValidationFailed.field("product", f"{platform} has no separate {product} product")
    workspaces.get_profile_row(actor=actor, profile_id=profile_id)
    actor.require_role("admin", accounts.CONNECT_ACCOUNTS)
    actor.require_write()
    if redirect_url is not None and not _acceptable_redirect(redirect_url):
        raise ValidationFailed.field("redirectUrl", "must be an absolute https URL (or http on localhost)")
    nonce = secrets.token_urlsafe(24)
    ConnectState.create(nonce=nonce)
    state = _serializer().dumps({"n": nonce, "w": actor.workspace_id, "p": profile_id, "f": platform,
                                 "r": redirect_url, **({"pr": product} if product else {})})
    chosen = adapters.adapter(platform)
    try:
        # A separate product (LinkedIn organizations) consents with its own app.
        url = (chosen.product_authorize_url(product, state=state, redirect_uri=redirect_uri(platform)) if product
               else chosen.authorize_url(state=state, redirect_uri=redirect_uri(platform)))
    except PlatformFailure as failure:
        raise adapters.as_service_error(failure) from None
    return ConnectStart(auth_url=url, state=state)


def _acceptable_redirect(url: str) -> bool:
    parts = urlsplit(url)
    return is_https_url(url) or (parts.scheme == "http" and parts.hostname in {"localhost", "127.0.0.1", "::1"})


@dataclass(frozen=True)
class Finished:
    """The account connected, or (when the grant reached several things) the selection to choose from."""

    answer: AccountRecord | SelectionOffered
    redirect_to: str | None

    @property
    def account(self) -> AccountRecord | None:
        return self.answer if isinstance(self.answer, AccountRecord) else None


def finish_oauth(*, platform: str, code: str | None, state: str | None, error: str | None = None) -> Finished:
    """The platform's redirect back: check and spend the state, exchange the code, store the account.

    Runs its own short transactions: the code exchange is a network call.
    """
    if not state:
        raise BadRequest("The callback has no state.")
    try:
        claims = _serializer().loads(state, max_age=int(STATE_MAX_AGE.total_seconds()))
    except BadSignature:
        raise BadRequest("The state is not valid or has expired.") from None
    if claims.get("f") != platform:
        raise BadRequest("The state was issued for another platform.")
    with db.atomic():
        spent = (
            ConnectState.update(used_at=clock.now())
            .where(ConnectState.nonce == claims["n"], ConnectState.used_at.is_null())
            .execute()
        )
    if spent != 1:
        raise BadRequest("This state has already been used.")
    if error or not code:
        raise BadRequest("The platform did not authorise the connection.")
    platform_adapter = adapters.adapter(platform)
    target = claims.get("r")
    try:
        product = claims.get("pr")
        reached = (platform_adapter.exchange_product_code(product, code=code, redirect_uri=redirect_uri(platform))
                   if product else
                   platform_adapter.exchange_code_choices(code=code, redirect_uri=redirect_uri(platform), state=state))
        if len(reached) > 1:  # several Pages, ad accounts, organizations or channels: the person chooses
            with db.atomic():
                offered = choices.offer(workspace_id=claims["w"], profile_id=claims["p"], platform=platform,
                                        redirect_url=target, choices=reached)
            selection = SelectionOffered(selection=offered.token, platform=platform,
                                         expires_at=clock.iso(offered.expires_at) or "", choices=offered.choices)
            return Finished(selection, _with_query(target, selection=offered.token) if target else None)
        identity = platform_adapter.connect_choice(reached[0].identity)
    except PlatformFailure as failure:
        raise adapters.as_service_error(failure) from None
    with db.atomic():
        account = _store(claims["w"], claims["p"], platform, identity)
        # The platform's redirect carries no person: the row says how it came (the start was theirs).
        audit.record(None, "account.connected", workspace_id=claims["w"], target=("account", account.id),
                     details={"platform": platform, "via": "oauth"})
        record_ = AccountRecord.model_validate(account)
    return Finished(record_, _with_query(target, accountId=account.id) if target else None)


def _with_query(url: str, **params: str) -> str:
    parts = urlsplit(url)
    query = [*parse_qsl(parts.query, keep_blank_values=True), *params.items()]
    return urlunsplit(parts._replace(query=urlencode(query)))


def _store(workspace_id: str, profile_id: str, platform: str, identity: ConnectedIdentity) -> Account:
    return accounts.connect(
        workspace_id=workspace_id,
        profile_id=profile_id,
        platform=platform,
        platform_account_id=identity.platform_account_id,
        username=identity.username,
        display_name=identity.display_name,
        credentials=identity.credentials,
    )


def connect_with_token(*, actor: Actor, platform: str, connection: TokenConnection) -> AccountRecord:
    """Telegram (`botToken`: `getMe`, then `setWebhook` with a secret token) and WhatsApp
    (`phoneNumberId`, `wabaId`, `accessToken` checked against the Graph API)."""
    with db.atomic():
        workspaces.get_profile_row(actor=actor, profile_id=connection.profile_id)
        actor.require_role("admin", accounts.CONNECT_ACCOUNTS)
        actor.require_write()
    try:
        identity = adapters.adapter(platform).connect_with_token(**connection.credentials())
    except FieldRefused as refusal:
        raise ValidationFailed.field(refusal.field, refusal.message) from None
    except (ReauthRequired, Rejected) as failure:
        secret_field = adapters.adapter(platform).token_field
        if isinstance(failure, Rejected) and failure.code == "unknown_meta_app":
            raise ValidationFailed.field(secret_field, failure.message) from None
        raise ValidationFailed.field(secret_field, "was not accepted by the platform") from None
    except PlatformFailure as failure:
        raise adapters.as_service_error(failure) from None
    with db.atomic():
        stored = _store(actor.workspace_id, connection.profile_id, platform, identity)
        audit.record(actor, "account.connected", target=("account", stored.id), details={"platform": platform})
        return AccountRecord.model_validate(stored)


def subscribe_webhooks(*, actor: Actor, platform: str, account_id: str) -> WebhookSubscription:
    with db.atomic():
        account = accounts.get_row(actor=actor, account_id=account_id)
        actor.require_role("admin", accounts.CONNECT_ACCOUNTS)
        actor.require_write()
    if platform not in SUBSCRIBABLE:
        raise ValidationFailed.field("platform", "must be " + _one_of(sorted(SUBSCRIBABLE)))
    requested, actual = platform, account.platform
    if actual != requested:
        raise ValidationFailed.field("accountId", f"is a {actual} account, not {requested}")
    fields = adapters.call_for_api(account, lambda adapter, ctx: adapter.subscribe_webhooks(ctx))
    return WebhookSubscription(account_id=account.id, subscribed=True, fields=list(fields))
