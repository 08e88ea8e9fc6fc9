"""Connecting a separate grant to an account already connected (TikTok messaging: TikTok API for
Business's own authorization, with an app of its own): a second consent, its own signed single-use
state and its own callback. The grant is stored beside the account's credentials, never in place
of them; without it the account works for everything else."""

from __future__ import annotations

import secrets

from itsdangerous import BadSignature, URLSafeTimedSerializer

from kit import clock, crypto
from kit.errors import BadRequest, Conflict, ValidationFailed
from platforms.base import AccountContext, GrantRefused, PlatformFailure, Rejected
from service.accounts import adapters, connect
from service.accounts import ops as accounts
from service.accounts.connect import Finished, _acceptable_redirect, _with_query
from service.accounts.connect_shapes import ConnectStart
from service.accounts.shapes import Account as AccountRecord
from service.common import audit
from service.identity.auth import Actor
from storage.db import db
from storage.models import Account, ConnectState


def _serializer() -> URLSafeTimedSerializer:
    keys = connect.settings().secret_keys
    return URLSafeTimedSerializer(list(reversed(keys)), salt="switchboard.grant-state")


def redirect_uri(platform: str, grant: str) -> str:
    return f"{connect.settings().base_url}/v1/connect/{platform}/grants/{grant}/callback"


def _grant_of(account: Account, grant: str) -> None:
    known = adapters.adapter(account.platform).grants
    if grant not in known:
        offered = ", ".join(known) if known else "none"
        raise ValidationFailed.field("grant", f"{account.platform} has no separate {grant} grant (it has: {offered})")


def start_grant(*, actor: Actor, platform: str, account_id: str, grant: str,
                redirect_url: str | None = None) -> ConnectStart:
    account = accounts.get_row(actor=actor, account_id=account_id)
    actor.require_role("admin", accounts.CONNECT_ACCOUNTS)
    actor.require_write()
    if account.platform != platform:
        raise ValidationFailed.field("accountId", f"is a {account.platform} account, not {platform}")
    _grant_of(account, grant)
    if account.status != "connected":
        raise Conflict("The account is disconnected.")
    if redirect_url is not None and not _acceptable_redirect(redirect_url):
        raise ValidationFailed.field("redirectUrl", "must be an absolute https URL (or http on localhost)")
    nonce = secrets.token_urlsafe(24)
    ConnectState.create(nonce=nonce)
    state = _serializer().dumps({"n": nonce, "w": actor.workspace_id, "a": account.id, "f": platform, "g": grant,
                                 "r": redirect_url})
    try:
        url = adapters.adapter(platform).grant_authorize_url(grant, state=state,
                                                             redirect_uri=redirect_uri(platform, grant))
    except PlatformFailure as failure:
        raise adapters.as_service_error(failure) from None
    return ConnectStart(auth_url=url, state=state)


def finish_grant(*, platform: str, grant: str, code: str | None, state: str | None,
                 error: str | None = None) -> Finished:
    """The business consent's redirect back: check and spend the state, exchange the code, store
    the grant beside the account's credentials (its own refusals lapse it alone)."""
    if not state:
        raise BadRequest("The callback has no state.")
    try:
        claims = _serializer().loads(state, max_age=int(connect.STATE_MAX_AGE.total_seconds()))
    except BadSignature:
        raise BadRequest("The state is not valid or has expired.") from None
    if claims.get("f") != platform or claims.get("g") != grant:
        raise BadRequest("The state was issued for another grant.")
    with db.atomic():
        spent = (ConnectState.update(used_at=clock.now())
                 .where(ConnectState.nonce == claims["n"], ConnectState.used_at.is_null()).execute())
    if spent != 1:
        raise BadRequest("This state has already been used.")
    if error or not code:
        raise BadRequest("The platform did not authorise the grant.")
    with db.atomic():
        account = Account.get_or_none(Account.id == claims["a"], Account.workspace == claims["w"])
    if account is None or account.status != "connected":
        raise Conflict("The account was disconnected before the grant was connected.")
    context = AccountContext(account.platform_account_id, crypto.decrypt_json(account.credentials))
    try:
        credentials = adapters.adapter(platform).exchange_grant_code(
            grant, context, code=code, redirect_uri=redirect_uri(platform, grant))
    except GrantRefused:
        raise ValidationFailed.field("code", "was not accepted by the platform") from None
    except Rejected as refusal:
        raise ValidationFailed(f"The {grant} grant cannot be connected: {refusal.message}.",
                               code=f"{grant}_grant_refused") from None
    except PlatformFailure as failure:
        raise adapters.as_service_error(failure) from None
    with db.atomic():
        # The grant's own id of the account, in the clear: the id its webhooks name (TikTok messaging's).
        Account.update(credentials=crypto.encrypt_json(credentials), updated_at=clock.now(),
                       grant_account_id=adapters.adapter(platform).grant_account_id(grant, credentials)).where(
            Account.id == account.id, Account.status == "connected").execute()
        # As the first connection's row: the platform's redirect carries no person.
        audit.record(None, "account.grant_connected", workspace_id=claims["w"], target=("account", account.id),
                     details={"platform": platform, "grant": grant, "via": "oauth"})
        record = AccountRecord.model_validate(Account.get_by_id(account.id))
    target = claims.get("r")
    return Finished(record, _with_query(target, accountId=account.id, grant=grant) if target else None)
