"""What the studio's pages share: the accounts a form offers (named by platform and name), form
values read as the `/v1` body's types, and a form that makes something done once however often it
is sent (a double click, a resent POST), through the same `Idempotency-Key` reservation as `/v1`."""

from __future__ import annotations

import datetime as dt
import secrets
from collections.abc import Callable
from typing import Any, TypeVar

from starlette.datastructures import FormData
from starlette.requests import Request

from kit import scheduling
from kit.errors import ServiceError
from oauth.dashboard.accounts import account_name, platform_name
from oauth.dashboard.console import Seat, field, in_own
from oauth.dashboard.shell import data_of, in_db
from service.accounts import ops as accounts
from service.common import idempotency
from service.identity.auth import Actor

T = TypeVar("T")
PER_PAGE = 25


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


def lines(form: FormData, name: str, *, commas: bool = False) -> list[str]:
    """A textarea's non-blank lines (or comma-separated parts), trimmed."""
    raw = field(form, name)
    parts = raw.replace(",", "\n").splitlines() if commas else raw.splitlines()
    return [part.strip() for part in parts if part.strip()]


def number(value: str) -> Any:
    """A form's number as the JSON integer /v1 takes; anything else left as text for the shape's 422."""
    return int(value) if value.isdigit() and len(value) < 10 else value


def zone_of(name: str) -> dt.tzinfo:
    return scheduling.zone_named(name)


def form_key() -> str:
    """A new form's one-time key, rendered into it."""
    return secrets.token_urlsafe(24)


async def once(request: Request, where: Seat, form: FormData, make: Callable[[Actor], T]) -> T | None:
    """Run `make` (which creates one thing and `attach`es it to the key) once per rendered form:
    None when this form was already sent. A refusal frees the key, so the corrected form can go."""
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
    await in_db(lambda: idempotency.complete(held, 201, {"made": True}))
    return made
