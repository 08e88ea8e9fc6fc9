"""MCP tools: follower analytics."""

from __future__ import annotations

from mcp_server.tooling import ToolDef
from service.analytics import ops as analytics
from service.analytics import shapes as analytics_shapes

TOOLS: list[ToolDef] = [
    ToolDef("get_follower_analytics", analytics.follower_analytics, "read",
            "Follower counts over time per account, from daily snapshots: one point per day, week (Monday) or "
            "month (first day) of the window fromDate..toDate (YYYY-MM-DD, default the last 30 days, at most 366), "
            "with each point's change, the window's growth and growthPercent, and the account's posts of the "
            "window (count, likes, comments, shares) of the source asked (all, service, external). Filter by "
            "profileId, accountId or platform (lower case).",
            model=analytics_shapes.FollowersQuery, output=analytics_shapes.FollowerAnalytics),
]
