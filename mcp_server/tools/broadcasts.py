"""MCP tools: broadcasts."""

from __future__ import annotations

from kit.shapes import page_of
from mcp_server import confirmations
from mcp_server.tooling import ToolDef
from service.broadcasts import ops as broadcasts
from service.broadcasts import shapes as bc

TOOLS: list[ToolDef] = [
    ToolDef("create_broadcast", broadcasts.create, "write",
            "Create a broadcast: one message (with an optional link button) to many conversations of one account. "
            "Audience: conversationIds (wins), else contacts active within activeWithinDays, else everyone; "
            "resolved when sending starts. Draft without scheduledFor (with an offset, or a wall time plus an IANA "
            "timezone) or sendNow; sendNow reaches real people at once. On WhatsApp, template {name, language, "
            "parameters} (see list_templates) instead of text reaches contacts outside the 24 h window too.",
            model=bc.CreateBroadcast, output=bc.Broadcast, destructive=True, waits=True,
            confirm=confirmations.create_broadcast),
    ToolDef("list_broadcasts", broadcasts.list_broadcasts, "read",
            "Broadcasts of the workspace, newest first, filtered by status or account, with their counts; paginated.",
            model=bc.BroadcastQuery, output=page_of(bc.Broadcast)),
    ToolDef("update_broadcast", broadcasts.update, "write",
            "Change a draft or scheduled broadcast (any field but accountId; omitted ones keep their value, null "
            "clears one). A sending or finished broadcast cannot change (conflict).",
            model=bc.UpdateBroadcastTool, output=bc.Broadcast, partial=True, waits=True),
    ToolDef("send_broadcast_now", broadcasts.send_now, "write",
            "Start a draft or scheduled broadcast now. Reaches real people: it cannot be unsent.",
            model=bc.BroadcastRef, output=bc.Broadcast, destructive=True, confirm=confirmations.send_broadcast_now),
    ToolDef("cancel_broadcast", broadcasts.cancel, "write",
            "Cancel a scheduled or sending broadcast: recipients not yet messaged are skipped.",
            model=bc.BroadcastRef, output=bc.Broadcast, destructive=True, idempotent=True),
]
