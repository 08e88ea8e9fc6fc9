"""Connecting platform accounts: OAuth with a signed single-use state, or a token for Telegram and WhatsApp."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from itsdangerous import BadSignature, URLSafeTimedSerializer

from platforms.base import ConnectedIdentity, PlatformFailure, ReauthRequired, Rejected
from service import accounts, adapters, clock, settings, workspaces
from service.auth import Actor
from service.errors import BadRequest, ValidationFailed
from service.validation import ID, Array, Bool, Obj, Str, is_https_url, record
from storage.db import db
from storage.models import Account, ConnectState

OAUTH_PLATFORMS = ("instagram", "facebook", "meta_ads", "tiktok", "youtube", "x", "linkedin")
SUBSCRIBABLE = ("facebook", "instagram", "whatsapp")
STATE_MAX_AGE = timedelta(minutes=15)

AUTH_URL = record("ConnectStart", {"authUrl": Str(format="uri"), "state": Str()})
# Credentials travel in a URL path (Telegram's token) or a header (the others): a control
# character, a space, a `/` or a non-ASCII letter there is never a real credential, and would
# break or redirect the request. Checked here, so it is a 422 on the field.
BOT_TOKEN = Str(min_length=1, max_length=200, pattern=r"[0-9]{1,20}:[A-Za-z0-9_-]{1,178}",
                description="The token BotFather gives: `<bot id>:<secret>`.")
ACCESS_TOKEN = Str(min_length=1, max_length=4096, pattern=r"[\x21-\x7e]+",
                   description="Printable ASCII, without spaces.")
GRAPH_ID = Str(min_length=1, max_length=64, pattern=r"[A-Za-z0-9_-]+")
TELEGRAM = Obj(
    name="ConnectTelegram",
    fields={"profileId": ID, "botToken": BOT_TOKEN},
    required=("profileId", "botToken"),
)
WHATSAPP = Obj(
    name="ConnectWhatsApp",
    fields={
        "profileId": ID,
        "phoneNumberId": GRAPH_ID,
        "wabaId": GRAPH_ID,
        "accessToken": ACCESS_TOKEN,
    },
    required=("profileId", "phoneNumberId", "wabaId", "accessToken"),
)
SUBSCRIBED = record("WebhookSubscription", {"accountId": ID, "subscribed": Bool(), "fields": Array(items=Str())})


def _serializer() -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(settings.current().secret_key, salt="switchboard.connect-state")


def redirect_uri(platform: str) -> str:
    return f"{settings.current().base_url}/v1/connect/{platform}/callback"


def start_oauth(*, actor: Actor, platform: str, profileId: str, redirectUrl: str | None = None) -> dict[str, Any]:
    if platform not in OAUTH_PLATFORMS:
        raise ValidationFailed.field("platform", "connects with a token, not OAuth: use POST /v1/connect/" + platform)
    workspaces.get_profile_row(actor=actor, profile_id=profileId)
    actor.require_write()
    if redirectUrl is not None and not _acceptable_redirect(redirectUrl):
        raise ValidationFailed.field("redirectUrl", "must be an absolute https URL (or http on localhost)")
    nonce = secrets.token_urlsafe(24)
    ConnectState.create(nonce=nonce)
    state = _serializer().dumps({"n": nonce, "w": actor.workspace_id, "p": profileId, "f": platform, "r": redirectUrl})
    url = adapters.adapter(platform).authorize_url(state=state, redirect_uri=redirect_uri(platform))
    return {"authUrl": url, "state": state}


def _acceptable_redirect(url: str) -> bool:
    parts = urlsplit(url)
    return is_https_url(url) or (parts.scheme == "http" and parts.hostname in {"localhost", "127.0.0.1", "::1"})


@dataclass(frozen=True)
class Finished:
    account: dict[str, Any]
    redirect_to: str | None


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
    try:
        identity = adapters.adapter(platform).exchange_code(code=code, redirect_uri=redirect_uri(platform), state=state)
    except PlatformFailure as failure:
        raise adapters.as_service_error(failure) from None
    with db.atomic():
        account = _store(claims["w"], claims["p"], platform, identity)
        record_ = accounts.to_record(account)
    target = claims.get("r")
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


def connect_with_token(*, actor: Actor, platform: str, profileId: str, **fields: str) -> dict[str, Any]:
    """Telegram (`botToken`: `getMe`, then `setWebhook` with a secret token) and WhatsApp
    (`phoneNumberId`, `wabaId`, `accessToken` checked against the Graph API)."""
    with db.atomic():
        workspaces.get_profile_row(actor=actor, profile_id=profileId)
        actor.require_write()
    try:
        identity = adapters.adapter(platform).connect_with_token(**fields)
    except (ReauthRequired, Rejected):
        secret_field = "botToken" if platform == "telegram" else "accessToken"
        raise ValidationFailed.field(secret_field, "was not accepted by the platform") from None
    except PlatformFailure as failure:
        raise adapters.as_service_error(failure) from None
    with db.atomic():
        return accounts.to_record(_store(actor.workspace_id, profileId, platform, identity))


def subscribe_webhooks(*, actor: Actor, platform: str, account_id: str) -> dict[str, Any]:
    with db.atomic():
        account = accounts.get_row(actor=actor, account_id=account_id)
        actor.require_write()
    if platform not in SUBSCRIBABLE:
        raise ValidationFailed.field("platform", "must be facebook, instagram or whatsapp")
    if account.platform != platform:
        raise ValidationFailed.field("accountId", f"is a {account.platform} account, not {platform}")
    fields = adapters.call_for_api(account, lambda adapter, ctx: adapter.subscribe_webhooks(ctx))
    return {"accountId": account.id, "subscribed": True, "fields": list(fields)}
