"""API keys: created with their scope, profiles, permission and expiry (the secret shown once),
listed with their last use, revoked after a confirmation."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from dashboard import refusals, views
from dashboard.views import Seat, data_of, field
from kit import shapes
from kit.errors import ServiceError
from oauth.shell import in_db
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


async def api_keys_page(request: Request) -> Response:
    created = None
    where = await views.seated(request)
    if request.method == "POST":
        form = await request.form()  # checked already (`seated`)
        try:
            fields = shapes.parse(CreateApiKey, _create_body(form))
            created = (await in_db(lambda: api_keys.create(actor=where.actor(), **dict(fields)))).dump()
        except ServiceError as problem:
            listing = await in_db(_listing, where)
            again = views.page(request, "api_keys.html", where, title="API keys", nav="keys", created=None,
                               **listing)
            return refusals.again(again, problem.status, form, request.url.path,
                                  refusals.problems_of(problem, "api_key", "create-heading"))
    listing = await in_db(_listing, where)
    return views.page(request, "api_keys.html", where, title="API keys", nav="keys", created=created, **listing)


async def revoke_key(request: Request) -> Response:
    key_id = request.path_params["id"]
    where = await views.seated(request)
    try:
        if request.method == "GET":
            keys = await in_db(lambda: data_of(api_keys.list_keys(actor=where.actor(), limit=100)))
            key = next((k for k in keys if k["id"] == key_id and not k["revokedAt"]), None)
            if key is None:
                return views.not_found(request, "No API key with that id.")
            return views.confirm(request, where, title="Revoke key", question=f"Revoke the key {key['name']}?",
                                 detail="Every request made with it is refused from now on. This cannot be undone.",
                                 action=f"{PAGE}/{key_id}/revoke", button="Revoke",
                                 cancel=f"{PAGE}?workspace={where.workspace_id}")
        await in_db(lambda: api_keys.revoke(actor=where.actor(), key_id=key_id))
    except ServiceError:
        return views.not_found(request, "No API key with that id.")
    return views.done(request, "The key is revoked.", PAGE, where)
