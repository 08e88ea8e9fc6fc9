"""What one OAuth grant reaches, when it reaches several things, until the person chooses.

A Facebook Login may reach several Pages (and Meta ad accounts), a LinkedIn grant the member and
the organizations they administer, a Google grant several YouTube channels. Then the callback
connects nothing: it keeps the choices here and hands out a `selection` token, and the person (or
the caller's app) lists them and picks which to connect, each an account of its own.

The token is random, shown once and kept only as its SHA-256; the choices, with the platform
tokens each needs, are encrypted like account credentials and erased once chosen. A selection
belongs to the workspace and profile the connect started in (another workspace's key: 404, as for
any resource), lives `SELECTION_MAX_AGE`, and is spent by the first choice made with it: an
unknown, expired or spent selection is 404 `not_found`, the way Stripe answers a spent or expired
object it no longer offers (it never answers 410).
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from kit import clock, crypto
from kit.errors import FieldProblem, NotFound, ValidationFailed
from platforms.base import ConnectedIdentity, GrantChoice, PlatformFailure
from service.accounts import adapters
from service.accounts import ops as accounts
from service.accounts.connect_shapes import Choice, Choices, ChosenAccounts
from service.accounts.shapes import Account as AccountRecord
from service.common import audit
from service.identity.auth import Actor
from storage.db import db
from storage.models import ConnectSelection

SELECTION_MAX_AGE = timedelta(minutes=30)
GONE = "No selection with that token: it is unknown, expired (after 30 minutes) or already used; connect again."


@dataclass(frozen=True)
class Offered:
    token: str
    expires_at: datetime
    choices: list[Choice]


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def _as_choice(item: dict[str, Any]) -> Choice:
    return Choice(id=item["id"], name=item.get("name"), kind=item["kind"])


def offer(*, workspace_id: str, profile_id: str, platform: str, redirect_url: str | None,
          choices: list[GrantChoice]) -> Offered:
    """Keep what the grant reaches and hand out the token that names it. Call inside a write transaction."""
    token = "sel_" + secrets.token_hex(32)
    moment = clock.now()
    kept = [
        {"id": choice.identity.platform_account_id, "kind": choice.kind,
         "name": choice.identity.display_name or choice.identity.username,
         "username": choice.identity.username, "displayName": choice.identity.display_name,
         "credentials": choice.identity.credentials}
        for choice in choices
    ]
    expires = moment + SELECTION_MAX_AGE
    ConnectSelection.create(id=_digest(token), workspace=workspace_id, profile=profile_id, platform=platform,
                            choices=crypto.encrypt_json({"choices": kept}), redirect_url=redirect_url,
                            created_at=moment, expires_at=expires)
    return Offered(token, expires, [_as_choice(item) for item in kept])


def _live(*, actor: Actor, platform: str, selection: str) -> tuple[ConnectSelection, list[dict[str, Any]]]:
    row = ConnectSelection.get_or_none(ConnectSelection.id == _digest(selection),
                                       ConnectSelection.workspace == actor.workspace_id, platform=platform)
    if row is None or row.used_at is not None or row.choices is None or row.expires_at <= clock.now():
        raise NotFound(GONE)
    actor.require_profile(row.profile_id)
    return row, list(crypto.decrypt_json(bytes(row.choices))["choices"])


def list_choices(*, actor: Actor, platform: str, selection: str) -> Choices:
    row, kept = _live(actor=actor, platform=platform, selection=selection)
    return Choices(data=[_as_choice(item) for item in kept], platform=platform,
                   expires_at=clock.iso(row.expires_at) or "")


def choose(*, actor: Actor, platform: str, selection: str, ids: list[str]) -> ChosenAccounts:
    """Connect the chosen ones, each an account of its own, and spend the selection.

    The selection is spent (in its own short transaction) before any platform call, so two
    concurrent choices cannot both connect; the platform calls (a Page's webhook subscription) run
    outside any transaction; the accounts are stored after them.
    """
    with db.atomic():
        row, kept = _live(actor=actor, platform=platform, selection=selection)
        actor.require_role("admin", "connect or disconnect accounts")
        actor.require_write()
        by_id = {item["id"]: item for item in kept}
        unknown = [index for index, value in enumerate(ids) if value not in by_id]
        if unknown:
            raise ValidationFailed(
                "Some ids are not among the selection's choices.",
                details=[FieldProblem(f"ids[{index}]", "is not one of the choices") for index in unknown],
            )
        spent = (ConnectSelection.update(used_at=clock.now(), choices=None)
                 .where(ConnectSelection.id == row.id, ConnectSelection.used_at.is_null())
                 .execute())
        if spent != 1:
            raise NotFound(GONE)
        workspace_id, profile_id = row.workspace_id, row.profile_id
    chosen = [by_id[value] for value in dict.fromkeys(ids)]  # each once, in the caller's order
    adapter = adapters.adapter(platform)
    connected: list[ConnectedIdentity] = []
    for item in chosen:
        identity = ConnectedIdentity(item["id"], item.get("username"), item.get("displayName"), item["credentials"])
        try:
            connected.append(adapter.connect_choice(identity))
        except PlatformFailure as failure:
            _store(actor, workspace_id, profile_id, platform, connected)  # those done so far stay connected
            raise adapters.as_service_error(failure) from None
    return ChosenAccounts(data=_store(actor, workspace_id, profile_id, platform, connected))


def _store(actor: Actor, workspace_id: str, profile_id: str, platform: str,
           identities: list[ConnectedIdentity]) -> list[AccountRecord]:
    with db.atomic():
        stored = [accounts.connect(
            workspace_id=workspace_id, profile_id=profile_id, platform=platform,
            platform_account_id=identity.platform_account_id, username=identity.username,
            display_name=identity.display_name, credentials=identity.credentials,
        ) for identity in identities]
        for account in stored:
            audit.record(actor, "account.connected", target=("account", account.id), details={"platform": platform})
        return [AccountRecord.model_validate(account) for account in stored]


def forget_expired() -> int:
    """Erase selections past their time (their encrypted tokens with them): a housekeeping chore."""
    with db.atomic():
        return int(ConnectSelection.delete().where(ConnectSelection.expires_at <= clock.now()).execute())
