"""Meta Ads' rules: a creative names the Page it runs as and the link it leads to."""

from __future__ import annotations

from kit.errors import FieldProblem
from platforms.rules import PostDraft, PostRules


class MetaAdsPostRules(PostRules):
    def option_problems(self, draft: PostDraft) -> list[FieldProblem]:
        if draft.options.get("pageId") and draft.options.get("link"):
            return []
        return [FieldProblem(draft.options_field, "a Meta Ads creative needs pageId and link")]
