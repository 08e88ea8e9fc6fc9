"""The service's door to the platform layer: one registry built from settings, and `call()`.

`call()` runs one adapter operation for a stored account: it decrypts the credentials, and when
the platform refuses them it refreshes once (storing the new credentials, refresh token kept) and
tries again; when that fails too the account is flagged `needsReauth`. Platform failures reach
callers as the adapter's typed errors (tasks act on them) or, through `as_service_error`, as the
contract's errors (front doors).

Never call a platform inside a write transaction: on SQLite it would hold the database's one
write lock for the length of a network call. Operations that call platforms run their storage
steps in short transactions of their own.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from typing import Any, TypeVar

import httpx2

from kit import clock, crypto
from kit.errors import Conflict, PlatformError, ServiceError, ValidationFailed
from kit.settings import Settings
from platforms import registry
from platforms.base import (
    AccountContext,
    Adapter,
    GrantRefused,
    GrantRequired,
    OutsideMessagingWindow,
    PlatformFailure,
    ReauthRequired,
    Rejected,
    Unsupported,
)
from platforms.http import build_client, install_log_redaction
from platforms.registry import Endpoints, OAuthClient, PlatformConfig
from storage.db import db
from storage.models import Account

log = logging.getLogger("switchboard.platforms")
T = TypeVar("T")

_client: httpx2.Client | None = None


def platform_config(settings: Settings) -> PlatformConfig:
    if settings.sandbox:
        config = PlatformConfig.for_sandbox(
            settings.sandbox_base_url, secret_key=settings.sandbox_secret, hooks_base_url=settings.base_url
        )
    else:
        config = PlatformConfig(
            hooks_base_url=settings.base_url,
            oauth_clients={p: OAuthClient(cid, secret) for p, (cid, secret) in settings.platform_oauth_clients.items()},
            meta_app_secret=settings.meta_app_secret,
            instagram_app_secret=settings.instagram_app_secret,
            meta_verify_token=settings.meta_verify_token,
            telegram_secret_seed=_telegram_seed(settings.secret_key),
            telegram_older_secret_seeds=tuple(_telegram_seed(key) for key in settings.secret_keys[1:]),
            x_consumer_secret=settings.x_consumer_secret,
            x_webhook_id=settings.x_webhook_id,
        )
    if settings.linkedin_version:
        config.linkedin_version = settings.linkedin_version
    config.tiktok_audited = settings.tiktok_audited
    if settings.meta_app_id:
        config.meta_app_id = settings.meta_app_id
    config.meta_app_secrets = dict(settings.meta_app_secrets)
    config.youtube_audited = settings.youtube_audited
    config.tiktok_verified_domains = settings.tiktok_verified_domains
    for platform, url in settings.platform_base_urls.items():
        config.endpoints[platform] = Endpoints(url, url, url)
    return config


def _telegram_seed(secret_key: str) -> bytes:
    return crypto.derive_key(secret_key, b"telegram-webhook-secret")


def configure(settings: Settings) -> registry.Registry:
    """Build the one shared HTTP client and the adapters (once per process)."""
    global _client
    if _client is None:
        _client = build_client()
    install_log_redaction("uvicorn.access", "uvicorn.error")
    return registry.configure(platform_config(settings), _client)


def config() -> PlatformConfig:
    return _registry().config


def _registry() -> registry.Registry:
    if registry._default is None:
        raise RuntimeError("service.accounts.adapters.configure() has not been called")
    return registry._default


def adapter(platform: str) -> Adapter:
    return registry.get(platform)


def context(account: Account) -> AccountContext:
    return AccountContext(platform_account_id=account.platform_account_id,
                          credentials=crypto.decrypt_json(account.credentials))


def call(account: Account, operation: Callable[[Adapter, AccountContext], T]) -> T:
    """Run `operation` for a connected account, refreshing refused credentials once.

    Must be called outside any transaction (it writes the account in short ones of its own).
    """
    if account.status != "connected":
        raise Conflict("The account is disconnected.")
    platform_adapter = adapter(account.platform)
    ctx = context(account)
    try:
        return operation(platform_adapter, ctx)
    except GrantRefused as refused:
        return _with_grant_refreshed(account, platform_adapter, ctx, operation, refused.grant)
    except ReauthRequired:
        if not (ctx.credentials.get("refreshToken") or ctx.credentials.get("userAccessToken")):
            flag_reauth(account)
            raise
    try:
        fresh = platform_adapter.refresh_credentials(ctx)
    except PlatformFailure:
        flag_reauth(account)
        raise ReauthRequired("The platform refused the stored credentials; reconnect the account.") from None
    store_credentials(account, fresh)
    try:
        return operation(platform_adapter, AccountContext(ctx.platform_account_id, fresh))
    except ReauthRequired:
        flag_reauth(account)
        raise


def _with_grant_refreshed(account: Account, platform_adapter: Adapter, ctx: AccountContext,
                          operation: Callable[[Adapter, AccountContext], T], grant: str) -> T:
    """A separate grant's token was refused: refresh that grant once and try again. Refused for
    good, the grant (not the account) is marked lapsed: `GrantRequired` until it is connected again."""
    try:
        fresh = platform_adapter.refresh_grant(grant, ctx)
    except (GrantRefused, ReauthRequired, Rejected):
        lapse_grant(account, ctx.credentials, grant)
        raise GrantRequired(f"the platform refused the account's {grant} grant: connect it again", grant) from None
    store_credentials(account, fresh)
    try:
        return operation(platform_adapter, AccountContext(ctx.platform_account_id, fresh))
    except GrantRefused:
        lapse_grant(account, fresh, grant)
        raise GrantRequired(f"the platform refused the account's {grant} grant: connect it again", grant) from None


def lapse_grant(account: Account, credentials: dict[str, Any], grant: str) -> None:
    """Keep the grant's record, marked lapsed: the account shows it needs connecting again."""
    held = credentials.get(grant)
    lapsed = {**(held if isinstance(held, dict) else {}), "lapsed": True}
    with db.atomic():
        Account.update(credentials=crypto.encrypt_json({**credentials, grant: lapsed}), updated_at=clock.now()).where(
            Account.id == account.id, Account.status == "connected").execute()
    log.info("account %s: its %s grant needs connecting again", account.id, grant)


def grant_states(account: Account) -> dict[str, str]:
    """Each separate grant the platform has: `connected`, `missing` or `lapsed` (refused for good)."""
    grants = adapter(account.platform).grants
    if not grants:
        return {}
    credentials = crypto.decrypt_json(account.credentials) if account.credentials else {}
    states = {}
    for grant in grants:
        held = credentials.get(grant)
        states[grant] = ("missing" if not isinstance(held, dict) or not held.get("accessToken")
                         else "lapsed" if held.get("lapsed") else "connected")
    return states


def grant_states_of(account_id: str) -> dict[str, str]:
    account = Account.get_or_none(Account.id == account_id)
    return grant_states(account) if account is not None and account.credentials else {}


def lapses_at(platform: str, credentials: dict[str, Any]) -> dt.datetime | None:
    """When the account's credentials lapse for good (None: they renew themselves when refused)."""
    instants = [
        clock.parse_iso(value)
        for name in adapter(platform).lapsing_credentials
        if isinstance(value := credentials.get(name), str) and value
    ]
    known = [instant for instant in instants if instant is not None]
    return min(known) if known else None


def store_credentials(account: Account, credentials: dict[str, Any]) -> None:
    """New credentials for a connected account (a refresh): stored encrypted, the reauth flag lifted."""
    with db.atomic():
        Account.update(
            credentials=crypto.encrypt_json(credentials), needs_reauth=False, updated_at=clock.now(),
            credentials_expire_at=lapses_at(account.platform, credentials),
        ).where(Account.id == account.id, Account.status == "connected").execute()
    account.credentials = crypto.encrypt_json(credentials)



def flag_reauth(account: Account) -> None:
    """The platform refuses the account's credentials for good: a person must reconnect it."""
    with db.atomic():
        Account.update(needs_reauth=True, updated_at=clock.now()).where(Account.id == account.id).execute()
    account.needs_reauth = True
    log.info("account %s needs re-authorisation", account.id)


def as_service_error(failure: PlatformFailure) -> ServiceError:
    """The contract's error for a platform failure met during an API call."""
    if isinstance(failure, GrantRequired):
        return Conflict(f"The account lacks a grant this needs: {failure.message}.",
                        code=f"{failure.grant}_grant_required")
    if isinstance(failure, OutsideMessagingWindow):
        return ValidationFailed(
            "The contact's last message is older than the platform's messaging window.",
            code="outside_messaging_window",
        )
    if isinstance(failure, Unsupported):
        return ValidationFailed(f"The platform does not offer this: {failure.message}")
    if isinstance(failure, ReauthRequired):
        return PlatformError("The platform refused the stored credentials; reconnect the account.")
    if isinstance(failure, Rejected):
        return PlatformError(f"The platform refused the request: {failure.message}")
    return PlatformError(f"The platform did not answer in time; try again later. ({failure.message})")


def call_for_api(account: Account, operation: Callable[[Adapter, AccountContext], T]) -> T:
    """`call` for front doors: platform failures become the contract's errors."""
    try:
        return call(account, operation)
    except PlatformFailure as failure:
        raise as_service_error(failure) from None


def capabilities(platform: str) -> dict[str, Any]:
    """What the platform offers (limits, media, buttons, window, pace), as the account record shows it."""
    return adapter(platform).capabilities.as_dict()
