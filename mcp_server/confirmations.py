"""What an assistant asks the person before a tool reaches people, in plain words.

A tool that messages or publishes to people (or deletes what they see) declares it: its `ToolDef`
names one of the functions below as `confirm`. Each reads the service's own data (the broadcast's
audience counted as the fan-out will count it, the conversation's contact, the accounts a post goes
to) and answers the question to put to the person, or None when this call reaches nobody (a draft,
a post scheduled for later, a post to a single account). Each runs inside a read transaction,
with the arguments already checked against the tool's model.
"""

from __future__ import annotations

from typing import Any

from service.accounts import ops as accounts
from service.broadcasts import audience
from service.broadcasts import ops as broadcasts
from service.identity.auth import Actor
from service.inbox import conversations
from service.posts import ops as posts

PLATFORM_NAMES = {
    "instagram": "Instagram", "whatsapp": "WhatsApp", "tiktok": "TikTok", "telegram": "Telegram",
    "youtube": "YouTube", "x": "X", "facebook": "Facebook", "meta_ads": "Meta Ads", "linkedin": "LinkedIn",
}
QUOTE_LENGTH = 60


def platform_name(platform: str) -> str:
    return PLATFORM_NAMES.get(platform, platform)


def quoted(text: str | None) -> str:
    """A text as the question shows it: in quotes, on one line, cut at a readable length."""
    line = " ".join((text or "").split())
    return f"'{line[:QUOTE_LENGTH - 1]}…'" if len(line) > QUOTE_LENGTH else f"'{line}'"


def _people(count: int, platform: str) -> str:
    return f"{count:,} {platform_name(platform)} contact{'' if count == 1 else 's'}"


def _audience_question(actor: Actor, *, name: str, account_id: str, active_within_days: int | None,
                       conversation_ids: list[str] | None, template: bool) -> str:
    account = accounts.get_row(actor=actor, account_id=account_id)
    found = audience.preview(actor=actor, account_id=account_id, active_within_days=active_within_days,
                             conversation_ids=conversation_ids, template=template)
    question = f"Send {quoted(name)} to {_people(found.reached, account.platform)} now?"
    if found.outside_window:
        question += (f" ({found.outside_window:,} more wrote more than {found.window_hours} hours ago and will be "
                     "skipped.)")
    return question + " It cannot be unsent."


def send_broadcast_now(actor: Actor, arguments: Any) -> str | None:
    broadcast = broadcasts.get(actor=actor, broadcast_id=arguments.broadcast_id)
    return _audience_question(actor, name=broadcast.name, account_id=broadcast.account_id,
                              active_within_days=broadcast.audience.active_within_days,
                              conversation_ids=broadcast.audience.conversation_ids,
                              template=broadcast.template is not None)


def create_broadcast(actor: Actor, arguments: Any) -> str | None:
    if not getattr(arguments, "send_now", None):
        return None  # a draft or a scheduled broadcast: nobody is reached by this call
    chosen = getattr(arguments, "audience", None)
    return _audience_question(actor, name=arguments.name, account_id=arguments.account_id,
                              active_within_days=getattr(chosen, "active_within_days", None),
                              conversation_ids=getattr(chosen, "conversation_ids", None),
                              template=getattr(arguments, "template", None) is not None)


def send_message(actor: Actor, arguments: Any) -> str | None:
    conversation = conversations.get_conversation(actor=actor, conversation_id=arguments.conversation_id)
    who = conversation.contact_name or (f"@{conversation.contact_handle}" if conversation.contact_handle
                                        else "this contact")
    template = getattr(arguments, "template", None)
    what = quoted(arguments.text) if getattr(arguments, "text", None) else (
        f"the template {quoted(template.name)}" if template is not None else "this message")
    return f"Send {what} to {who} on {platform_name(conversation.platform)} now? It cannot be unsent."


def create_post(actor: Actor, arguments: Any) -> str | None:
    if not getattr(arguments, "publish_now", None) or len(arguments.targets) < 2:
        return None  # a draft, a scheduled or queued post, or one account: not asked
    names = []
    for target in arguments.targets:
        account = accounts.get_row(actor=actor, account_id=target.account_id)
        handle = account.username or account.display_name
        names.append(f"{platform_name(account.platform)}" + (f" {handle}" if handle else ""))
    return (f"Publish {quoted(arguments.content)} now to {len(names)} accounts ({', '.join(names)})? "
            "It goes public at once.")


def delete_post(actor: Actor, arguments: Any) -> str | None:
    post = posts.get(actor=actor, post_id=arguments.post_id)
    live = sorted({platform_name(t.platform) for t in post.targets if t.platform_post_id})
    question = f"Delete the post {quoted(post.content)}?"
    if getattr(arguments, "from_platforms", None) and live:
        question += f" It is also taken down from {', '.join(live)}, where people can no longer see it."
    return question + " This cannot be undone."
