"""API keys: created with their scope, profiles, permission and expiry (the secret shown once),
listed with their last use, revoked after a confirmation."""

from __future__ import annotations

from typing import Any

from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kit import shapes
from kit.errors import ServiceError
from kit.settings import Settings
from oauth.dashboard.console import (
    NoSeat,
    Seat,
    acting,
    back_to,
    confirm,
    failure,
    field,
    flash,
    not_found,
    page,
    seat,
)
from oauth.dashboard.shell import data_of, in_db
from service.identity import api_keys, workspaces
from service.identity.api_key_shapes import CreateApiKey

PAGE = "/dashboard/api-keys"


def _listing(where: Seat) -> dict[str, Any]:
    actor = where.actor()
    profiles = data_of(workspaces.list_profiles(actor=actor, limit=100))
    names = {profile["id"]: profile["name"] for profile in profiles}
    keys = [{**key, "profileNames": [names.get(p, p) for p in key["profileIds"]]}
            for key in data_of(api_keys.list_keys(actor=actor, limit=100))]
    return {"keys": keys, "profiles": profiles}


def _create_body(form: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"name": field(form, "name"), "permission": field(form, "permission") or "read-write",
                            "scope": field(form, "scope") or "full"}
    if body["scope"] == "profiles":
        body["profileIds"] = [str(p) for p in form.getlist("profileIds")]
    days = field(form, "expiresInDays")
    if days:
        # A form's number is text; the /v1 shape takes a JSON integer (anything else: its 422).
        body["expiresInDays"] = int(days) if days.isdigit() and len(days) < 6 else days
    return body


def routes(settings: Settings, middleware: list[Middleware]) -> list[Route]:
    async def api_keys_page(request: Request) -> Response:
        created = None
        try:
            if request.method == "POST":
                where, form = await acting(request)
                fields = shapes.parse(CreateApiKey, _create_body(form))
                created = (await in_db(lambda: api_keys.create(actor=where.actor(), **dict(fields)))).dump()
            else:
                where = await seat(request)
        except NoSeat as no:
            return no.response
        except ServiceError as problem:
            return failure(request, problem, PAGE)
        listing = await in_db(_listing, where)
        return page(request, "api_keys.html", where, title="API keys", nav="keys", created=created, **listing)

    async def revoke_key(request: Request) -> Response:
        key_id = request.path_params["id"]
        try:
            if request.method == "GET":
                where = await seat(request)
                keys = await in_db(lambda: data_of(api_keys.list_keys(actor=where.actor(), limit=100)))
                key = next((k for k in keys if k["id"] == key_id and not k["revokedAt"]), None)
                if key is None:
                    return not_found(request, "No API key with that id.")
                return confirm(request, where, title="Revoke key", question=f"Revoke the key {key['name']}?",
                               detail="Every request made with it is refused from now on. This cannot be undone.",
                               action=f"{PAGE}/{key_id}/revoke", button="Revoke",
                               cancel=f"{PAGE}?workspace={where.workspace_id}")
            where, _form = await acting(request)
            await in_db(lambda: api_keys.revoke(actor=where.actor(), key_id=key_id))
        except NoSeat as no:
            return no.response
        except ServiceError:
            return not_found(request, "No API key with that id.")
        flash(request, "The key is revoked.")
        return back_to(PAGE, where)

    return [
        Route(PAGE, api_keys_page, methods=["GET", "POST"], middleware=middleware),
        Route(f"{PAGE}/{{id}}/revoke", revoke_key, methods=["GET", "POST"], middleware=middleware),
    ]
