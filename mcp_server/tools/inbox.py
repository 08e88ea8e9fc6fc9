"""MCP tools: the inbox: conversations and direct messages."""

from __future__ import annotations

from kit.shapes import PageQuery, page_of
from mcp_server import confirmations
from mcp_server.tooling import ToolDef
from service.inbox import conversations, outbound, saved_replies, sharing
from service.inbox import shapes as inbox

TOOLS: list[ToolDef] = [
    ToolDef("list_conversations", conversations.list_conversations, "read",
            "The inbox: conversations newest first, filtered by platform (upper case: INSTAGRAM, WHATSAPP, "
            "TIKTOK, TELEGRAM, YOUTUBE, X), account, profile, status (open, resolved, snoozed), assigneeId "
            "(`none`: unassigned) or label, or searched with q (contact names, handles, message text); paginated.",
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
    ToolDef("update_conversation", sharing.update, "write",
            "The shared inbox: set a conversation's status (open, resolved, or snoozed with snoozedUntil), its "
            "assigneeId (a member's user id, or null) or its labels (the whole set). Only what is given changes.",
            model=inbox.UpdateConversationTool, output=inbox.Conversation, idempotent=True, partial=True),
    ToolDef("add_note", sharing.add_note, "write",
            "Add an internal note to a conversation, for the team: it is never sent to the contact.",
            model=inbox.AddNoteTool, output=inbox.Note),
    ToolDef("list_saved_replies", saved_replies.list_replies, "read",
            "The team's saved replies, by name. Send one with send_message's savedReplyId: its variables "
            "({{contact.name}}, {{contact.handle}}, {{account.name}}) are filled for the conversation.",
            model=PageQuery, output=page_of(inbox.SavedReply)),
]
