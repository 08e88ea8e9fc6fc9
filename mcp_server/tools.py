"""The MCP server at /mcp: every tool is a thin call into `service/`, acting in the token's workspace.

Tools are data (`ToolDef`): a name, the service function it calls, the scope it needs, its
arguments as the same pydantic model that /v1 validates with (`model`: camelCase names, the same
rules; the tool's `inputSchema`), the record it answers with (`output`: its `outputSchema`), and its
annotations. Adding a tool is one entry in `TOOLS`; the function is called with the model's
attributes as snake_case keywords, as the /v1 route calls it.

A call: the bearer token (already verified by the SDK's middleware with our verifier) must carry
the tool's scope; the arguments pass the /v1 model, once (the SDK's own argument check lets them
through, so a refusal is `validation_failed` with `details`, as on /v1, not pydantic's text); the
service function runs inside one transaction: a read tool on SQLite on the event loop, in a snapshot
that never waits (as /v1's reads), anything else in a worker thread. Domain errors come back as tool
errors whose text and structured content are the /v1 error envelope (`{"error": {"code", "message",
"details"?}}`); an unexpected fault is logged and answered with `internal_error`, never with the
exception's text.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict
from starlette.routing import Route

from mcp_server.verifier import StorageTokenVerifier
from service.accounts import ops as accounts
from service.accounts import shapes as account_shapes
from service.analytics import ops as analytics
from service.analytics import shapes as analytics_shapes
from service.automations import ops as automations
from service.automations import shapes as automation
from service.broadcasts import ops as broadcasts
from service.broadcasts import shapes as bc
from service.identity import workspace_shapes, workspaces
from service.identity.auth import Actor
from service.inbox import conversations, outbound
from service.inbox import shapes as inbox
from service.kit import shapes
from service.kit.errors import Forbidden, ServiceError, Unauthorized
from service.kit.pagination import Page
from service.kit.settings import VERSION, Settings
from service.kit.shapes import page_of
from service.posts import ops as posts
from service.posts import shapes as post
from service.sequences import ops as sequences
from service.sequences import shapes as sequence
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


TOOLS: list[ToolDef] = [
    ToolDef("list_workspaces", workspaces.list_workspaces, "read",
            "The workspace this connection acts in, with its profiles (brands).",
            model=workspace_shapes.NoArguments, output=workspace_shapes.WorkspaceList),
    ToolDef("list_accounts", accounts.list_accounts, "read",
            "Connected platform accounts of the workspace, filtered by profile, platform or status; paginated.",
            model=account_shapes.AccountQuery, output=page_of(account_shapes.Account)),
    ToolDef("get_publish_options", accounts.publish_options, "read",
            "What the platform makes the creator choose before publishing to this account (TikTok: privacy "
            "levels, comment/duet/stitch switches, maximum video length; fetched live).",
            model=account_shapes.AccountRef, output=account_shapes.PublishOptions, waits=True),
    ToolDef("create_post", posts.create, "write",
            "Create a post for one or more accounts: a draft (no scheduledFor, no publishNow), scheduled "
            "(scheduledFor, with an offset or a timezone) or published now (publishNow: true). A target's content "
            "replaces the post's on that platform; options carry platform choices (TikTok privacyLevel from "
            "get_publish_options; X thread; Instagram mediaType STORIES/REELS; YouTube publishAt, thumbnailMediaId; "
            "firstComment on Instagram, Facebook, LinkedIn and X). Each target is checked against its platform "
            "first (422 with details). "
            "Publishing reaches the public and cannot be undone from here.",
            model=post.PostIn, output=post.Post, destructive=True, waits=True),
    ToolDef("list_posts", posts.list_posts, "read",
            "Posts newest first, filtered by status, profile, account, platform or source (service, external, "
            "all); each with its targets' status and platform ids; paginated.",
            model=post.PostQuery, output=page_of(post.Post)),
    ToolDef("get_post", posts.get, "read",
            "One post with each target's status (queued, publishing, published, failed, unknown), platform post "
            "id, URL and error.",
            model=post.PostRef, output=post.Post),
    ToolDef("list_conversations", conversations.list_conversations, "read",
            "The inbox: conversations newest first, filtered by platform (upper case: INSTAGRAM, WHATSAPP, "
            "TIKTOK, TELEGRAM, YOUTUBE, X), account or profile; paginated.",
            model=inbox.ConversationQuery, output=page_of(inbox.Conversation)),
    ToolDef("get_messages", conversations.get_messages, "read",
            "The messages of one conversation, oldest first; paginated.",
            model=inbox.MessagesQuery, output=page_of(inbox.Message)),
    ToolDef("start_conversation", conversations.start_conversation, "write",
            "Start a conversation with a contact on an account, or get the one that already exists for that "
            "contact. Give contactHandle or externalConversationId.",
            model=inbox.StartConversation, output=inbox.StartedConversation, idempotent=True,
            render=lambda started: {**started.conversation.dump(), "created": started.created}),
    ToolDef("send_message", outbound.send_message, "write",
            "Send a direct message to the contact of a conversation. Reaches a real person: it cannot be unsent. "
            "The result's status is `sent`, or `pending` when the platform asked to slow down (it is sent "
            "later, once).",
            model=inbox.SendMessageTo, output=inbox.Message, destructive=True, waits=True,
            render=lambda sent: sent.record),
    ToolDef("create_broadcast", broadcasts.create, "write",
            "Create a broadcast: one message (with an optional link button) to many conversations of one account. "
            "Audience: conversationIds (wins), else contacts active within activeWithinDays, else everyone; "
            "resolved when sending starts. Draft without scheduledFor (with an offset, or a wall time plus an IANA "
            "timezone) or sendNow; sendNow reaches real people at once.",
            model=bc.CreateBroadcast, output=bc.Broadcast, destructive=True),
    ToolDef("list_broadcasts", broadcasts.list_broadcasts, "read",
            "Broadcasts of the workspace, newest first, filtered by status or account, with their counts; paginated.",
            model=bc.BroadcastQuery, output=page_of(bc.Broadcast)),
    ToolDef("update_broadcast", broadcasts.update, "write",
            "Change a draft or scheduled broadcast (any field but accountId; omitted ones keep their value, null "
            "clears one). A sending or finished broadcast cannot change (conflict).",
            model=bc.UpdateBroadcastTool, output=bc.Broadcast, partial=True),
    ToolDef("send_broadcast_now", broadcasts.send_now, "write",
            "Start a draft or scheduled broadcast now. Reaches real people: it cannot be unsent.",
            model=bc.BroadcastRef, output=bc.Broadcast, destructive=True),
    ToolDef("cancel_broadcast", broadcasts.cancel, "write",
            "Cancel a scheduled or sending broadcast: recipients not yet messaged are skipped.",
            model=bc.BroadcastRef, output=bc.Broadcast, destructive=True, idempotent=True),
    ToolDef("get_follower_analytics", analytics.follower_analytics, "read",
            "Follower counts over time per account, from daily snapshots: one point per day, week (Monday) or "
            "month (first day) of the window fromDate..toDate (YYYY-MM-DD, default the last 30 days, at most 366), "
            "with each point's change, the window's growth and growthPercent, and the account's posts of the "
            "window (count, likes, comments, shares) of the source asked (all, service, external). Filter by "
            "profileId, accountId or platform (lower case).",
            model=analytics_shapes.FollowersQuery, output=analytics_shapes.FollowerAnalytics),
    ToolDef("create_sequence", sequences.create, "write",
            "Create a sequence: 1 to 20 timed follow-up DMs (delayMinutes after the previous step) into which "
            "conversations are enrolled by a trigger (conversation_started, comment_automation with automationId, "
            "story_reply filtered by keywords and matchType) or by hand (manual, enroll_in_sequence).",
            model=sequence.CreateSequence, output=sequence.Sequence),
    ToolDef("update_sequence", sequences.update, "write",
            "Change a sequence's fields (the ones left out keep their value). status paused holds every enrolment; "
            "active again sends the steps that fell due, in order.",
            model=sequence.UpdateSequenceTool, output=sequence.Sequence, partial=True),
    ToolDef("enroll_in_sequence", sequences.enroll, "write",
            "Enrol a conversation of the sequence's account in the sequence; its steps will reach the contact. A "
            "conversation already active in the sequence gets its enrolment back.",
            model=sequence.EnrollTool, output=sequence.Enrollment, destructive=True, idempotent=True),
    ToolDef("list_comment_automations", automations.list_automations, "read",
            "Comment automations (a private-reply DM and optional public reply for matching comments), filtered by "
            "account or status, each with its stats; paginated.",
            model=automation.AutomationQuery, output=page_of(automation.CommentAutomation)),
    ToolDef("create_comment_automation", automations.create, "write",
            "Create a comment automation on an Instagram or Facebook account: comments on the watched posts "
            "(mediaIds; empty: every post) that match keywords under matchType get dmText as a private reply "
            "(with an optional button) and, when set, publicReplyText under the comment. It reaches real people.",
            model=automation.CreateCommentAutomation, output=automation.CommentAutomation, destructive=True),
    ToolDef("update_comment_automation", automations.update, "write",
            "Change a comment automation's fields (the ones left out keep their value); dmButtonLabel \"\" or "
            "dmButtonUrl \"\" removes the button; status paused makes it ignore comments.",
            model=automation.UpdateCommentAutomationTool, output=automation.CommentAutomation, partial=True),
]


# --- building the tools ---------------------------------------------------------------------------


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


def make_tool(definition: ToolDef) -> Callable[..., Any]:
    async def tool(**arguments: Any) -> CallToolResult:
        try:
            actor = _actor(definition)
            read = definition.scope == "read"
            # A tool that calls a platform (`waits`) runs its own short transactions around the
            # call, as its /v1 operation does: never SQLite's one write lock across the network.
            result = await requests.run(lambda _on_loop: _execute(definition, actor, arguments),
                                        transaction="read" if read else "write", on_loop=read,
                                        waits=definition.waits)
            return _structured(result)
        except ServiceError as error:
            return error_result(error)
        except Exception:
            log.exception("tool %s failed", definition.name)
            return error_result(ServiceError())

    tool.__name__ = definition.name
    return tool


def _self_contained(model: type[BaseModel], mode: str) -> dict[str, Any]:
    return shapes.json_schema(model, mode=mode, ref_template="#/$defs/{model}")


def build_tools(definitions: list[ToolDef] | None = None) -> list[Tool]:
    built = []
    for definition in definitions or TOOLS:
        read = definition.scope == "read"
        built.append(Tool(
            fn=make_tool(definition), name=definition.name, title=None, is_async=True, context_kwarg=None,
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


def build_mcp(settings: Settings) -> MCPServer:
    """One MCP server for one app: its session manager can run only once."""
    mcp: MCPServer = MCPServer(
        tools=build_tools(),
        name="switchboard",
        version=VERSION,
        instructions="Publish posts and exchange direct messages across social platforms in the workspace "
        "that the person chose when connecting. Arguments use the /v1 API's camelCase names.",
        token_verifier=StorageTokenVerifier(),
        auth=AuthSettings(
            # Plain strings, not the AnyHttpUrl the signature names: pydantic would add a trailing slash
            # to the issuer, and the SDK's own client then refuses it as a mismatch.
            issuer_url=settings.base_url,  # type: ignore[arg-type]
            resource_server_url=settings.base_url + "/mcp",  # type: ignore[arg-type]
            required_scopes=None,  # per tool: `read` for read tools, `write` for the others
            validate_token_resource=True,
        ),
    )
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
    )
    endpoint = next(route.app for route in app.routes if isinstance(route, Route) and route.path == "/mcp")
    for layer in reversed(app.user_middleware):
        endpoint = layer.cls(endpoint, *layer.args, **layer.kwargs)
    return endpoint
