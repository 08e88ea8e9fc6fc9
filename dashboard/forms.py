"""What the dashboard's forms share: the names a person recognises (a platform, an account, a
contact), the accounts a form offers, form values read as the `/v1` body's types, and a form that
makes something done once however often it is sent (a double click, a resent POST), through the
same `Idempotency-Key` reservation as `/v1`."""

from __future__ import annotations

import datetime as dt
import secrets
from collections.abc import Callable
from typing import Any, TypeVar
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from starlette.datastructures import FormData
from starlette.requests import Request

from dashboard.views import Seat, data_of, field, in_own
from kit.errors import ServiceError, ValidationFailed
from oauth.shell import in_db
from service.accounts import ops as accounts
from service.common import idempotency
from service.identity.auth import Actor

T = TypeVar("T")
PER_PAGE = 25
PLATFORM_NAMES = {
    "instagram": "Instagram", "facebook": "Facebook", "meta_ads": "Meta Ads", "tiktok": "TikTok",
    "youtube": "YouTube", "x": "X", "linkedin": "LinkedIn", "telegram": "Telegram", "whatsapp": "WhatsApp",
}


def platform_name(platform: str) -> str:
    return PLATFORM_NAMES.get(platform, platform)


def account_name(account: dict[str, Any]) -> str:
    """How a person recognises the account: its display name, else its handle, else the platform's id."""
    if account.get("displayName"):
        return str(account["displayName"])
    if account.get("username"):
        return "@" + str(account["username"]).lstrip("@")
    return str(account.get("platformAccountId") or account["id"])


def contact_label(conversation: dict[str, Any]) -> str:
    return str(conversation.get("contactName") or conversation.get("contactHandle")
               or conversation.get("externalConversationId") or "Unknown contact")


def account_rows(actor: Actor, *, capability: str | None = None, connected: bool = True) -> list[dict[str, Any]]:
    """The workspace's accounts with `label` ("Platform · name"), those with `capability` only."""
    rows = []
    for account in data_of(accounts.list_accounts(actor=actor, limit=100)):
        if connected and account["status"] != "connected":
            continue
        if capability and not account["capabilities"].get(capability):
            continue
        name = account_name(account)
        rows.append({**account, "name": name, "platformName": platform_name(account["platform"]),
                     "label": f"{platform_name(account['platform'])} · {name}"})
    return rows


def labels(rows: list[dict[str, Any]]) -> dict[str, str]:
    return {row["id"]: row["label"] for row in rows}


def account_names(actor: Actor) -> dict[str, str]:
    """Every account of the workspace (connected or not) by id: its label, for lists and logs."""
    return labels(account_rows(actor, connected=False))


def scheduled(form: FormData, verb: str) -> dict[str, Any]:
    """A form's `scheduledFor` (required to schedule: "choose when to `verb`") and its `timezone`."""
    when = field(form, "scheduledFor") or None
    if when is None:
        raise ValidationFailed.field("scheduledFor", f"is required to schedule: choose when to {verb}")
    return {"scheduledFor": when, "timezone": field(form, "timezone") or "UTC"}


def lines(form: FormData, name: str, *, commas: bool = False) -> list[str]:
    """A textarea's non-blank lines (or comma-separated parts), trimmed."""
    raw = field(form, name)
    parts = raw.replace(",", "\n").splitlines() if commas else raw.splitlines()
    return [part.strip() for part in parts if part.strip()]


def number(value: str) -> Any:
    """A form's number as the JSON integer /v1 takes; anything else left as text for the shape's 422."""
    return int(value) if value.isdigit() and len(value) < 10 else value


def zone_of(name: str) -> dt.tzinfo:
    try:
        return ZoneInfo(name) if name else dt.UTC
    except (ZoneInfoNotFoundError, ValueError):
        raise ValidationFailed.field("timezone", "must be an IANA time zone name, e.g. Europe/Paris") from None


def form_key() -> str:
    """A new form's one-time key, rendered into it."""
    return secrets.token_urlsafe(24)


def _succeeded(made: Any) -> tuple[int, Any]:
    return 201, {"made": True}


async def once(request: Request, where: Seat, form: FormData, make: Callable[[Actor], T],
               answer: Callable[[T], tuple[int, Any]] = _succeeded) -> T | None:
    """Run `make` once per rendered form (its `idempotencyKey`), the thing it makes tied to the key in
    the transaction making it: None when this form was already sent. The key keeps `answer(made)`
    (status and body); a refusal frees it, so the corrected form can go, and is raised again."""
    actor = await in_db(where.actor)
    key = field(form, "idempotencyKey")
    idempotency.check_key(key)
    fingerprint = idempotency.request_fingerprint("POST", request.url.path, key.encode())
    reserved = await in_db(lambda: idempotency.reserve(actor.credential_id, key, fingerprint))
    if not isinstance(reserved, idempotency.Reservation) or reserved.resource_id is not None:
        return None
    held = reserved

    def run() -> T:
        bound = idempotency.bind(held)
        try:
            return make(actor)
        finally:
            idempotency.unbind(bound)

    try:
        made = await in_own(run)
    except ServiceError as problem:
        status, body = problem.status, problem.body()
        await in_db(lambda: idempotency.finish_failed(held, status, body))
        raise
    kept_status, kept_body = answer(made)
    await in_db(lambda: idempotency.complete(held, kept_status, kept_body))
    return made
