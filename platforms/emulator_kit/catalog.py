"""Every control endpoint of the sandbox with its body, as `GET /sandbox/` lists them and the API
reference (`/docs`) shows them. One table, so the listing, the reference and the routes agree."""

from __future__ import annotations

from typing import Any

# (method, path, platforms, body fields with their types, what it does)
CONTROLS: list[tuple[str, str, str, dict[str, str], str]] = [
    ("GET", "/sandbox/", "all", {}, "This list."),
    ("POST", "/sandbox/{platform}/accounts", "all",
     {"username?": "string", "name?": "string", "followers?": "integer", "personal?": "boolean (tiktok)",
      "appId?": "string (whatsapp)"},
     "Make a sandbox account and its credentials (TikTok `personal`: not a Business Account; WhatsApp `appId`: "
     "its token is of another Meta app)."),
    ("POST", "/sandbox/{platform}/inbound-message", "instagram, facebook, whatsapp, telegram, x, tiktok",
     {"accountId": "string", "from": "{id, handle?, name?}", "text": "string", "storyReply?": "boolean",
      "storyId?": "string", "timestamp?": "ISO 8601 or unix seconds", "deliveries?": "1..5"},
     "A contact sends a DM: the signed platform webhook is posted to /hooks/{platform} (X: when the account is "
     "subscribed to Account Activity, else it waits in GET /2/dm_events for the poll)."),
    ("POST", "/sandbox/{platform}/comment", "instagram, facebook, youtube",
     {"accountId": "string", "mediaId": "string (YouTube: the video)", "commentId?": "string",
      "parentId?": "string (a reply in that thread)", "from": "{id, handle?}", "text": "string",
      "timestamp?": "ISO 8601 or unix seconds", "deliveries?": "1..5"},
     "A comment on a post: delivered by webhook (Instagram, Facebook) or kept for commentThreads.list (YouTube)."),
    ("POST", "/sandbox/x/account-activity", "x", {"accountId": "string", "subscribed": "boolean"},
     "Subscribe the X account to Account Activity webhooks (its DMs come to /hooks/x), or not (they are polled)."),
    ("POST", "/sandbox/{platform}/echo", "instagram, facebook",
     {"accountId": "string", "to": "{id}", "text": "string", "appId?": "string"},
     "The account answers in the platform's own inbox: an echo webhook."),
    ("POST", "/sandbox/{platform}/receipt", "instagram, facebook, whatsapp",
     {"accountId": "string", "from": "{id}", "kind": "delivery | read", "messageIds": "[string]"},
     "Delivery or read receipts by webhook."),
    ("POST", "/sandbox/{platform}/native-post", "telegram, facebook",
     {"accountId": "string", "text": "string", "chatId?": "string"},
     "The account posts in the platform's own app; the platform tells the service by webhook."),
    ("GET", "/sandbox/{platform}/sent", "all", {"accountId?": "query"},
     "What the service sent to the platform, oldest first (kind dm, private_reply, public_reply, comment_reply, "
     "post, delete_post, ...), with the payload as the platform received it."),
    ("POST", "/sandbox/{platform}/followers", "all", {"accountId": "string", "followers": "integer"},
     "Set the follower count."),
    ("POST", "/sandbox/{platform}/latency", "all", {"milliseconds": "0..60000"}, "Delay every answer of the platform."),
    ("POST", "/sandbox/{platform}/faults", "all",
     {"accountId?": "string", "failNext": "integer", "status": "429 | 500 | 400", "retryAfter?": "seconds",
      "path?": "string"},
     "The next n calls fail so."),
    ("POST", "/sandbox/{platform}/processing", "all", {"seconds?": "number", "advanceSeconds?": "number"},
     "How long video media takes to process; move the emulator's clock on."),
    ("POST", "/sandbox/{platform}/expire-token", "all", {"accountId": "string", "includeRefresh?": "boolean"},
     "Expire the account's access tokens (and refresh tokens), TikTok messaging's grant's among them."),
    ("POST", "/sandbox/{platform}/age-tokens", "all", {"accountId": "string", "days": "number"},
     "The account's tokens lapse `days` sooner."),
    ("POST", "/sandbox/tiktok/posting-users", "tiktok", {"dailyCap": "integer"},
     "How many users an unaudited app may post for in 24 hours (none until set)."),
    ("POST", "/sandbox/youtube/quota", "youtube", {"dailyUnits": "integer", "dailyUploads": "integer"},
     "The project's daily quotas from now on: units (a list costs 1, a comment 50) and uploads (videos.insert's "
     "own bucket, 1 a call); no limit until set."),
]


def listing() -> list[dict[str, Any]]:
    return [{"method": method, "path": path, "platforms": platforms, "body": body, "description": text}
            for method, path, platforms, body, text in CONTROLS]


def markdown() -> str:
    """The controls as a Markdown list, for the API reference."""
    lines = ["Sandbox controls (with `SWITCHBOARD_SANDBOX=1`, no auth; `GET /sandbox/` lists them as JSON):", ""]
    for method, path, platforms, body, text in CONTROLS:
        fields = ", ".join(f"`{name}`" for name in body)
        lines.append(f"- `{method} {path}` ({platforms}){': ' + fields if fields else ''}. {text}")
    return "\n".join(lines) + "\n"
