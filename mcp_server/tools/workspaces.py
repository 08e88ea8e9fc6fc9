"""MCP tools: the workspace the connection acts in."""

from __future__ import annotations

from mcp_server.tooling import ToolDef
from service.identity import workspace_shapes, workspaces

TOOLS: list[ToolDef] = [
    ToolDef("list_workspaces", workspaces.list_workspaces, "read",
            "The workspace this connection acts in, with its profiles (brands).",
            model=workspace_shapes.NoArguments, output=workspace_shapes.WorkspaceList),
]
