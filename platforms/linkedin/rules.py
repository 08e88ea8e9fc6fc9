"""LinkedIn's rules: one video alone (75 KB to 500 MB) or up to 20 images; a first comment of at most
1,250 characters."""

from __future__ import annotations

from kit.errors import FieldProblem
from platforms.rules import PostDraft, PostRules

MAX_IMAGES = 20  # a multiImage post: 2 to 20 images
VIDEO_MIN_BYTES = 75 * 1024  # the Videos API takes 75 KB to 500 MB
VIDEO_MAX_BYTES = 500 * 1024 * 1024


class LinkedInPostRules(PostRules):
    first_comment_limit = 1250
    fold_at = 210  # about what the feed shows before "… see more" (less on a phone)

    def option_problems(self, draft: PostDraft) -> list[FieldProblem]:
        problems: list[FieldProblem] = []
        if draft.videos and len(draft.media) > 1:
            problems.append(FieldProblem("mediaIds", "a LinkedIn post takes one video alone, or up to 20 images"))
        if any(not VIDEO_MIN_BYTES <= video.size <= VIDEO_MAX_BYTES for video in draft.videos):
            problems.append(FieldProblem("mediaIds", "a LinkedIn video must be 75 KB to 500 MB"))
        return problems
