"""MCP tools: the inbox: conversations and direct messages."""

from __future__ import annotations

from kit.shapes import page_of
from mcp_server import confirmations
from mcp_server.tooling import ToolDef
from service.inbox import conversations, outbound
from service.inbox import shapes as inbox

TOOLS: list[ToolDef] = [
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
            "Send a direct message to the contact of a conversation: text, optionally a link button (buttonLabel "
            "with buttonUrl) and, on Telegram and WhatsApp, one attachment (mediaIds from list_media or "
            "import_media); on WhatsApp a template instead of text. Reaches a real person: it cannot be unsent. "
            "The result's status is `sent`, or `pending` when the platform asked to slow down (it is sent "
            "later, once).",
            model=inbox.SendMessageTo, output=inbox.Message, destructive=True, waits=True,
            render=lambda sent: sent.record, confirm=confirmations.send_message),
]
