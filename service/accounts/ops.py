"""Connected platform accounts: listed, read, disconnected (credentials erased), deleted for good."""

from __future__ import annotations

from typing import Any

from kit import clock, crypto, ids
from kit.errors import Conflict, NotFound, ValidationFailed
from kit.pagination import Page, paginate
from platforms.base import RecentPost
from service.accounts import adapters
from service.accounts.shapes import Account as AccountRecord
from service.accounts.shapes import AccountDeleted
from service.common import audit, events, signals
from service.identity.auth import Actor
from storage.db import db
from storage.models import Account


def get_row(*, actor: Actor, account_id: str) -> Account:
    account = Account.get_or_none(Account.id == account_id, Account.workspace == actor.workspace_id)
    if account is None:
        raise NotFound("No account with that id.")
    actor.require_profile(account.profile_id)
    return account


def get(*, actor: Actor, account_id: str) -> AccountRecord:
    return AccountRecord.model_validate(get_row(actor=actor, account_id=account_id))


def list_accounts(
    *,
    actor: Actor,
    profile_id: str | None = None,
    platform: str | None = None,
    status: str | None = None,
    page: int | None = None,
    limit: int | None = None,
) -> Page:
    query = Account.select().where(Account.workspace == actor.workspace_id)
    if actor.profile_ids is not None:
        query = query.where(Account.profile.in_(list(actor.profile_ids)))
    if profile_id is not None:
        actor.require_profile(profile_id)  # a filter naming a profile outside the key's: 403, as everywhere
        query = query.where(Account.profile == profile_id)
    if platform is not None:
        query = query.filter(platform=platform)
    if status is not None:
        query = query.where(Account.status == status)
    return paginate(query.order_by(Account.created_at, Account.id), page=page, limit=limit, record=AccountRecord)


def connect(
    *,
    workspace_id: str,
    profile_id: str,
    platform: str,
    platform_account_id: str,
    username: str | None,
    display_name: str | None,
    credentials: dict[str, Any],
) -> Account:
    """Store a newly authorised platform identity, or reconnect the existing one (same profile,
    platform and platform account id), and record `account.connected`."""
    moment = clock.now()
    account = Account.get_or_none(
        Account.profile == profile_id, Account.platform_account_id == platform_account_id, platform=platform)
    if account is None:
        account = Account(
            id=ids.new_id("acc"),
            workspace=workspace_id,
            profile=profile_id,
            platform=platform,
            platform_account_id=platform_account_id,
            created_at=moment,
        )
        force_insert = True
    else:
        force_insert = False
        if account.status == "connected" and account.credentials:
            # A reconnect renews the account's own grant; its separate grants (TikTok messaging's) stay.
            kept = crypto.decrypt_json(account.credentials)
            credentials = {**{grant: kept[grant] for grant in adapters.adapter(platform).grants if grant in kept},
                           **credentials}
    account.username = username
    account.display_name = display_name
    account.credentials = crypto.encrypt_json(credentials)
    account.credentials_expire_at = adapters.lapses_at(platform, credentials)
    account.credentials_checked_at = None
    account.health_notified_at = None
    account.status = "connected"
    account.needs_reauth = False
    account.connected_at = moment
    account.disconnected_at = None
    account.updated_at = moment
    account.save(force_insert=force_insert)
    events.emit(workspace_id=workspace_id, type="account.connected",
                data=AccountRecord.model_validate(account).dump())
    return account


CONNECT_ACCOUNTS = "connect or disconnect accounts"


def disconnect(*, actor: Actor, account_id: str) -> AccountRecord:
    account = get_row(actor=actor, account_id=account_id)
    actor.require_role("admin", CONNECT_ACCOUNTS)
    actor.require_write()
    if account.status != "disconnected":
        moment = clock.now()
        account.status = "disconnected"
        account.credentials = None
        account.disconnected_at = moment
        account.updated_at = moment
        account.save()
        events.emit(workspace_id=account.workspace_id, type="account.disconnected",
                    data=AccountRecord.model_validate(account).dump())
        audit.record(actor, "account.disconnected", target=("account", account.id))
    return AccountRecord.model_validate(account)


def delete_permanently(*, actor: Actor, account_id: str) -> AccountDeleted:
    account = get_row(actor=actor, account_id=account_id)
    actor.require_role("admin", CONNECT_ACCOUNTS)
    actor.require_write()
    if account.status == "connected":
        raise Conflict("Disconnect the account before deleting it permanently.")
    # Each domain that keeps rows for the account deletes them and says how many of what went.
    counts = {"postTargets": 0, "conversations": 0, **dict(signals.account_deleting.send(account.id))}
    account.delete_instance()
    audit.record(actor, "account.deleted", target=("account", account.id), details=counts)
    return AccountDeleted(id=account.id, deleted=True, post_targets=counts["postTargets"],
                          conversations=counts["conversations"])


def publish_options(*, actor: Actor, account_id: str) -> dict[str, Any]:
    """What the platform makes the creator choose before publishing (TikTok: live creator info)."""
    with db.atomic():
        account = get_row(actor=actor, account_id=account_id)
    return adapters.call_for_api(account, lambda adapter, ctx: adapter.publish_options(ctx))


def recent_posts(*, actor: Actor, account_id: str) -> list[RecentPost]:
    """The account's recent posts as its platform lists them, newest first (id, text, link, date),
    fetched live: what a person picks from (an automation's posts) rather than typing platform ids.
    A platform that lists none: 422. Call outside any transaction (it asks the platform)."""
    with db.atomic():
        account = get_row(actor=actor, account_id=account_id)
    if not adapters.adapter(account.platform).capabilities.post_listing:
        raise ValidationFailed.field("accountId", "is an account whose platform does not list its posts")
    return adapters.call_for_api(account, lambda adapter, ctx: adapter.recent_posts(ctx))


def instagram_conversations(*, actor: Actor, account_id: str) -> dict[str, Any]:
    """The raw Instagram conversations with participants' scoped ids, fetched live."""
    with db.atomic():
        account = get_row(actor=actor, account_id=account_id)
    if not adapters.adapter(account.platform).capabilities.conversations_listing:
        raise ValidationFailed.field("id", "is not an Instagram account")
    return {"data": adapters.call_for_api(account, lambda adapter, ctx: adapter.list_conversations(ctx))}


def templates(*, actor: Actor, account_id: str) -> dict[str, Any]:
    """A WhatsApp account's approved message templates, fetched live (other platforms have none: 422)."""
    with db.atomic():
        account = get_row(actor=actor, account_id=account_id)
    if not adapters.adapter(account.platform).capabilities.templates:
        raise ValidationFailed.field("id", f"{account.platform} has no message templates")
    return {"data": adapters.call_for_api(account, lambda adapter, ctx: adapter.list_templates(ctx))}
