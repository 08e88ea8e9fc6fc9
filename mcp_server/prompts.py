"""MCP prompts: the jobs people ask an assistant to do with Switchboard, ready to pick from a menu.

Each prompt is a user message that says what to do and with which tools; those about the inbox also
carry the inbox as it is now (read in the caller's workspace, as the `switchboard://inbox`
resource), so the assistant starts from the facts instead of a first round of calls. None of them
sends anything by itself: replies and posts are drafted for the person to approve.
"""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import MCPServer
from pydantic import Field

from mcp_server.resources import inbox, read_as_caller


def triage_text(current: str) -> str:
    return (
        "Triage my Switchboard inbox. For each conversation with unread messages, read its transcript "
        "(the resource switchboard://conversations/{id}, or get_messages) and sort it into: needs a reply "
        "from me today, can wait, or nothing to do (spam, a thank-you). Give one line per conversation: the "
        "contact, the platform, what they want, and the group. Do not send anything.\n\n"
        f"The inbox now:\n{current}"
    )


def drafts_text(current: str, tone: str) -> str:
    return (
        "Draft replies to my unread Switchboard conversations. For each conversation with unread messages, read "
        "its transcript (switchboard://conversations/{id}) and write a short reply in a "
        f"{tone} tone that answers what the contact asked; on Instagram, Facebook and WhatsApp say when the 24-hour "
        "window has closed (lastInboundAt), as a free-form reply can no longer reach them. Show me every draft "
        "with its conversation first; send one with send_message only after I approve it.\n\n"
        f"The inbox now:\n{current}"
    )


def plan_text(brief: str, start_date: str | None) -> str:
    starting = f"starting {start_date}" if start_date else "starting next Monday"
    return (
        f"Plan a week of social posts {starting} from this brief:\n\n{brief}\n\n"
        "First call list_accounts to see the connected accounts, and list_posts (from/to the week) to see what is "
        "already scheduled. Then propose, day by day, what to post on which accounts (content per platform within "
        "its limits, hashtags where they fit, the time in the account's audience's time zone). Show me the plan as "
        "a table. Once I approve it, create each post with create_post and scheduledFor (or addToQueue where the "
        "account has a posting queue); do not publish anything now."
    )


def analytics_text(profile_id: str | None) -> str:
    scope = f" for the profile {profile_id}" if profile_id else ""
    return (
        f"Write my weekly analytics summary{scope}. Call get_follower_analytics for the last 7 days (granularity "
        "day) and for the 7 days before, and list_posts for the same weeks (status published). Report per account: "
        "followers now, the change over the week and against the week before, the best posts by likes, comments "
        "and shares, and one or two things to try next week. Keep it under 300 words, with a short table."
    )


def register(mcp: MCPServer) -> None:
    @mcp.prompt(name="triage_inbox", title="Triage the inbox",
                description="Sort the unread conversations into what needs a reply today, what can wait and what "
                            "needs nothing; the inbox as it is now is included.")
    async def triage_inbox() -> str:
        return triage_text(await read_as_caller("The inbox", inbox))

    @mcp.prompt(name="draft_replies", title="Draft replies to unread conversations",
                description="Draft a reply to each unread conversation for you to approve before anything is sent.")
    async def draft_replies(
        tone: Annotated[str, Field(description="How the replies should sound, e.g. friendly, formal.",
                                   max_length=100)] = "friendly",
    ) -> str:
        return drafts_text(await read_as_caller("The inbox", inbox), tone)

    @mcp.prompt(name="plan_week_of_posts", title="Plan a week of posts",
                description="Turn a brief into a week of scheduled posts across the connected accounts, "
                            "approved by you before anything is created.")
    async def plan_week_of_posts(
        brief: Annotated[str, Field(description="What the week is about: the campaign, the offer, the tone.",
                                    min_length=1, max_length=5000)],
        startDate: Annotated[str | None, Field(description="The first day, YYYY-MM-DD.",
                                               max_length=10)] = None,
    ) -> str:
        return plan_text(brief, startDate)

    @mcp.prompt(name="weekly_analytics_summary", title="Weekly analytics summary",
                description="Followers, growth and the best posts of the last week, against the week before.")
    async def weekly_analytics_summary(
        profileId: Annotated[str | None, Field(description="Only this profile (prf_...).",
                                               max_length=64)] = None,
    ) -> str:
        await read_as_caller("The analytics", lambda actor: "")  # the read scope, as the tools it names need
        return analytics_text(profileId)
