"""Instagram's rules: a feed post, a story (one image or one video, no caption, no comments) or a reel
(one video, its cover and whether it shares to the feed); a first comment of at most 2,200 characters."""

from __future__ import annotations

from kit.errors import FieldProblem
from platforms.rules import OptionField, PostDraft, PostRules


class InstagramPostRules(PostRules):
    first_comment_limit = 2200
    fold_at = 125  # the feed shows a caption's first 125 characters, then "… more"
    option_fields = (OptionField("mediaType", "Instagram format", "select",
                                 (("REELS", "Reels"), ("STORIES", "Stories")), empty="Feed post"),)

    def first_comment_refusal(self, draft: PostDraft) -> str | None:
        return "a story takes no comments" if draft.options.get("mediaType") == "STORIES" else None

    def option_problems(self, draft: PostDraft) -> list[FieldProblem]:
        problems: list[FieldProblem] = []
        options, where, items = draft.options, draft.options_field, draft.media
        kind = options.get("mediaType")
        if "mediaType" in options and kind not in ("STORIES", "REELS"):
            problems.append(FieldProblem(f"{where}.mediaType", "must be STORIES or REELS (or left out: a feed post)"))
        if kind == "STORIES" and len(items) != 1:
            problems.append(FieldProblem("mediaIds", "an Instagram story is one image or one video"))
        if kind == "REELS" and (len(items) != 1 or not items[0].is_video):
            problems.append(FieldProblem("mediaIds", "an Instagram reel is one video"))
        for name in ("coverUrl", "shareToFeed"):
            if name in options and kind != "REELS":
                problems.append(FieldProblem(f"{where}.{name}", "is for reels only (mediaType REELS)"))
        cover = options.get("coverUrl")
        if "coverUrl" in options and not (isinstance(cover, str) and len(cover) <= 2048
                                          and cover.startswith(("https://", "http://"))):
            problems.append(FieldProblem(f"{where}.coverUrl", "must be an http(s) URL of an image Instagram can "
                                         "fetch"))
        if "shareToFeed" in options and not isinstance(options["shareToFeed"], bool):
            problems.append(FieldProblem(f"{where}.shareToFeed", "must be true or false"))
        return problems
