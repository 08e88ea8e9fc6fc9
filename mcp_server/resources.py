"""MCP resources: the inbox, a conversation's transcript and a post, read in the caller's workspace.

`switchboard://conversations/{id}` and `switchboard://posts/{id}` are resource templates (listed
by `resources/templates/list`); `switchboard://inbox` is a resource whose change a client follows
with `subscriptions/listen` (`mcp_server.inbox_watch`). Each read needs the `read` scope and sees
what the same credential sees through the tools; another workspace's id is not found.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError

from kit.errors import NotFound, ServiceError
from mcp_server.confirmations import platform_name
from mcp_server.inbox_watch import INBOX_URI
from mcp_server.tooling import actor_for
from service.identity.auth import Actor
from service.inbox import conversations
from service.posts import ops as posts
from storage import requests

TRANSCRIPT_PAGES = 5  # at most 500 messages: the latest ones
PAGE = 100


async def read_as_caller(what: str, work: Callable[[Actor], str]) -> str:
    try:
        actor = actor_for("read", what)
        return await requests.run(lambda _on_loop: work(actor), transaction="read", on_loop=True)
    except NotFound as missing:
        raise ResourceNotFoundError(missing.message) from None
    except ServiceError as error:
        raise ResourceError(error.message) from None


def _who(conversation: Any) -> str:
    handle = f"@{conversation.contact_handle}" if conversation.contact_handle else None
    if conversation.contact_name and handle:
        return f"{conversation.contact_name} ({handle})"
    return conversation.contact_name or handle or "the contact"


def _line(message: Any, contact: str) -> str:
    who = contact if message.direction == "inbound" else "You"
    at = message.created_at
    text = message.text
    if text is None and message.template is not None:
        text = f"[template {message.template.name}]"
    attachments = f" [{len(message.media_ids)} attachment(s)]" if message.media_ids else ""
    state = "" if message.direction == "inbound" or message.status == "sent" else f" ({message.status})"
    return f"[{at}] {who}: {text or '[no text]'}{attachments}{state}"


def transcript(actor: Actor, conversation_id: str) -> str:
    conversation = conversations.get_conversation(actor=actor, conversation_id=conversation_id)
    first = conversations.get_messages(actor=actor, conversation_id=conversation_id, page=1, limit=PAGE)
    numbers = range(max(1, first.pages - TRANSCRIPT_PAGES + 1), first.pages + 1)  # the latest pages
    pages = [first if number == 1 else conversations.get_messages(
        actor=actor, conversation_id=conversation_id, page=number, limit=PAGE) for number in numbers] or [first]
    contact = _who(conversation)
    head = [f"Conversation {conversation.id} with {contact} on {platform_name(conversation.platform)}",
            f"Status: {conversation.status}; unread: {conversation.unread_count}; {first.total} message(s)"]
    if first.pages > TRANSCRIPT_PAGES:
        head.append(f"(The latest {sum(len(page.items) for page in pages)} shown; get_messages pages through all.)")
    speaker = conversation.contact_name or (f"@{conversation.contact_handle}" if conversation.contact_handle
                                            else "Contact")
    lines = [_line(message, speaker) for page in pages for message in page.items]
    return "\n".join([*head, "", *lines]) + "\n"


def inbox(actor: Actor) -> str:
    page = conversations.list_conversations(actor=actor, page=1, limit=50)
    lines = [f"Inbox: {page.total} conversation(s), newest first"]
    for conversation in page.items:
        record: Any = conversation
        lines.append(f"- {record.id} · {platform_name(record.platform)} · {_who(record)} · "
                     f"unread {record.unread_count} · {record.status} · switchboard://conversations/{record.id}")
    return "\n".join(lines) + "\n"


def post(actor: Actor, post_id: str) -> str:
    return json.dumps(posts.get(actor=actor, post_id=post_id).model_dump(mode="json", by_alias=True),
                      ensure_ascii=False, indent=2)


def register(mcp: MCPServer) -> None:
    @mcp.resource(INBOX_URI, name="inbox", mime_type="text/plain",
                  description="The inbox: the 50 most recently active conversations, each with its platform, "
                              "contact, unread count and transcript URI. Subscribe to it (subscriptions/listen) to "
                              "be told when a message arrives.")
    async def read_inbox() -> str:
        return await read_as_caller("The inbox", inbox)

    @mcp.resource("switchboard://conversations/{conversation_id}", name="conversation", mime_type="text/plain",
                  description="A conversation's transcript, oldest message first (the latest 500 at most), with "
                              "the contact, the platform and each message's time.")
    async def read_conversation(conversation_id: str) -> str:
        return await read_as_caller("A conversation", lambda actor: transcript(actor, conversation_id))

    @mcp.resource("switchboard://posts/{post_id}", name="post", mime_type="application/json",
                  description="A post as get_post answers it: its content, media and each target's status, "
                              "platform post id and URL.")
    async def read_post(post_id: str) -> str:
        return await read_as_caller("A post", lambda actor: post(actor, post_id))
