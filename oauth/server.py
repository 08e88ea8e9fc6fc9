"""Authlib's authorisation server over our storage (service.identity.oauth_tokens, service.identity.oauth_clients).

Authlib has no Starlette integration and is synchronous: the async handlers in oauth/endpoints.py
read the request, then call into this module in a worker thread inside one transaction. Requests
reach Authlib as `FormRequest` (query + form) or `JSONRequest`; answers come back as `Answer`,
which the handler turns into a Starlette response.

What Authlib does not do and we add here: S256-only PKCE demanded at /authorize, RFC 8707
`resource` checked and bound to codes and tokens, RFC 9207 `iss` on error redirects too,
single-use codes under concurrency, refresh rotation with reuse detection.
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, ClassVar
from urllib.parse import urlsplit

from authlib.common.urls import add_params_to_uri
from authlib.oauth2 import AuthorizationServer
from authlib.oauth2.rfc6749 import ClientMixin, OAuth2Error, OAuth2Request
from authlib.oauth2.rfc6749.errors import InvalidClientError, InvalidRequestError
from authlib.oauth2.rfc6749.grants import AuthorizationCodeGrant, RefreshTokenGrant
from authlib.oauth2.rfc6749.requests import JsonPayload, JsonRequest, OAuth2Payload
from authlib.oauth2.rfc6750 import BearerTokenGenerator
from authlib.oauth2.rfc7009 import RevocationEndpoint
from authlib.oauth2.rfc7591 import ClientRegistrationEndpoint
from authlib.oauth2.rfc7636 import CodeChallenge
from authlib.oauth2.rfc9207 import IssuerParameter

from service.identity import oauth_clients, oauth_tokens
from service.identity.oauth_clients import ClientInfo

AUTH_METHODS = ["client_secret_basic", "client_secret_post", "none"]


def issuer(base_url: str) -> str:
    return base_url


def mcp_resource(base_url: str) -> str:
    """The one protected resource this server issues tokens for (RFC 8707 / RFC 9728)."""
    return base_url + "/mcp"


def same_resource(presented: str, expected: str) -> bool:
    """Resources compare as URLs: scheme and host case-insensitively, a trailing slash aside. A value
    that is no URL (`https://[::1/mcp`) is no resource of ours."""
    try:
        a, b = urlsplit(presented), urlsplit(expected)
    except ValueError:
        return False
    return (
        a.scheme.lower() == b.scheme.lower()
        and a.netloc.lower() == b.netloc.lower()
        and a.path.rstrip("/") == b.path.rstrip("/")
        and not a.fragment
        and a.query == b.query
    )


def redirect_matches(registered: str, presented: str) -> bool:
    """Exact match, no prefixes, no patterns; except that an http redirect on a loopback host
    (127.0.0.1, [::1], localhost) matches on any port (RFC 8252 §7.3, OAuth 2.1 §8.4.2): a native
    client (an MCP bridge on a laptop) takes whatever port is free when it starts, not the one it
    registered or named in its metadata document."""
    if presented == registered:
        return True
    try:
        a, b = urlsplit(registered), urlsplit(presented)
        a.port, b.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError:
        return False
    return (
        a.scheme == b.scheme == "http"
        and a.hostname in oauth_clients.LOOPBACK_HOSTS
        and a.hostname == b.hostname
        # Only the port may differ: no user info, the same host spelling, path and query, no fragment.
        and _without_port(a.netloc) == _without_port(b.netloc)
        and a.path == b.path
        and a.query == b.query
        and not b.fragment and "#" not in presented
        and oauth_clients.acceptable_redirect_uri(presented)
    )


def _without_port(netloc: str) -> str:
    return re.sub(r":[0-9]*$", "", netloc).lower()


# --- requests and answers -----------------------------------------------------------------------


class _Payload(OAuth2Payload):
    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        self._datalist: defaultdict[str, list[str]] = defaultdict(list)
        for key, value in pairs:
            self._datalist[key].append(value)
        self._data = {key: values[0] for key, values in self._datalist.items()}

    @property
    def data(self) -> dict[str, str]:
        return self._data

    @property
    def datalist(self) -> defaultdict[str, list[str]]:
        return self._datalist


class FormRequest(OAuth2Request):
    """An OAuth request read from Starlette: query pairs, form pairs and the headers.

    `headers` must be Starlette's case-insensitive headers: Authlib looks up `Authorization`.
    """

    def __init__(
        self, method: str, uri: str, headers: Any, query: list[tuple[str, str]], form: list[tuple[str, str]]
    ) -> None:
        super().__init__(method, uri, headers=headers)
        self._args = dict(query)
        self._form = dict(form)
        self.payload = _Payload(query + form)

    @property
    def args(self) -> dict[str, str]:
        return self._args

    @property
    def form(self) -> dict[str, str]:
        return self._form


class _JsonPayload(JsonPayload):
    def __init__(self, data: Any) -> None:
        self._data = data

    @property
    def data(self) -> Any:
        return self._data


class JSONRequest(JsonRequest):
    def __init__(self, method: str, uri: str, headers: Any, data: Any) -> None:
        super().__init__(method, uri, headers)
        self.payload = _JsonPayload(data)


@dataclass
class Answer:
    status: int
    body: Any
    headers: list[tuple[str, str]] = field(default_factory=list)

    @property
    def location(self) -> str | None:
        return next((v for k, v in self.headers if k.lower() == "location"), None)

    @location.setter
    def location(self, value: str) -> None:  # RFC 9207's IssuerParameter rewrites it
        self.headers = [(k, v) for k, v in self.headers if k.lower() != "location"] + [("Location", value)]


# --- clients --------------------------------------------------------------------------------------


class Client(ClientMixin):
    def __init__(self, info: ClientInfo) -> None:
        self.info = info

    @property
    def client_id(self) -> str:
        return self.info.client_id

    @property
    def name(self) -> str | None:
        return self.info.client_name

    def get_client_id(self) -> str:
        return self.info.client_id

    def get_default_redirect_uri(self) -> str | None:
        # Only an unambiguous default: with several registered URIs the request must name one.
        return self.info.redirect_uris[0] if len(self.info.redirect_uris) == 1 else None

    def get_allowed_scope(self, scope: str | None) -> str:
        allowed = set(oauth_tokens.scope_list(self.info.scope)) or set(oauth_tokens.SCOPES)
        asked = set(oauth_tokens.scope_list(scope)) if scope else allowed
        return oauth_tokens.normalise_scope(" ".join(asked & allowed))

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return any(redirect_matches(registered, redirect_uri) for registered in self.info.redirect_uris)

    def check_client_secret(self, client_secret: str) -> bool:
        return self.info.check_secret(client_secret)

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return method == self.info.token_endpoint_auth_method

    def check_response_type(self, response_type: str) -> bool:
        return response_type in self.info.response_types

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in self.info.grant_types


# --- grants and extensions ------------------------------------------------------------------------


@dataclass(frozen=True)
class Consent:
    """Who allowed the request and for which workspace; Authlib carries it as `request.user`."""

    user_id: str
    workspace_id: str
    scope: str | None = None  # what the person left checked on the consent page; None: all requested


class InvalidTargetError(OAuth2Error):
    error = "invalid_target"  # RFC 8707 §2


class S256Challenge(CodeChallenge):
    """PKCE with S256, demanded at /authorize (Authlib's `required=True` only checks at /token and
    would accept `plain`)."""

    SUPPORTED_CODE_CHALLENGE_METHOD: ClassVar[list[str]] = ["S256"]

    def validate_code_challenge(self, grant: Any, redirect_uri: str) -> None:
        data = grant.request.payload.data
        if not data.get("code_challenge"):
            raise InvalidRequestError("Missing 'code_challenge': PKCE with S256 is required.")
        if data.get("code_challenge_method") != "S256":
            raise InvalidRequestError("'code_challenge_method' must be S256.")
        super().validate_code_challenge(grant, redirect_uri)


def _requested_resource(request: OAuth2Request, expected: str, *, bound: str | None = None) -> str:
    """The `resource` of the request, checked: one value, our MCP endpoint (or the one the code
    or token was bound to). Absent means our MCP endpoint: it is the only resource we protect."""
    values = request.payload.datalist.get("resource", [])
    if len(values) > 1:
        raise InvalidTargetError("Only one 'resource' may be requested.")
    if not values:
        return bound or expected
    if not same_resource(values[0], bound or expected):
        raise InvalidTargetError("The requested 'resource' is not served by this authorisation server.")
    return bound or expected


class CodeGrant(AuthorizationCodeGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = AUTH_METHODS

    def validate_authorization_request(self) -> str:
        redirect_uri: str = super().validate_authorization_request()
        try:
            self.request.resource = _requested_resource(self.request, self.server.resource)
        except OAuth2Error as error:
            error.redirect_uri = redirect_uri
            raise
        return redirect_uri

    def save_authorization_code(self, code: str, request: OAuth2Request) -> None:
        consent: Consent = request.user
        data = request.payload.data
        oauth_tokens.save_code(
            code,
            client_id=request.client.client_id,
            client_name=request.client.name,
            user_id=consent.user_id,
            workspace_id=consent.workspace_id,
            redirect_uri=request.payload.redirect_uri or request.client.get_default_redirect_uri(),
            scope=consent.scope if consent.scope is not None else request.scope,
            resource=request.resource,
            code_challenge=data["code_challenge"],
            code_challenge_method=data["code_challenge_method"],
        )

    def query_authorization_code(self, code: str, client: Client) -> Any:
        row = oauth_tokens.claim_code(code, client_id=client.client_id)
        if row is None:
            return None
        _requested_resource(self.request, self.server.resource, bound=row.resource)
        return _CodeView(row)

    def delete_authorization_code(self, authorization_code: Any) -> None:
        pass  # claimed (used_at) when queried; kept so that a replay can be recognised

    def authenticate_user(self, authorization_code: Any) -> Consent:
        row = authorization_code.row
        return Consent(user_id=row.user_id, workspace_id=row.workspace_id)


class _CodeView:
    """The code row as Authlib's AuthorizationCodeMixin expects it."""

    def __init__(self, row: Any) -> None:
        self.row = row
        self.code_challenge = row.code_challenge
        self.code_challenge_method = row.code_challenge_method

    def get_redirect_uri(self) -> str:
        return str(self.row.redirect_uri)

    def get_scope(self) -> str:
        return str(self.row.scope)


class _TokenView:
    def __init__(self, row: Any) -> None:
        self.row = row

    def check_client(self, client: Client) -> bool:
        return bool(self.row.client_id == client.client_id)

    def get_scope(self) -> str:
        return str(self.row.scope)


class RotatingRefreshGrant(RefreshTokenGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = AUTH_METHODS
    INCLUDE_NEW_REFRESH_TOKEN = True

    def authenticate_refresh_token(self, refresh_token: str) -> _TokenView | None:
        row = oauth_tokens.claim_refresh_token(refresh_token, client_id=self.request.client.client_id)
        if row is None:
            return None
        _requested_resource(self.request, self.server.resource, bound=row.resource)
        return _TokenView(row)

    def authenticate_user(self, refresh_token: _TokenView) -> Consent:
        row = refresh_token.row
        return Consent(user_id=row.user_id, workspace_id=row.workspace_id)

    def revoke_old_credential(self, refresh_token: _TokenView) -> None:
        oauth_tokens.retire_access_token(refresh_token.row)


class Revocation(RevocationEndpoint):
    CLIENT_AUTH_METHODS = AUTH_METHODS

    def query_token(self, token_string: str, token_type_hint: str | None) -> Any:
        found = oauth_tokens.find_token(token_string, token_type_hint)
        if found is None:
            return None
        view = _TokenView(found[0])
        view.kind = found[1]  # type: ignore[attr-defined]
        return view

    def revoke_token(self, token: Any, request: OAuth2Request) -> None:
        oauth_tokens.revoke_token(token.row, token.kind)


class Registration(ClientRegistrationEndpoint):
    """RFC 7591, open registration (the MCP authorisation spec expects it without a token)."""

    def authenticate_token(self, request: Any) -> bool:
        return True

    def get_server_metadata(self) -> dict[str, Any]:
        return self.server.metadata

    def extract_client_metadata(self, request: Any) -> dict[str, Any]:
        try:
            oauth_clients.check_registration(request.payload.data or {})
        except oauth_clients.InvalidClientMetadata as problem:
            raise InvalidClientMetadata(str(problem)) from None
        metadata: dict[str, Any] = super().extract_client_metadata(request)
        # Store and echo the method we will expect: a client that omitted it must learn that
        # it is to send its secret (RFC 7591 §2 default client_secret_basic).
        metadata.setdefault("token_endpoint_auth_method", "client_secret_basic")
        if not metadata.get("redirect_uris"):
            raise InvalidClientMetadata("redirect_uris is required.")
        metadata.setdefault("grant_types", ["authorization_code", "refresh_token"])
        metadata.setdefault("response_types", ["code"])
        if metadata.get("scope"):
            metadata["scope"] = oauth_tokens.normalise_scope(metadata["scope"]) or None
            if metadata["scope"] is None:
                del metadata["scope"]
        return metadata

    def generate_client_id(self, request: Any) -> str:
        return oauth_clients.new_client_id()

    def generate_client_secret(self, request: Any) -> str | None:
        data = request.payload.data or {}
        if data.get("token_endpoint_auth_method") == "none":
            return None
        return oauth_clients.new_client_secret()

    def create_registration_response(self, request: Any) -> tuple[int, dict[str, Any], list[tuple[str, str]]]:
        status, body, headers = super().create_registration_response(request)
        if body.get("client_secret") is None:
            body.pop("client_secret", None)
            body.pop("client_secret_expires_at", None)
        return status, body, headers

    def save_client(self, client_info: dict[str, Any], client_metadata: dict[str, Any], request: Any) -> Client:
        info = oauth_clients.register(
            client_id=client_info["client_id"],
            client_secret=client_info.get("client_secret"),
            metadata=client_metadata,
        )
        return Client(info)


class InvalidClientMetadata(OAuth2Error):
    error = "invalid_client_metadata"


class Issuer(IssuerParameter):
    def __init__(self, value: str) -> None:
        self.value = value

    def get_issuer(self) -> str:
        return self.value


# --- the server -----------------------------------------------------------------------------------


class Server(AuthorizationServer):
    def __init__(self, base_url: str) -> None:
        super().__init__(scopes_supported=list(oauth_tokens.SCOPES))
        self.base_url = base_url
        self.issuer = issuer(base_url)
        self.resource = mcp_resource(base_url)
        self.metadata = build_metadata(base_url)
        self.register_token_generator(
            "default",
            BearerTokenGenerator(
                access_token_generator=lambda **_: oauth_tokens.new_access_token(),
                refresh_token_generator=lambda **_: oauth_tokens.new_refresh_token(),
                expires_generator=lambda client, grant_type: int(oauth_tokens.ACCESS_LIFETIME.total_seconds()),
            ),
        )
        self.register_grant(CodeGrant, [S256Challenge(required=True)])
        self.register_grant(RotatingRefreshGrant)
        self.register_endpoint(Revocation)
        self.register_endpoint(Registration)
        self.register_extension(Issuer(self.issuer))

    def query_client(self, client_id: str) -> Client | None:
        try:
            info = oauth_clients.get_client(client_id)
        except oauth_clients.MetadataFetchError as problem:  # the page (or the JSON error) says why
            raise InvalidClientError(description=str(problem)) from None
        return Client(info) if info is not None else None

    def save_token(self, token: dict[str, Any], request: OAuth2Request) -> None:
        if request.authorization_code is not None:
            oauth_tokens.issue_for_code(
                request.authorization_code.row, access=token["access_token"], refresh=token.get("refresh_token")
            )
        else:
            oauth_tokens.issue_for_refresh(
                request.refresh_token.row,
                access=token["access_token"],
                refresh=token.get("refresh_token"),
                scope=token.get("scope") or request.refresh_token.row.scope,
            )

    def create_oauth2_request(self, request: Any) -> OAuth2Request:
        return request  # already a FormRequest

    def create_json_request(self, request: Any) -> JsonRequest:
        return request  # already a JSONRequest

    def handle_response(self, status: int, body: Any, headers: Any) -> Answer:
        return Answer(status, body, list(headers or []))

    def send_signal(self, name: str, *args: Any, **kwargs: Any) -> None:
        pass

    def error_redirect(self, error: OAuth2Error) -> Answer:
        """An /authorize error that may go back to the client (its redirect URI was validated),
        with `state` and, per RFC 9207, `iss`."""
        params = [("error", error.error)]
        if error.description:
            params.append(("error_description", error.description))
        if error.state:
            params.append(("state", error.state))
        params.append(("iss", self.issuer))
        return Answer(302, "", [("Location", add_params_to_uri(error.redirect_uri, params))])


def build_metadata(base_url: str) -> dict[str, Any]:
    """RFC 8414 metadata, with what the MCP authorisation spec asks clients to look for."""
    return {
        "issuer": issuer(base_url),
        "authorization_endpoint": f"{base_url}/oauth/authorize",
        "token_endpoint": f"{base_url}/oauth/token",
        "registration_endpoint": f"{base_url}/oauth/register",
        "revocation_endpoint": f"{base_url}/oauth/revoke",
        "scopes_supported": list(oauth_tokens.SCOPES),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_methods_supported": AUTH_METHODS,
        "revocation_endpoint_auth_methods_supported": AUTH_METHODS,
        "code_challenge_methods_supported": ["S256"],
        "authorization_response_iss_parameter_supported": True,
        "client_id_metadata_document_supported": True,
        "resource_indicators_supported": True,
    }


@functools.lru_cache(maxsize=8)
def server_for(base_url: str) -> Server:
    """One Authlib server per base URL; it holds configuration only, never request state."""
    return Server(base_url)
