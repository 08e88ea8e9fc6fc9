"""Facebook Pages' rules: one video alone, or images; a first comment of at most 8,000 characters."""

from __future__ import annotations

from kit.errors import FieldProblem
from platforms.rules import PostDraft, PostRules


class FacebookPostRules(PostRules):
    first_comment_limit = 8000

    def media_problems(self, draft: PostDraft) -> list[FieldProblem]:
        if draft.videos and len(draft.media) > 1:
            return [FieldProblem("mediaIds", "a Facebook post takes one video alone, or images")]
        return []
