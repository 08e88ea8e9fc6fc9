"""MCP tools: comment automations."""

from __future__ import annotations

from kit.shapes import page_of
from mcp_server.tooling import ToolDef
from service.automations import ops as automations
from service.automations import shapes as automation

TOOLS: list[ToolDef] = [
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
