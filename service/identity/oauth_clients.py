"""OAuth clients: registered dynamically (RFC 7591) or described by a Client ID Metadata Document.

A client whose id is an https URL is not registered: its metadata document is fetched from that
URL (with the same SSRF guard as webhook delivery, a size limit and a short cache) and must name
itself with that very URL. Such clients are public: they authenticate with PKCE alone.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import re
import secrets
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx2

from kit import clock, net, tokens
from service.common.configured import Configured
from storage.db import db
from storage.models import OAuthClient

settings = Configured(__name__)  # handed in by the composition root (wire)

log = logging.getLogger("switchboard.oauth")

CIMD_MAX_BYTES = 5 * 1024
CIMD_CACHE_SECONDS = 300
CIMD_TIMEOUT_SECONDS = 5.0
AUTH_METHODS = ("none", "client_secret_post", "client_secret_basic")


@dataclass(frozen=True)
class ClientInfo:
    client_id: str
    client_name: str | None
    redirect_uris: tuple[str, ...]
    grant_types: tuple[str, ...]
    response_types: tuple[str, ...]
    token_endpoint_auth_method: str
    scope: str | None
    secret_hash: str | None = None
    metadata_document: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def check_secret(self, presented: str) -> bool:
        return self.secret_hash is not None and tokens.same_hash(self.secret_hash, presented)


# A host name as DNS spells it (or an IPv4 address): no percent escapes, no NUL, nothing an HTTP
# client would refuse only once it tries to connect (`https://%ED%A0%80/x`, `https://a%00b/x`).
_HOST = re.compile(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*\.?")


def looks_like_url(client_id: str) -> bool:
    """Whether the client id claims to be a URL (then it is a metadata document's, or nothing)."""
    return "://" in client_id


def is_metadata_document_id(client_id: str) -> bool:
    """An https URL with a path on a host that can be resolved, of printable ASCII. Anything that
    fails to parse (`https://[::1/x`) is no metadata document id: never an exception."""
    if not client_id or len(client_id) > MAX_URI_LENGTH or not client_id.isascii() or not client_id.isprintable():
        return False
    try:
        parts = urlsplit(client_id)
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError:
        return False
    host = parts.hostname or ""
    return (parts.scheme == "https" and bool(host) and parts.path not in ("", "/") and " " not in client_id
            and "#" not in client_id and (_HOST.fullmatch(host) is not None or host.count(":") >= 2))


def get_client(client_id: str) -> ClientInfo | None:
    """The client, or None when there is none of that id. A metadata document that cannot be used
    raises `MetadataFetchError`, whose message says why (the consent page shows it)."""
    if is_metadata_document_id(client_id):
        return _client_from_document(client_id)
    if looks_like_url(client_id):
        return None
    row = OAuthClient.get_or_none(OAuthClient.client_id == client_id)
    if row is None:
        return None
    return ClientInfo(
        client_id=row.client_id,
        client_name=row.client_name,
        redirect_uris=tuple(row.redirect_uris or []),
        grant_types=tuple(row.grant_types or []),
        response_types=tuple(row.response_types or []),
        token_endpoint_auth_method=row.token_endpoint_auth_method,
        scope=row.scope,
        secret_hash=row.secret_hash,
    )


# Dynamic registration is open to anyone (the MCP authorisation spec asks for it without a
# token), so what a stranger may store is bounded: each field's type, its length, the count.
REGISTRATION_MAX_BYTES = 64 * 1024
MAX_CLIENT_NAME = 200
MAX_REDIRECT_URIS = 10
MAX_URI_LENGTH = 2000
MAX_TEXT = 2000
_STRING_FIELDS = ("client_name", "client_uri", "logo_uri", "tos_uri", "policy_uri", "jwks_uri", "scope",
                  "token_endpoint_auth_method", "software_id", "software_version", "software_statement")
_LIST_FIELDS = ("redirect_uris", "grant_types", "response_types", "contacts")
LOOPBACK_HOSTS = ("127.0.0.1", "::1", "localhost")


class InvalidClientMetadata(Exception):
    """Registration metadata that is refused; the message is safe to show."""


def acceptable_redirect_uri(uri: str) -> bool:
    """https with a host, or http on a loopback host (OAuth 2.1 §8.4.2, the MCP authorisation spec);
    absolute, without a fragment, without spaces or control characters."""
    if not uri or len(uri) > MAX_URI_LENGTH or not uri.isascii() or not uri.isprintable() or " " in uri:
        return False
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError:
        return False
    if parts.fragment or "#" in uri or not parts.hostname:
        return False
    if parts.scheme == "https":
        return True
    return parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS


def check_registration(data: dict[str, Any]) -> None:
    """Raise `InvalidClientMetadata` unless every known field has its RFC 7591 type and our bounds."""
    for name in _STRING_FIELDS:
        if name in data and data[name] is not None and not isinstance(data[name], str):
            raise InvalidClientMetadata(f"{name} must be a string.")
    for name in _LIST_FIELDS:
        value = data.get(name)
        if value is None:
            continue
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise InvalidClientMetadata(f"{name} must be an array of strings.")
        if len(value) > MAX_REDIRECT_URIS:
            raise InvalidClientMetadata(f"{name} may list at most {MAX_REDIRECT_URIS} values.")
    if "jwks" in data and data["jwks"] is not None and not isinstance(data["jwks"], dict):
        raise InvalidClientMetadata("jwks must be an object.")
    client_name = data.get("client_name")
    if isinstance(client_name, str) and len(client_name) > MAX_CLIENT_NAME:
        raise InvalidClientMetadata(f"client_name may be at most {MAX_CLIENT_NAME} characters long.")
    for field_name in _STRING_FIELDS:
        value = data.get(field_name)
        if field_name != "software_statement" and isinstance(value, str) and len(value) > MAX_TEXT:
            raise InvalidClientMetadata(f"{field_name} may be at most {MAX_TEXT} characters long.")
    redirect_uris = data.get("redirect_uris")
    if not redirect_uris:
        raise InvalidClientMetadata("redirect_uris is required.")
    for uri in redirect_uris:
        if not acceptable_redirect_uri(uri):
            raise InvalidClientMetadata(
                "Each redirect URI must be an absolute https URL, or http on a loopback host "
                "(127.0.0.1, [::1], localhost), without a fragment.")


def register(*, client_id: str, client_secret: str | None, metadata: dict[str, Any]) -> ClientInfo:
    """Store a dynamically registered client (metadata already validated by Authlib's claims)."""
    known = {"client_name", "redirect_uris", "grant_types", "response_types", "scope", "token_endpoint_auth_method"}
    row = OAuthClient.create(
        client_id=client_id,
        secret_hash=tokens.sha256_hex(client_secret) if client_secret else None,
        client_name=(metadata.get("client_name") or None),
        redirect_uris=list(metadata.get("redirect_uris") or []),
        grant_types=list(metadata.get("grant_types") or ["authorization_code", "refresh_token"]),
        response_types=list(metadata.get("response_types") or ["code"]),
        scope=metadata.get("scope"),
        token_endpoint_auth_method=metadata["token_endpoint_auth_method"],
        metadata={k: v for k, v in metadata.items() if k not in known},
        created_at=clock.now(),
    )
    return get_client(row.client_id)  # type: ignore[return-value]


def new_client_id() -> str:
    return "cl_" + secrets.token_hex(16)


def new_client_secret() -> str:
    return "cs_" + secrets.token_urlsafe(32)


# --- Client ID Metadata Documents -----------------------------------------------------------------


class MetadataFetchError(Exception):
    """The document could not be used; the message is safe to show."""


# What a fetch found: the client, or why there is none (the reason, shown on the consent page).
_Found = ClientInfo | MetadataFetchError
_cache: dict[str, tuple[float, _Found]] = {}
_cache_lock = threading.Lock()
# The documents this request fetched before its transaction began (`resolve_first`): a request
# never waits on the network while it holds a transaction (DESIGN rule 15), so inside one a
# document is read from here or from the cache, and never fetched.
_resolved: contextvars.ContextVar[dict[str, _Found] | None] = contextvars.ContextVar("resolved_clients",
                                                                                      default=None)


def _client_from_document(url: str) -> ClientInfo:
    pinned = (_resolved.get() or {}).get(url)
    found = pinned if pinned is not None else _cached(url)
    if found is None:
        if db.obj is not None and db.in_transaction():
            # A front door forgot `resolve_first`: refuse rather than hold every writer for seconds.
            log.warning("a client metadata document was needed inside a transaction; not fetched")
            raise MetadataFetchError("The client's metadata document is not available; try again.")
        found = fetch_client(url)
    if isinstance(found, MetadataFetchError):
        raise found
    return found


def _cached(url: str) -> _Found | None:
    with _cache_lock:
        hit = _cache.get(url)
        return hit[1] if hit is not None and hit[0] > time.monotonic() else None


def fetch_client(url: str) -> _Found:
    """Fetch and check the document at `url` (or take it from the short cache). Network: call it
    with no transaction open."""
    found = _cached(url)
    if found is not None:
        return found
    try:
        found = _client_from_metadata(url, fetch_client_metadata(url))
    except MetadataFetchError as problem:
        found = problem
    with _cache_lock:
        if len(_cache) > 1000:
            _cache.clear()
        _cache[url] = (time.monotonic() + CIMD_CACHE_SECONDS, found)
    return found


@contextlib.contextmanager
def resolve_first(found: dict[str, _Found]) -> Iterator[None]:
    """Make the documents `resolve_all` fetched (outside any transaction) the ones this context uses."""
    token = _resolved.set(found)
    try:
        yield
    finally:
        _resolved.reset(token)


def resolve_all(client_ids: Iterable[str]) -> dict[str, _Found]:
    """Fetch every metadata document among `client_ids` now, before a transaction is opened."""
    return {client_id: fetch_client(client_id) for client_id in dict.fromkeys(client_ids)
            if is_metadata_document_id(client_id)}


def _client_from_metadata(url: str, document: dict[str, Any]) -> ClientInfo:
    if document.get("client_id") != url:
        raise MetadataFetchError("The metadata document must name its own URL as client_id.")
    try:
        # The rules of registration: field types, bounds, redirect URIs https or loopback http only.
        check_registration(document)
    except InvalidClientMetadata as problem:
        raise MetadataFetchError(f"The metadata document is not valid: {problem}") from None
    redirect_uris = document["redirect_uris"]
    method = document.get("token_endpoint_auth_method") or "none"
    if method != "none":
        # A document is public: there is no secret that it could share with us.
        raise MetadataFetchError("Clients described by a metadata document must be public (auth method none).")
    name = document.get("client_name")
    return ClientInfo(
        client_id=url,
        client_name=name if isinstance(name, str) else None,
        redirect_uris=tuple(redirect_uris),
        grant_types=tuple(document.get("grant_types") or ("authorization_code", "refresh_token")),
        response_types=tuple(document.get("response_types") or ("code",)),
        token_endpoint_auth_method="none",  # noqa: S106 - a method name, not a secret
        scope=document.get("scope") if isinstance(document.get("scope"), str) else None,
        metadata_document=True,
    )


def fetch_client_metadata(url: str) -> dict[str, Any]:
    """GET a Client ID Metadata Document through the webhooks' SSRF guard (`service/net.py`: public
    addresses only unless the operator allows private ones, checked at connect time, no redirects),
    at most 5 KiB, a few seconds."""
    if not is_metadata_document_id(url):
        raise MetadataFetchError("A client id URL must be https with a path.")
    current = settings()
    body = b""
    try:
        with (
            net.guarded_client(timeout=CIMD_TIMEOUT_SECONDS, allow_private=current.webhook_allow_private,
                               extra_ca_bundle=current.webhook_ca_bundle, user_agent="Switchboard-OAuth/1.0") as http,
            http.stream("GET", url, headers={"Accept": "application/json"}) as response,
        ):
            if response.status_code != 200:
                raise MetadataFetchError(f"The metadata document answered HTTP {response.status_code}.")
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > CIMD_MAX_BYTES:
                    raise MetadataFetchError("The metadata document is too large.")
    except net.AddressRefused:
        raise MetadataFetchError("The client's host may not be contacted.") from None
    except (httpx2.HTTPError, httpx2.InvalidURL, ValueError, UnicodeError):
        raise MetadataFetchError("The metadata document could not be fetched.") from None
    try:
        document = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise MetadataFetchError("The metadata document is not JSON.") from None
    if not isinstance(document, dict):
        raise MetadataFetchError("The metadata document is not a JSON object.")
    return document
