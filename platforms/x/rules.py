"""X's rules: a post's text weighed X's way (a link 23, most non-Latin characters and emoji 2) to 280,
one video alone or up to 4 images, who may reply, a thread of replies, a first comment (a reply); its
DMs come by the Account Activity webhook where subscribed, else by polling `GET /2/dm_events`."""

from __future__ import annotations

from typing import Any

from kit.errors import FieldProblem
from platforms.base import Capabilities
from platforms.inbound import InboundEvent
from platforms.rules import InboxRules, OptionField, PostDraft, PostRules
from platforms.x import inbound
from platforms.x.text import MAX_WEIGHTED_LENGTH, weighted_length

MAX_THREAD_POSTS = 25  # the first post and up to 24 replies
REPLY_SETTINGS = ("everyone", "following", "mentionedUsers", "subscribers", "verified")
WEIGHED = "(a link counts 23, most non-Latin characters and emoji 2)"


class XPostRules(PostRules):
    first_comment_limit = MAX_WEIGHTED_LENGTH
    option_fields = (OptionField("thread", "Thread parts", "parts",
                                 hint="(the posts after the first, separated by a blank line)"),)
    text_unit = "weighted characters"

    def text_size(self, text: str) -> int:
        return weighted_length(text)

    def following_posts(self, options: dict[str, Any]) -> list[str]:
        thread = options.get("thread")
        return [part for part in thread if isinstance(part, str)] if isinstance(thread, list) else []

    def text_limit(self, capabilities: Capabilities, *, with_media: bool) -> int | None:
        return MAX_WEIGHTED_LENGTH

    def text_problems(self, draft: PostDraft, capabilities: Capabilities) -> list[FieldProblem]:
        weight = weighted_length(draft.text)
        if weight <= MAX_WEIGHTED_LENGTH:
            return []
        return [FieldProblem(f"{draft.where}.content", f"weighs {weight} of X's {MAX_WEIGHTED_LENGTH} {WEIGHED}")]

    def check(self, draft: PostDraft) -> list[FieldProblem]:
        # X's own options are read before its first comment.
        problems = self.media_problems(draft) + self.option_problems(draft)
        if "firstComment" in draft.options:
            problems += self.first_comment_problems(draft)
        return problems

    def media_problems(self, draft: PostDraft) -> list[FieldProblem]:
        if draft.videos and len(draft.media) > 1:
            return [FieldProblem("mediaIds", "an X post takes one video alone, or up to 4 images")]
        return []

    def option_problems(self, draft: PostDraft) -> list[FieldProblem]:
        problems: list[FieldProblem] = []
        options, where = draft.options, draft.options_field
        if "replySettings" in options and options["replySettings"] not in REPLY_SETTINGS:
            problems.append(FieldProblem(f"{where}.replySettings", "must be one of " + ", ".join(REPLY_SETTINGS)))
        if "thread" in options:
            problems += thread_problems(f"{where}.thread", options["thread"])
        return problems


def thread_problems(field: str, thread: Any) -> list[FieldProblem]:
    if not isinstance(thread, list) or not thread or not all(isinstance(part, str) for part in thread):
        return [FieldProblem(field, "must be a list of texts: the posts after the first, each replying to the "
                             "previous one")]
    if len(thread) > MAX_THREAD_POSTS - 1:
        return [FieldProblem(field, f"takes at most {MAX_THREAD_POSTS - 1} posts after the first")]
    problems = []
    for index, part in enumerate(thread):
        weight = weighted_length(part)
        if not part.strip():
            problems.append(FieldProblem(f"{field}[{index}]", "must not be empty"))
        elif weight > MAX_WEIGHTED_LENGTH:
            problems.append(FieldProblem(f"{field}[{index}]", f"weighs {weight} of X's {MAX_WEIGHTED_LENGTH} "
                                         f"{WEIGHED}"))
    return problems


class XInboxRules(InboxRules):
    poll = "pages"
    rests_while_webhook_heard = True

    def parse_page(self, platform_account_id: str, page: dict[str, Any]) -> list[InboundEvent]:
        return inbound.parse_dm_events(platform_account_id, page)

    def next_token(self, page: dict[str, Any]) -> str | None:
        token = (page.get("meta") or {}).get("next_token")
        return str(token) if token else None

    def position(self, event: InboundEvent) -> str:
        # DM event ids grow with time.
        return (event.platform_message_id or "").rjust(24, "0")

    def after(self, event: InboundEvent, cursor: str | None) -> bool:
        return cursor is None or self.position(event) > cursor
