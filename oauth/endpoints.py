"""The authorisation server's HTTP face: metadata, registration, authorise + consent, token, revoke.

Each handler reads the request on the event loop, then runs Authlib and storage in a worker thread
inside one transaction (`in_db`). Errors that cannot safely go back to the client (unknown client,
a redirect URI that does not match exactly) are a 400 page, never a redirect.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any
from urllib.parse import unquote, urlsplit

from authlib.oauth2.rfc6749 import OAuth2Error
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from kit import json_input
from kit.errors import ServiceError
from kit.settings import Settings
from oauth import shell as dashboard
from oauth.server import Answer, Consent, FormRequest, JSONRequest, Server, server_for
from service.identity import oauth_clients, oauth_tokens, workspaces


def _to_response(answer: Answer) -> Response:
    headers = {k: v for k, v in answer.headers if k.lower() not in ("content-type", "location")}
    if answer.location is not None:
        return RedirectResponse(answer.location, status_code=answer.status if answer.status in (301, 302, 303) else 302,
                                headers=headers)
    body = answer.body if isinstance(answer.body, str) else json.dumps(answer.body)
    return Response(body, status_code=answer.status, headers=headers, media_type="application/json")


def _oauth_error_json(error: OAuth2Error) -> Response:
    status, body, headers = error()
    return _to_response(Answer(status, body, list(headers)))


async def _pairs(request: Request) -> list[tuple[str, str]]:
    if request.method != "POST":
        return []
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media != "application/x-www-form-urlencoded":
        return []
    form = await request.form()  # no larger than `dashboard.FormLimit` lets through
    return [(k, v) for k, v in form.multi_items() if isinstance(v, str)]


async def _capped_body(request: Request, limit: int) -> bytes | None:
    """The body, or None once it passes `limit` bytes (read no further: registration is open)."""
    declared = request.headers.get("content-length", "")
    if declared.isascii() and declared.isdigit() and int(declared) > limit:
        return None
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _form_request(server: Server, request: Request, form: list[tuple[str, str]]) -> FormRequest:
    # The URI Authlib sees is our public one (behind a proxy the socket's is not).
    uri = server.base_url + request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return FormRequest(request.method, uri, request.headers, list(request.query_params.multi_items()), form)


def _client_ids(request: Request, form: list[tuple[str, str]]) -> list[str]:
    """The client ids a request presents: `client_id` in the query or the form, and HTTP Basic's user."""
    found = [value for key, value in [*request.query_params.multi_items(), *form] if key == "client_id"]
    authorization = request.headers.get("authorization", "")
    if authorization[:6].lower() == "basic ":
        try:
            user = base64.b64decode(authorization[6:].strip(), validate=True).decode().partition(":")[0]
        except (binascii.Error, ValueError):
            user = ""
        found.append(unquote(user))
    return found[:4]  # Authlib reads the first of each; a request with more is refused anyway


async def _resolve_clients(request: Request, form: list[tuple[str, str]]) -> dict[str, Any]:
    """Fetch the Client ID Metadata Documents the request names before any transaction is opened
    (DESIGN rule 15): inside `in_db`, Authlib's `query_client` then reads them from here."""
    return await run_in_threadpool(oauth_clients.resolve_all, _client_ids(request, form))


def routes(settings: Settings) -> list[Route]:
    server = server_for(settings.base_url)
    middleware = dashboard.session_middleware(settings)
    resource = server.resource

    async def metadata(request: Request) -> Response:
        return JSONResponse(server.metadata, headers={"Access-Control-Allow-Origin": "*"})

    async def protected_resource(request: Request) -> Response:
        # RFC 9728. Ours rather than the SDK's so that it lists both scopes: a token needs `read`
        # for read tools and `write` for the others, so neither is required of every request.
        return JSONResponse(
            {
                "resource": resource,
                "authorization_servers": [server.issuer],
                "scopes_supported": list(oauth_tokens.SCOPES),
                "bearer_methods_supported": ["header"],
                "resource_name": "Switchboard MCP",
            },
            headers={"Access-Control-Allow-Origin": "*"},
        )

    async def register(request: Request) -> Response:
        def refused(description: str) -> Response:
            return JSONResponse({"error": "invalid_client_metadata", "error_description": description},
                                status_code=400)

        raw = await _capped_body(request, oauth_clients.REGISTRATION_MAX_BYTES)
        if raw is None:
            return refused(f"The body may be at most {oauth_clients.REGISTRATION_MAX_BYTES // 1024} KiB.")
        try:
            data = json_input.decode(raw)
        except ServiceError as problem:
            return refused(problem.message)
        if not isinstance(data, dict):
            return refused("The body must be a JSON object.")
        if json_input.holds_nul(data):
            return refused("The body holds a NUL character (\\u0000), which is not text.")
        uri = server.base_url + request.url.path
        answer = await dashboard.in_db(
            server.create_endpoint_response, "client_registration", JSONRequest("POST", uri, request.headers, data)
        )
        return _to_response(answer)

    async def token(request: Request) -> Response:
        form = await _pairs(request)
        with oauth_clients.resolve_first(await _resolve_clients(request, form)):
            answer = await dashboard.in_db(server.create_token_response, _form_request(server, request, form))
        return _to_response(answer)

    async def revoke(request: Request) -> Response:
        form = await _pairs(request)
        with oauth_clients.resolve_first(await _resolve_clients(request, form)):
            answer = await dashboard.in_db(server.create_endpoint_response, "revocation",
                                           _form_request(server, request, form))
        return _to_response(answer)

    async def authorize(request: Request) -> Response:
        form = await _pairs(request)
        oauth_request = _form_request(server, request, form)

        def validate() -> Any:
            return server.get_consent_grant(oauth_request, end_user=None)

        resolved = await _resolve_clients(request, form)
        try:
            with oauth_clients.resolve_first(resolved):
                grant = await dashboard.in_db(validate)
        except OAuth2Error as error:
            # Back to the client only when its redirect URI is known good *and* the person signed in
            # here approved this client before: anyone can register a client (or publish a metadata
            # document) naming any https page, and a redirect there would make this server an open
            # redirector for phishing. Every other error is a page of ours.
            if error.redirect_uri and await _approved_before(request, oauth_request.payload.client_id):
                return _to_response(server.error_redirect(error))
            return dashboard.error_page(
                request, 400, "This link cannot be used",
                error.description or "The application's request is not valid.", error.error)

        user = await _signed_in(request)
        if user is None:
            return dashboard.login_redirect(request)
        user_id = user[0]
        spaces = await dashboard.in_db(lambda: workspaces.list_user_workspaces(user_id=user_id))
        client = grant.request.client
        action = "/oauth/authorize?" + request.url.query

        requested = oauth_tokens.scope_list(grant.request.scope)

        def consent_page(status: int = 200, error: str | None = None, selected: str | None = None,
                         checked: list[str] | None = None) -> Response:
            return dashboard.render(
                request, "consent.html", status=status, title="Allow access", action=action,
                client_name=client.name or client.client_id, unverified=not client.info.metadata_document,
                redirect_host=urlsplit(grant.redirect_uri).netloc,
                scopes=requested, checked=requested if checked is None else checked, workspaces=spaces,
                selected=selected or (spaces[0]["id"] if spaces else None), error=error,
            )

        if request.method == "GET":
            if not spaces:
                return dashboard.error_page(request, 403, "No workspace", "You are not a member of any workspace.")
            return consent_page()

        values = dict(form)
        if not dashboard.csrf_ok(request, values):
            return consent_page(400, "The form expired; please decide again.")
        decision = values.get("decision")
        workspace_id = values.get("workspaceId")
        if decision == "allow":
            if workspace_id not in {ws["id"] for ws in spaces}:
                return consent_page(400, "Choose one of your workspaces.")
            granted: str | None = None
            if "scope_choice" in values:  # the page's checkboxes: only what was left checked
                kept = [scope for scope in requested if ("grant_scope", scope) in form]
                if requested and not kept:
                    return consent_page(400, "Leave at least one permission checked, or choose Deny.",
                                        selected=str(workspace_id), checked=[])
                granted = oauth_tokens.normalise_scope(" ".join(kept))
            consent: Consent | None = Consent(user_id=user_id, workspace_id=str(workspace_id), scope=granted)
        elif decision == "deny":
            consent = None
        else:
            return consent_page(400, "Choose Allow or Deny.")
        with oauth_clients.resolve_first(resolved):
            answer = await dashboard.in_db(server.create_authorization_response, oauth_request, consent, grant)
        return _to_response(answer)

    async def _signed_in(request: Request) -> tuple[str, str] | None:
        return await dashboard.current_user(request)

    async def _approved_before(request: Request, client_id: str | None) -> bool:
        user = await _signed_in(request)
        if user is None or not client_id:
            return False
        return await dashboard.in_db(oauth_tokens.has_approved, user_id=user[0], client_id=client_id)

    return [
        Route("/.well-known/oauth-authorization-server", metadata, methods=["GET"]),
        Route("/.well-known/oauth-protected-resource/mcp", protected_resource, methods=["GET"]),
        Route("/.well-known/oauth-protected-resource", protected_resource, methods=["GET"]),
        Route("/oauth/register", register, methods=["POST"]),
        Route("/oauth/token", token, methods=["POST"], middleware=[Middleware(dashboard.FormLimit)]),
        Route("/oauth/revoke", revoke, methods=["POST"], middleware=[Middleware(dashboard.FormLimit)]),
        Route("/oauth/authorize", authorize, methods=["GET", "POST"], middleware=middleware),
    ]
