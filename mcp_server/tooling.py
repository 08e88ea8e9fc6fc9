"""What an MCP tool is and how one runs: a thin call into `service/`, acting in the token's workspace.

Tools are data (`ToolDef`): a name, the service function it calls, the scope it needs, its
arguments as the same pydantic model that /v1 validates with (`model`: camelCase names, the same
rules; the tool's `inputSchema`), the record it answers with (`output`: its `outputSchema`), and its
annotations. Adding a tool is one entry in its domain's `TOOLS` (`mcp_server/tools/<domain>.py`);
the function is called with the model's attributes as snake_case keywords, as the /v1 route calls it.

A call: the bearer token (already verified by the SDK's middleware with our verifier: an OAuth token
or an API key) must carry the tool's scope; a tool that reaches people (`confirm`) first asks the
person when the client can (`mcp_server.asking`); the arguments pass the /v1 model, once (the SDK's
own argument check lets them through, so a refusal is `validation_failed` with `details`, as on /v1,
not pydantic's text); the service function runs inside one transaction: a read tool on SQLite on the
event loop, in a snapshot that never waits (as /v1's reads), anything else in a worker thread.
Domain errors come back as tool errors whose text and structured content are the /v1 error envelope
(`{"error": {"code", "message", "details"?}}`); an unexpected fault is logged and answered with
`internal_error`, never with the exception's text.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp_types import CallToolResult, InputRequiredResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict

from kit import shapes
from kit.errors import Forbidden, ServiceError, Unauthorized
from kit.pagination import Page
from mcp_server import asking
from service.identity import workspaces
from service.identity.auth import Actor, person_actor
from storage import requests

log = logging.getLogger("switchboard.mcp")


@dataclass(frozen=True)
class ToolDef:
    name: str
    function: Callable[..., Any]  # of service/, called as function(actor=..., **snake_case arguments)
    scope: Literal["read", "write"]
    description: str
    model: type[BaseModel]  # the arguments, as /v1 validates them: the tool's inputSchema
    output: type[BaseModel]  # what the tool answers with: its outputSchema
    destructive: bool = False  # deletes or cancels something, or reaches people (a sent message)
    idempotent: bool = False
    waits: bool = False  # calls a platform: may wait seconds on the network
    render: Callable[[Any], Any] | None = None  # the service's answer -> the tool's structured result
    partial: bool = False  # an update: only the arguments given are passed (the others keep their value)
    # Reaches people (a message, a publish, a delete): the question the person is asked first, in
    # plain words from the service's data, or None when this call reaches nobody (`confirmations`).
    confirm: Callable[[Actor, Any], str | None] | None = None
    # The least role a person needs to call it (owners and admins only: `admin`), and the words of the
    # refusal ("To manage webhooks you need..."). By default a read tool is any member's (`viewer`),
    # a write tool the daily work's (`member`). Checked before the arguments are read, so a refusal
    # never depends on what was asked; the service function checks its own rule again.
    role: str = ""
    needs: str = ""

    @property
    def least_role(self) -> str:
        return self.role or ("viewer" if self.scope == "read" else "member")




# --- building the tools ---------------------------------------------------------------------------


def error_result(error: ServiceError) -> CallToolResult:
    body = error.body()
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(body, ensure_ascii=False))],
        structured_content=body,
        is_error=True,
    )


def _actor(definition: ToolDef) -> Actor:
    return actor_for(definition.scope, f"The tool {definition.name}")


def actor_for(scope: str, what: str) -> Actor:
    """Who calls (a tool, a resource read, a prompt): the person behind an OAuth token, in the
    workspace they chose, or an API key; refused without the `scope` that `what` needs."""
    token = get_access_token()
    if token is None or not token.claims:
        raise Unauthorized("A valid access token is required.")
    claims = token.claims
    if claims.get("kind") == "key":
        if scope not in token.scopes:
            raise Forbidden("This key is read-only.")
        profile_ids = claims.get("profile_ids")
        return Actor(workspace_id=claims["workspace_id"], permission=claims["permission"],
                     profile_ids=None if profile_ids is None else frozenset(profile_ids),
                     credential_id=claims["key_id"])
    if not token.subject:
        raise Unauthorized("A valid access token is required.")
    if scope not in token.scopes:
        # The HTTP layer answers this with a 403 challenge (`mcp_server.challenges`) before the
        # call gets here; kept for any path that reaches a tool without it.
        raise Forbidden(f"{what} needs the `{scope}` scope, which this connection was not granted. Connect "
                        "again and allow it.")
    # The person's role now, read with the token: the token never acts above it (service.identity).
    person_profiles = claims.get("profile_ids")
    return person_actor(workspace_id=claims["workspace_id"], user_id=token.subject,
                        role=claims.get("role", "member"),
                        profile_ids=list(person_profiles) if person_profiles is not None else None,
                        credential_id=claims["grant_id"], scopes=tuple(token.scopes),
                        client_id=token.client_id)


def _execute(definition: ToolDef, actor: Actor, arguments: dict[str, Any]) -> dict[str, Any]:
    """The tool's work, in the transaction `storage.requests.run` opened for it."""
    parsed = shapes.parse(definition.model, arguments)
    # snake_case, one level; an update passes only what was given. (The fields are read from
    # `__dict__`: `dict(parsed)` first asks the model for a `keys` attribute, a miss pydantic
    # answers by raising, which cost more than the rest of the argument handling.)
    values = ({name: getattr(parsed, name) for name in parsed.model_fields_set} if definition.partial
              else dict(parsed.__dict__))
    result = definition.function(actor=actor, **values)
    if definition.render is not None:
        result = definition.render(result)
    if isinstance(result, BaseModel):
        return result.model_dump(mode="json", by_alias=True)
    return result.as_dict() if isinstance(result, Page) else dict(result)


class _Arguments(ArgModelBase):
    """What the SDK checks of a tool's arguments: nothing. The tool validates them with its /v1 model
    itself, once, so that a refusal is answered in the /v1 envelope rather than pydantic's text."""

    model_config = ConfigDict(extra="allow")

    def model_dump_one_level(self) -> dict[str, Any]:
        return dict(self.__pydantic_extra__ or {})


def _structured(result: dict[str, Any]) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(result, ensure_ascii=False))],
                          structured_content=result)


CONTEXT = "_mcp_context"  # the keyword the SDK passes the request's context under


def make_tool(definition: ToolDef) -> Callable[..., Any]:
    async def tool(**arguments: Any) -> CallToolResult | InputRequiredResult:
        context: Context = arguments.pop(CONTEXT)
        try:
            actor = _actor(definition)
            actor.require_role(definition.least_role, definition.needs or f"use {definition.name}")
            if definition.confirm is not None and asking.can_ask(context):
                answer = await asking.confirmed(context, definition, arguments, lambda: requests.run(
                    lambda _on_loop: _question(definition, actor, arguments), transaction="read", on_loop=True))
                if answer is not True:
                    return answer  # the question, or the person's "no"
            read = definition.scope == "read"
            # A tool that calls a platform (`waits`) runs its own short transactions around the
            # call, as its /v1 operation does: never SQLite's one write lock across the network.
            result = await requests.run(lambda _on_loop: _execute(definition, actor, arguments),
                                        transaction="read" if read else "write", on_loop=read,
                                        waits=definition.waits, bucket=actor.workspace_id)
            return _structured(result)
        except ServiceError as error:
            return error_result(error)
        except Exception:
            log.exception("tool %s failed", definition.name)
            return error_result(ServiceError())

    tool.__name__ = definition.name
    return tool


def _question(definition: ToolDef, actor: Actor, arguments: dict[str, Any]) -> str | None:
    """The confirmation to ask for this call, or None (it reaches nobody, or the workspace asks for none)."""
    assert definition.confirm is not None
    parsed = shapes.parse(definition.model, arguments)
    if not workspaces.confirms_before_reaching_people(actor.workspace_id):
        return None
    return definition.confirm(actor, parsed)


def _self_contained(model: type[BaseModel], mode: str) -> dict[str, Any]:
    return shapes.json_schema(model, mode=mode, ref_template="#/$defs/{model}")


def build_tools(definitions: list[ToolDef]) -> list[Tool]:
    built = []
    for definition in definitions:
        read = definition.scope == "read"
        built.append(Tool(
            fn=make_tool(definition), name=definition.name, title=None, is_async=True, context_kwarg=CONTEXT,
            description=definition.description + f" Needs scope `{definition.scope}`.",
            annotations=ToolAnnotations(
                read_only_hint=read,
                destructive_hint=None if read else definition.destructive,
                idempotent_hint=True if read else definition.idempotent,
                open_world_hint=definition.waits,
            ),
            parameters=_self_contained(definition.model, "validation"),
            fn_metadata=FuncMetadata(arg_model=_Arguments,
                                     output_schema=_self_contained(definition.output, "serialization")),
        ))
    return built
