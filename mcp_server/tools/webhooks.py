"""MCP tools: outbound webhook endpoints."""

from __future__ import annotations

from kit.shapes import PageQuery, page_of
from mcp_server.tooling import ToolDef
from service.webhooks import ops as webhooks
from service.webhooks import shapes as webhook

TOOLS: list[ToolDef] = [
    ToolDef("list_webhooks", webhooks.list_endpoints, "read",
            "The workspace's webhook endpoints (URL, events, enabled), oldest first, never their secrets; paginated.",
            model=PageQuery, output=page_of(webhook.Webhook), role="admin", needs=webhooks.MANAGE_WEBHOOKS),
    ToolDef("create_webhook", webhooks.create, "write",
            "Register an https endpoint that receives the workspace's events (all of them, or the names in events; "
            "see the event catalogue), signed. The answer's secret is shown this once: keep it to verify the "
            "signatures.",
            model=webhook.CreateWebhook, output=webhook.WebhookCreated, waits=True, role="admin",
            needs=webhooks.MANAGE_WEBHOOKS),
    ToolDef("delete_webhook", webhooks.delete, "write",
            "Delete a webhook endpoint with its delivery log; deliveries not yet sent are dropped.",
            model=webhook.WebhookRef, output=webhook.WebhookDeleted, destructive=True, role="admin",
            needs=webhooks.MANAGE_WEBHOOKS),
]
