"""The MCP server at /mcp: every tool is a thin call into `service/`, acting in the token's workspace.

Tools are data (`ToolDef`): a name, the `service.<module>.<function>` it calls, the scope it needs,
its arguments as the same field specs that /v1 validates with (camelCase names, the same rules),
and its annotations. Adding a tool is one entry in `TOOLS`; an entry whose service function does
not exist in this build is skipped, so a tool appears when its feature does.

A call: the bearer token (already verified by the SDK's middleware with our verifier) must carry
the tool's scope; the arguments pass the /v1 specs; the service function runs in a worker thread
inside one transaction. Domain errors come back as tool errors whose text and structured content
are the /v1 error envelope (`{"error": {"code", "message", "details"?}}`); an unexpected fault is
logged and answered with `internal_error`, never with the exception's text.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field
from starlette.concurrency import run_in_threadpool

from mcp_server.verifier import StorageTokenVerifier, storage_threads
from service import accounts, conversations
from service.auth import Actor
from service.errors import Forbidden, ServiceError, Unauthorized
from service.pagination import Page
from service.settings import VERSION, Settings
from service.validation import ID, PAGE_QUERY, Any_, Array, Bool, Int, Obj, Spec, Str
from storage.db import connection, db, reading

log = logging.getLogger("switchboard.mcp")


@dataclass(frozen=True)
class ToolDef:
    name: str
    target: str  # "<module of service/>.<function>", called as function(actor=..., **arguments)
    scope: Literal["read", "write"]
    description: str
    args: Mapping[str, Spec] = field(default_factory=dict)  # camelCase, as /v1 names them
    required: tuple[str, ...] = ()
    rename: Mapping[str, str] = field(default_factory=dict)  # argument -> keyword of the service function
    destructive: bool = False  # deletes or cancels something, or reaches people (a sent message)
    idempotent: bool = False
    waits: bool = False  # calls a platform: may wait seconds on the network
    render: Callable[[Any], Any] | None = None  # the service's answer -> the tool's structured result


ACCOUNT_ID = {"accountId": ID}
CONVERSATION_ID = {"conversationId": ID}

TOOLS: list[ToolDef] = [
    ToolDef("list_workspaces", "workspaces.list_workspaces", "read",
            "The workspace this connection acts in, with its profiles (brands)."),
    ToolDef("list_accounts", "accounts.list_accounts", "read",
            "Connected platform accounts of the workspace, filtered by profile, platform or status; paginated.",
            args={**accounts.LIST_QUERY, **PAGE_QUERY}),
    ToolDef("get_publish_options", "accounts.publish_options", "read",
            "What the platform makes the creator choose before publishing to this account (TikTok: privacy "
            "levels, comment/duet/stitch switches, maximum video length; fetched live).",
            args=ACCOUNT_ID, required=("accountId",), rename={"accountId": "account_id"}, waits=True),
    ToolDef("list_conversations", "conversations.list_conversations", "read",
            "The inbox: conversations newest first, filtered by platform (upper case: INSTAGRAM, WHATSAPP, "
            "TIKTOK, TELEGRAM, YOUTUBE, X), account or profile; paginated.",
            args={**conversations.LIST_QUERY, **PAGE_QUERY}),
    ToolDef("get_messages", "conversations.get_messages", "read",
            "The messages of one conversation, oldest first; paginated.",
            args={**CONVERSATION_ID, **PAGE_QUERY}, required=("conversationId",),
            rename={"conversationId": "conversation_id"}),
    ToolDef("start_conversation", "conversations.start_conversation", "write",
            "Start a conversation with a contact on an account, or get the one that already exists for that "
            "contact. Give contactHandle or externalConversationId.",
            args=conversations.START.fields, required=conversations.START.required, idempotent=True,
            render=lambda started: {**started.conversation, "created": started.created}),
    ToolDef("send_message", "outbound.send_message", "write",
            "Send a direct message to the contact of a conversation. Reaches a real person: it cannot be unsent. "
            "The result's status is `sent`, or `pending` when the platform asked to slow down (it is sent "
            "later, once).",
            args={**CONVERSATION_ID, **conversations.SEND.fields}, required=("conversationId", "text"),
            rename={"conversationId": "conversation_id"}, destructive=True, waits=True,
            render=lambda sent: sent.record),
]


# --- building the tools ---------------------------------------------------------------------------


def _annotation(spec: Spec) -> Any:
    """A pydantic annotation for a /v1 field spec, so the tool's input schema says what /v1 does."""
    base: Any
    constraints: dict[str, Any] = {}
    if isinstance(spec, Str):
        base = Literal[tuple(spec.enum)] if spec.enum else str  # type: ignore[valid-type]
        if spec.min_length is not None:
            constraints["min_length"] = spec.min_length
        if spec.max_length is not None:
            constraints["max_length"] = spec.max_length
    elif isinstance(spec, Bool):
        base = bool
    elif isinstance(spec, Int):
        base = int
        if spec.minimum is not None:
            constraints["ge"] = spec.minimum
        if spec.maximum is not None:
            constraints["le"] = spec.maximum
    elif isinstance(spec, Array):
        base = list[_annotation(spec.items)]  # type: ignore[misc]
    elif isinstance(spec, Obj):
        base = dict[str, Any]
    elif isinstance(spec, Any_):
        base = Any
    else:
        base = Any
    if spec.nullable:
        base = base | None
    return Annotated[base, Field(description=spec.description or None, **constraints)]


def _resolve(target: str) -> Callable[..., Any] | None:
    module_name, _, function = target.rpartition(".")
    try:
        module = importlib.import_module(f"service.{module_name}")
    except ImportError:
        return None
    found = getattr(module, function, None)
    return found if callable(found) else None


def error_result(error: ServiceError) -> CallToolResult:
    body = error.body()
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(body, ensure_ascii=False))],
        structured_content=body,
        is_error=True,
    )


def _actor(definition: ToolDef) -> Actor:
    token = get_access_token()
    if token is None or not token.claims or not token.subject:
        raise Unauthorized("A valid access token is required.")
    if definition.scope not in token.scopes:
        raise Forbidden(f"The tool {definition.name} needs the `{definition.scope}` scope, which this "
                        "connection was not granted. Connect again and allow it.")
    return Actor(
        workspace_id=token.claims["workspace_id"],
        permission="read-write" if "write" in token.scopes else "read",
        profile_ids=None,
        credential_id=token.claims["grant_id"],
        user_id=token.subject,
    )


def _transaction(definition: ToolDef) -> Any:
    # A tool that calls a platform runs its own short transactions around the call (never hold
    # SQLite's one write lock across the network), as its /v1 operation does.
    if definition.waits:
        return contextlib.nullcontext()
    return reading() if definition.scope == "read" else db.atomic()


def _execute(definition: ToolDef, function: Callable[..., Any], actor: Actor, arguments: dict[str, Any]) -> Any:
    with connection(), _transaction(definition):
        values = Obj(fields=definition.args, required=definition.required).validate(arguments)
        result = function(actor=actor, **{definition.rename.get(k, k): v for k, v in values.items()})
    if definition.render is not None:
        return definition.render(result)
    return result.as_dict() if isinstance(result, Page) else result


def make_tool(definition: ToolDef, function: Callable[..., Any]) -> Callable[..., Any]:
    async def tool(**arguments: Any) -> dict[str, Any] | CallToolResult:
        given = {key: value for key, value in arguments.items() if value is not None}
        try:
            actor = _actor(definition)
            if definition.waits:  # the larger pool: a slow platform must not hold the storage threads
                return await run_in_threadpool(_execute, definition, function, actor, given)
            loop = asyncio.get_running_loop()
            result: dict[str, Any] = await loop.run_in_executor(
                storage_threads(), _execute, definition, function, actor, given
            )
            return result
        except ServiceError as error:
            return error_result(error)
        except Exception:
            log.exception("tool %s failed", definition.name)
            return error_result(ServiceError())

    parameters = [
        inspect.Parameter(
            name,
            inspect.Parameter.KEYWORD_ONLY,
            annotation=_annotation(spec) if name in definition.required else _annotation(spec) | None,
            default=inspect.Parameter.empty if name in definition.required else None,
        )
        for name, spec in definition.args.items()
    ]
    tool.__signature__ = inspect.Signature(parameters, return_annotation=dict[str, Any])  # type: ignore[attr-defined]
    tool.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": dict[str, Any]}
    tool.__name__ = definition.name
    tool.__doc__ = definition.description
    return tool


class _ArgumentsAsSent(FuncMetadata):
    """The SDK validates a tool's arguments with pydantic before the tool runs, answers a failure with
    pydantic's own text (and a link to errors.pydantic.dev), and drops arguments it does not know
    without a word. Our tools validate with the /v1 specs instead (`_execute`): this hands them the
    arguments exactly as sent, so a bad or unknown one is `validation_failed` with `details`."""

    def validate_arguments(self, arguments_to_validate: dict[str, Any]) -> dict[str, Any]:
        return dict(arguments_to_validate)


def _take_arguments_as_sent(mcp: MCPServer, name: str) -> None:
    tool = mcp._tool_manager.get_tool(name)
    assert tool is not None
    meta = tool.fn_metadata
    tool.fn_metadata = _ArgumentsAsSent(arg_model=meta.arg_model, output_schema=meta.output_schema,
                                        output_model=meta.output_model, wrap_output=meta.wrap_output)
    tool.parameters["additionalProperties"] = False  # what the /v1 specs do: an unknown argument is refused


def register_tools(mcp: MCPServer, definitions: list[ToolDef] | None = None) -> list[str]:
    """Add every tool whose service function exists in this build; return their names."""
    added = []
    for definition in definitions or TOOLS:
        function = _resolve(definition.target)
        if function is None:
            continue
        read = definition.scope == "read"
        mcp.add_tool(
            make_tool(definition, function),
            name=definition.name,
            description=definition.description + f" Needs scope `{definition.scope}`.",
            annotations=ToolAnnotations(
                read_only_hint=read,
                destructive_hint=None if read else definition.destructive,
                idempotent_hint=True if read else definition.idempotent,
                open_world_hint=definition.waits,
            ),
            structured_output=True,
        )
        _take_arguments_as_sent(mcp, definition.name)
        added.append(definition.name)
    return added


def build_mcp(settings: Settings) -> MCPServer:
    """One MCP server for one app: its session manager can run only once."""
    mcp: MCPServer = MCPServer(
        name="switchboard",
        version=VERSION,
        instructions="Publish posts and exchange direct messages across social platforms in the workspace "
        "that the person chose when connecting. Arguments use the /v1 API's camelCase names.",
        token_verifier=StorageTokenVerifier(),
        auth=AuthSettings(
            issuer_url=settings.base_url,  # a plain string: no trailing slash added (python-sdk #1919)
            resource_server_url=settings.base_url + "/mcp",
            required_scopes=None,  # per tool: `read` for read tools, `write` for the others
            validate_token_resource=True,
        ),
    )
    register_tools(mcp)
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
    # Stateless with JSON answers: any API process can serve any request (scale-out), and a
    # tool call is one plain HTTP exchange.
    return mcp.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        json_response=True,
        transport_security=transport_security(settings),
    )
