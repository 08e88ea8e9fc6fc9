"""The MCP server at /mcp: the SDK's server holding our tools, behind our token verifier."""

from __future__ import annotations

from typing import Any

from mcp.server.auth.middleware.bearer_auth import RequireAuthMiddleware
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.request_state import RequestStateSecurity
from mcp.server.transport_security import TransportSecuritySettings
from starlette.routing import Route

from kit import crypto
from kit.settings import VERSION, Settings
from mcp_server import prompts, resources, tools
from mcp_server.challenges import Challenges
from mcp_server.inbox_watch import InboxBus
from mcp_server.tooling import build_tools
from mcp_server.tools import media as media_tools
from mcp_server.verifier import StorageTokenVerifier

RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource/mcp"


def build_mcp(settings: Settings) -> MCPServer:
    """One MCP server for one app: its session manager can run only once."""
    mcp: MCPServer = MCPServer(
        tools=build_tools(tools.TOOLS),
        name="switchboard",
        version=VERSION,
        instructions="Publish posts and exchange direct messages across social platforms in the workspace "
        "that the person chose when connecting. Arguments use the /v1 API's camelCase names.",
        token_verifier=StorageTokenVerifier(settings.base_url + "/mcp"),
        auth=AuthSettings(
            # Plain strings, not the AnyHttpUrl the signature names: pydantic would add a trailing slash
            # to the issuer, and the SDK's own client then refuses it as a mismatch.
            issuer_url=settings.base_url,  # type: ignore[arg-type]
            resource_server_url=settings.base_url + "/mcp",  # type: ignore[arg-type]
            required_scopes=None,  # per tool: `read` for read tools, `write` for the others
            validate_token_resource=True,
        ),
        # The sealed `requestState` of a question to the person (`mcp_server.asking`) comes back to
        # whichever API process takes the answer: every process seals with the same key.
        request_state_security=RequestStateSecurity(
            keys=[crypto.derive_key(settings.secret_key, b"mcp request state")]),
        subscriptions=InboxBus(),
    )
    resources.register(mcp)
    prompts.register(mcp)
    return mcp


def transport_security(settings: Settings) -> TransportSecuritySettings:
    """DNS-rebinding protection for our own host name (and loopback), not only 127.0.0.1."""
    from urllib.parse import urlsplit

    parts = urlsplit(settings.base_url)
    hosts = [parts.netloc, "127.0.0.1:*", "localhost:*", "[::1]:*"]
    if parts.port is None:
        hosts.append(parts.hostname or "")
    origins = [f"{parts.scheme}://{parts.netloc}", "http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                     allowed_origins=origins)


def mcp_app(mcp: MCPServer, settings: Settings) -> Any:
    """The SDK's `/mcp` endpoint with the layers the SDK puts around it (the bearer token checked,
    then kept in context), without the Starlette app the SDK builds to hold them: that app's own
    error, exception and routing layers ran on every call for nothing. Its other route (the
    protected-resource metadata) is ours to serve, and its lifespan (the session manager) runs in
    our app's."""
    # Stateless with JSON answers: any API process can serve any request (scale-out), and a
    # tool call is one plain HTTP exchange.
    app = mcp.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        json_response=True,
        transport_security=transport_security(settings),
        # Room for `upload_media`'s largest file as base64; anything larger is 413 before it is read.
        max_request_body_size=media_tools.BASE64_MAX_CHARS + 64 * 1024,
    )
    guarded = next(route.app for route in app.routes if isinstance(route, Route) and route.path == "/mcp")
    # The SDK's own guard (`RequireAuthMiddleware`) gives way to ours, which answers as RFC 6750 and
    # the MCP authorization spec ask (no error code without credentials, `scope`, 403 step-ups).
    assert isinstance(guarded, RequireAuthMiddleware)
    endpoint: Any = Challenges(guarded.app, resource_metadata=settings.base_url + RESOURCE_METADATA_PATH,
                               tool_scopes={definition.name: definition.scope for definition in tools.TOOLS})
    for layer in reversed(app.user_middleware):
        endpoint = layer.cls(endpoint, *layer.args, **layer.kwargs)
    return endpoint
