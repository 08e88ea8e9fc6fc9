"""MCP tools: connected accounts."""

from __future__ import annotations

from kit.shapes import page_of
from mcp_server.tooling import ToolDef
from service.accounts import ops as accounts
from service.accounts import shapes as account_shapes

TOOLS: list[ToolDef] = [
    ToolDef("list_accounts", accounts.list_accounts, "read",
            "Connected platform accounts of the workspace, filtered by profile, platform or status; paginated.",
            model=account_shapes.AccountQuery, output=page_of(account_shapes.Account)),
    ToolDef("get_publish_options", accounts.publish_options, "read",
            "What the platform makes the creator choose before publishing to this account (TikTok: privacy "
            "levels, comment/duet/stitch switches, maximum video length; fetched live).",
            model=account_shapes.AccountRef, output=account_shapes.PublishOptions, waits=True),
    ToolDef("list_templates", accounts.templates, "read",
            "A WhatsApp account's approved message templates (name, language, category, parameters), fetched live: "
            "a template is the only message that reaches a WhatsApp contact outside the 24 h window. Other "
            "platforms have none (validation_failed).",
            model=account_shapes.AccountRef, output=account_shapes.Templates, waits=True),
]
