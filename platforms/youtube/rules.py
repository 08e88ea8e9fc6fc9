"""YouTube's rules: a video's scheduled `publishAt` (private until then) and its thumbnail (a JPEG or
PNG of at most 2 MB); its inbox, public comment threads, read by polling `commentThreads.list` on the
project's daily quota (1 unit a page), and the recently active threads again by id."""

from __future__ import annotations

import datetime as dt
from typing import Any

from kit import clock
from kit.errors import FieldProblem
from kit.shapes import OUT_OF_BOUNDS, bounded_utc
from platforms.inbound import InboundEvent
from platforms.rules import InboxRules, OptionField, PostDraft, PostRules
from platforms.youtube import inbound

THUMBNAIL_MAX_BYTES = 2 * 1024 * 1024  # thumbnails.set: JPEG or PNG, 2 MB at most
# commentThreads.list costs 1 unit a page, whatever its parts (the quota table,
# https://developers.google.com/youtube/v3/determine_quota_cost: "commentThreads list 1").
POLL_UNITS = 1


class YouTubePostRules(PostRules):
    option_fields = (
        OptionField("title", "YouTube title"),
        OptionField("privacyStatus", "YouTube visibility", "select",
                    (("public", "Public"), ("unlisted", "Unlisted"), ("private", "Private")), empty="Platform default"),
        OptionField("publishAt", "YouTube publish time", "local_time",
                    hint="(private until then; in the time zone below)"),
    )
    def option_problems(self, draft: PostDraft) -> list[FieldProblem]:
        problems: list[FieldProblem] = []
        options, where = draft.options, draft.options_field
        if "publishAt" in options:
            problems += _publish_at_problems(where, options)
        if "thumbnailMediaId" in options:
            row = draft.option_media.get(str(options["thumbnailMediaId"]))
            if row is None:
                problems.append(FieldProblem(f"{where}.thumbnailMediaId", "is not a completed media of this "
                                             "workspace"))
            elif row.content_type not in ("image/jpeg", "image/png") or row.size > THUMBNAIL_MAX_BYTES:
                problems.append(FieldProblem(f"{where}.thumbnailMediaId", "a YouTube thumbnail is a JPEG or PNG of "
                                             "at most 2 MB"))
        return problems


def _publish_at_problems(where: str, options: dict[str, Any]) -> list[FieldProblem]:
    problems: list[FieldProblem] = []
    value = options["publishAt"]
    moment = None
    if isinstance(value, str) and len(value) <= 64:
        try:
            moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            moment = None
    if moment is None or moment.tzinfo is None:
        problems.append(FieldProblem(f"{where}.publishAt", "must be an ISO 8601 time with its offset "
                                     "(2026-12-01T09:30:00Z)"))
    elif (instant := bounded_utc(moment)) is None:
        problems.append(FieldProblem(f"{where}.publishAt", OUT_OF_BOUNDS))
    elif instant <= clock.now():
        problems.append(FieldProblem(f"{where}.publishAt", "must be in the future"))
    if options.get("privacyStatus", "private") != "private":
        problems.append(FieldProblem(f"{where}.privacyStatus", "a video with publishAt is private until then: "
                                     "leave privacyStatus out or make it private"))
    return problems


class YouTubeInboxRules(InboxRules):
    poll = "pages"
    page_units = POLL_UNITS
    rereads_recent_threads = True

    def parse_page(self, platform_account_id: str, page: dict[str, Any]) -> list[InboundEvent]:
        return inbound.parse_threads(platform_account_id, page)

    def reached(self, page: dict[str, Any], cursor: str) -> bool:
        # Threads are listed newest first by their top-level comment: one started before the cursor
        # means older threads follow.
        for event in inbound.parse_threads("", page):
            if event.parent_comment_id is None and self.position(event) < cursor:
                return True
        return False
