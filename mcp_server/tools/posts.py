"""MCP tools: posts."""

from __future__ import annotations

from kit.shapes import page_of
from mcp_server import confirmations
from mcp_server.tooling import ToolDef
from service.posts import approvals, importing, publishing
from service.posts import ops as posts
from service.posts import shapes as post

TOOLS: list[ToolDef] = [
    ToolDef("create_post", posts.create, "write",
            "Create a post for one or more accounts: a draft (no scheduledFor, no publishNow), scheduled "
            "(scheduledFor, with an offset or a timezone) or published now (publishNow: true). A target's content "
            "replaces the post's on that platform; options carry platform choices (TikTok privacyLevel from "
            "get_publish_options; X thread; Instagram mediaType STORIES/REELS; YouTube publishAt, thumbnailMediaId; "
            "firstComment on Instagram, Facebook, LinkedIn and X). Each target is checked against its platform "
            "first (422 with details). "
            "Publishing reaches the public and cannot be undone from here.",
            model=post.PostIn, output=post.Post, destructive=True, waits=True, confirm=confirmations.create_post),
    ToolDef("list_posts", posts.list_posts, "read",
            "Posts newest first, filtered by status, profile, account, platform or source (service, external, "
            "all), and by a window of instants from/to (posts scheduled or published in [from, to), for a "
            "calendar); each with its targets' status and platform ids; paginated.",
            model=post.PostQuery, output=page_of(post.Post)),
    ToolDef("get_post", posts.get, "read",
            "One post with each target's status (queued, publishing, published, failed, unknown), platform post "
            "id, URL and error.",
            model=post.PostRef, output=post.Post),
    ToolDef("delete_post", posts.delete, "write",
            "Delete a post. A draft, scheduled (cancelled: it will not publish) or failed post goes at once. A "
            "published or partial post is refused (conflict) unless fromPlatforms is true, which also deletes it "
            "on each platform that lets apps delete posts; what each platform did is in the answer.",
            model=post.DeletePostTool, output=post.PostDeleted, destructive=True, waits=True,
            confirm=confirmations.delete_post),
    ToolDef("retry_post", publishing.retry, "write",
            "Publish a post's failed targets again; targets already published are never published twice. "
            "Nothing failed → conflict.",
            model=post.PostRef, output=post.Post, destructive=True),
    ToolDef("import_posts_csv", importing.import_for_tool, "write",
            "Import posts from CSV text: a header row with content and accounts (account ids separated by spaces), "
            "optionally scheduledFor, timezone, mediaUrls (https URLs separated by spaces), firstComment; at most "
            "1,000 rows. dryRun true checks every row and saves nothing (the answer lists each row's errors); "
            "without it every row becomes a post (a draft, or scheduled) or, if any row is invalid, none "
            "(validation_failed with the same errors). Scheduled posts will be published.",
            model=post.ImportCsvTool, output=post.ImportOutcome, destructive=True, waits=True),
    ToolDef("approve_post", approvals.approve, "write",
            "Approve a member's post waiting for approval (pending_approval): it goes on as it would have, "
            "published now or at its time (now if that passed meanwhile). Owners and admins. Not waiting → conflict.",
            model=post.PostRef, output=post.Post, role="admin", needs=approvals.REVIEW),
    ToolDef("reject_post", approvals.reject, "write",
            "Reject a member's post waiting for approval, with a reason the member reads: it becomes rejected and "
            "is never published. Owners and admins. Not waiting → conflict.",
            model=post.PostReason, output=post.Post, role="admin", needs=approvals.REVIEW),
]
