"""The HTTP answers of /mcp that ask the client for credentials (RFC 6750 §3, the MCP authorization spec).

- No credentials: 401 `WWW-Authenticate: Bearer resource_metadata="...", scope="read write"`,
  without an error code (RFC 6750 §3.1: a request that sent none is told only how to get some).
- A bearer that is not good (unknown, expired, revoked, issued for another resource): 401 with
  `error="invalid_token"` as well.
- A good token without the scope a tool needs: the HTTP answer to that `tools/call` is 403
  `error="insufficient_scope", scope="..."` naming the scopes the call needs together with those
  already granted, so that the client can ask the person for more (a step-up) instead of the model
  reading a tool error it can do nothing about. An API key is not stepped up: it cannot be
  re-authorised by a person, so the tool answers `forbidden` as /v1 does.

This replaces the SDK's `RequireAuthMiddleware`, whose 401 always carries `error="invalid_token"`
and no `scope`, and which knows only scopes required of every request.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.identity import oauth_tokens

# A tools/call body is small; anything larger (an upload_media call) is passed on unread here and
# still gets its scope checked by the tool itself.
PEEK_LIMIT = 64 * 1024


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def challenge(resource_metadata: str, *, error: str | None = None, description: str | None = None,
              scope: str = " ".join(oauth_tokens.SCOPES)) -> str:
    parts = []
    if error is not None:
        parts.append(f"error={_quoted(error)}")
        if description:
            parts.append(f"error_description={_quoted(description)}")
    parts += [f"scope={_quoted(scope)}", f"resource_metadata={_quoted(resource_metadata)}"]
    return "Bearer " + ", ".join(parts)


async def _answer(send: Send, status: int, www_authenticate: str, body: dict[str, Any]) -> None:
    raw = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(raw)).encode()),
        (b"www-authenticate", www_authenticate.encode()), (b"cache-control", b"no-store")]})
    await send({"type": "http.response.body", "body": raw})


def _has_bearer(scope: Scope) -> bool:
    return Headers(scope=scope).get("authorization", "")[:7].lower() == "bearer "


def _tool_called(body: bytes) -> str | None:
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return None  # the SDK answers the parse error
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return None
    params = message.get("params")
    name = params.get("name") if isinstance(params, dict) else None
    return name if isinstance(name, str) else None


class Challenges:
    """ASGI layer in front of the SDK's streamable HTTP endpoint (after its authentication layers)."""

    def __init__(self, app: ASGIApp, *, resource_metadata: str, tool_scopes: Mapping[str, str]) -> None:
        self.app = app
        self.resource_metadata = resource_metadata
        self.tool_scopes = dict(tool_scopes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        user = scope.get("user")
        if not isinstance(user, AuthenticatedUser):
            if _has_bearer(scope):
                await _answer(send, 401, challenge(
                    self.resource_metadata, error="invalid_token",
                    description="The access token is not valid (unknown, expired or revoked)."),
                    {"error": "invalid_token", "error_description": "The access token is not valid."})
            else:
                await _answer(send, 401, challenge(self.resource_metadata),
                              {"error_description": "Authentication required: connect through OAuth, or send an "
                                                    "API key as Authorization: Bearer sk_...."})
            return
        token = user.access_token
        if scope["method"] != "POST" or (token.claims or {}).get("kind") == "key":
            await self.app(scope, receive, send)
            return
        body, more, replay = await _peek(receive)
        name = None if more else _tool_called(body)
        needed = self.tool_scopes.get(name) if name is not None else None
        if needed is not None and needed not in token.scopes:
            wanted = oauth_tokens.normalise_scope(" ".join([*token.scopes, needed]))
            description = f"The tool {name} needs the {needed} scope."
            await _answer(send, 403, challenge(self.resource_metadata, error="insufficient_scope",
                                               description=description, scope=wanted),
                          {"error": "insufficient_scope", "error_description": description})
            return
        await self.app(scope, replay, send)


async def _peek(receive: Receive) -> tuple[bytes, bool, Receive]:
    """The body's first `PEEK_LIMIT` bytes (all of it when it is smaller, then `more` is False), and a
    `receive` that hands the app every message again, then the rest as it comes."""
    seen: list[Message] = []
    size = 0
    more = True
    while more and size <= PEEK_LIMIT:
        message = await receive()
        seen.append(message)
        if message["type"] != "http.request":
            break
        size += len(message.get("body", b""))
        more = bool(message.get("more_body", False))
    body = b"".join(m.get("body", b"") for m in seen if m["type"] == "http.request")
    pending = list(seen)

    async def replay() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return body, more, replay
