"""Every MCP tool, one module per domain; `mcp_server.tooling` says what a tool is and how one runs."""

from __future__ import annotations

from mcp_server.tooling import ToolDef
from mcp_server.tools import (
    accounts,
    analytics,
    automations,
    broadcasts,
    inbox,
    media,
    posts,
    sequences,
    webhooks,
    workspaces,
)

# In the order `tools/list` shows them.
TOOLS: list[ToolDef] = [
    *workspaces.TOOLS, *accounts.TOOLS, *posts.TOOLS, *media.TOOLS, *inbox.TOOLS, *broadcasts.TOOLS,
    *analytics.TOOLS, *sequences.TOOLS, *automations.TOOLS, *webhooks.TOOLS,
]
