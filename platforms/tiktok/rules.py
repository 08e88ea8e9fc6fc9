"""TikTok's rules: a post's privacy level is one the creator is offered now (`creator_info`, read
live); its Business Messaging comes by webhook, and one poll asks whether the account may use it."""

from __future__ import annotations

from kit.errors import FieldProblem
from platforms.rules import InboxRules, PostDraft, PostRules


class TikTokPostRules(PostRules):
    publish_options = "platform"

    def option_problems(self, draft: PostDraft) -> list[FieldProblem]:
        where = f"{draft.options_field}.privacyLevel"
        live = draft.live_options
        allowed = list((live or {}).get("privacyLevels") or [])
        if live is None:
            return [FieldProblem(where, "TikTok's publish options could not be read to check it; try again")]
        if not allowed and live.get("blockedReason"):
            return [FieldProblem(where, str(live["blockedReason"]))]
        if draft.options.get("privacyLevel") not in allowed:
            return [FieldProblem(where, "must be one of the account's publish options: " + ", ".join(allowed))]
        return []


class TikTokInboxRules(InboxRules):
    poll = "business_check"
