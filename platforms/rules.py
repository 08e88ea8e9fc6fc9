"""The rules that differ per platform beyond `Capabilities`' data: how a post's text is counted, what
a publish needs of its options and media, where a first comment goes, how the inbox is read.

Each platform declares its own in `platforms/<name>/rules.py` (subclasses of `PostRules` and
`InboxRules`) and its adapter carries them as `post_rules` and `inbox_rules`. The service asks them
and never branches on a platform's name; the defaults here are the common case. `Capabilities` stays
what `/v1/accounts` shows; these are what the service applies.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any, Literal

from kit.errors import FieldProblem
from platforms.base import Capabilities, Unsupported
from platforms.inbound import InboundEvent


@dataclass(frozen=True)
class MediaInfo:
    """A stored media as a platform's rules read it."""

    content_type: str
    size: int

    @property
    def is_video(self) -> bool:
        return self.content_type.startswith("video/")


@dataclass(frozen=True)
class PostDraft:
    """One target of a post as checked before anything is saved."""

    platform: str
    where: str  # the target's field prefix in a 422's details: `targets[1]`
    text: str
    media: tuple[MediaInfo, ...]
    options: dict[str, Any]
    # What the platform or the account's credentials say of publishing (`PostRules.publish_options`).
    live_options: dict[str, Any] | None = None
    # Media named by an option (a YouTube thumbnail's `thumbnailMediaId`), by id.
    option_media: dict[str, MediaInfo] = field(default_factory=dict)

    @property
    def videos(self) -> list[MediaInfo]:
        return [item for item in self.media if item.is_video]

    @property
    def options_field(self) -> str:
        return f"{self.where}.options"


@dataclass(frozen=True)
class OptionField:
    """One of a platform's post options as a person sets it in a form (the dashboard's composer).

    `kind`: `text`, `url`, `select` (`choices` of value and words, `empty` the words of no choice),
    `parts` (a list, one part a paragraph), `local_time` (an instant, typed in the form's time zone)
    or `live_select` (a select of the values the platform lists live, under `live_key` of
    `Adapter.publish_options`). `hint` is said after the label."""

    name: str  # the key in `targets[].options`
    label: str
    kind: Literal["text", "url", "select", "parts", "local_time", "live_select"] = "text"
    choices: tuple[tuple[str, str], ...] = ()
    empty: str = ""
    hint: str = ""
    live_key: str = ""


@dataclass(frozen=True)
class PreviewPart:
    """One post as a reader meets it (a thread on X is several): what shows first, what the
    platform folds behind its "more", and what lies past the limit (refused until shortened)."""

    shown: str
    folded: str = ""
    cut: str = ""


FIRST_COMMENT_PLATFORMS = "Instagram, Facebook, LinkedIn and X"


class PostRules:
    """How a platform checks a post beyond `Capabilities` (its text limits, media kinds and count)."""

    # The longest first comment (`options.firstComment`); None: the platform takes none.
    first_comment_limit: int | None = None
    # Where the options a post is checked against come from: the platform, read live before checking
    # (TikTok's creator info: `Adapter.publish_options`), the account's stored credentials
    # (`options_from_credentials`), or nowhere.
    publish_options: Literal["platform", "credentials"] | None = None
    text_unit = "characters"
    # The options a person sets in a form, in the order shown (a first comment is added after them
    # where the platform takes one: `form_fields`).
    option_fields: tuple[OptionField, ...] = ()

    # Where the platform's feed folds a long text behind "… more" (None: it shows the text whole).
    fold_at: int | None = None

    def preview(self, text: str, options: dict[str, Any], capabilities: Capabilities, *,
                with_media: bool) -> tuple[PreviewPart, ...]:
        """The post as the platform shows it: its text cut at the limit and folded where the feed
        folds it, then the posts that follow it (a thread), each counted the way `check` counts."""
        limit = self.text_limit(capabilities, with_media=with_media)
        return tuple(self._part(part, limit) for part in (text, *self.following_posts(options)))

    def following_posts(self, options: dict[str, Any]) -> list[str]:
        """The texts published after the post itself (X's thread); none by default."""
        return []

    def _part(self, text: str, limit: int | None) -> PreviewPart:
        kept = text
        if limit is not None and self.text_size(text) > limit:
            low, high = 0, len(text)  # the longest start of the text within the limit, by the platform's count
            while low < high:
                middle = (low + high + 1) // 2
                low, high = (middle, high) if self.text_size(text[:middle]) <= limit else (low, middle - 1)
            kept = text[:low]
        fold = self.fold_at
        if fold is not None and len(kept) > fold:
            return PreviewPart(kept[:fold], kept[fold:], text[len(kept):])
        return PreviewPart(kept, "", text[len(kept):])

    def form_fields(self) -> tuple[OptionField, ...]:
        if self.first_comment_limit is None:
            return self.option_fields
        return (*self.option_fields, OptionField("firstComment", "First comment"))

    def text_size(self, text: str) -> int:
        """How long `text` is as the platform counts it."""
        return len(text)

    def text_limit(self, capabilities: Capabilities, *, with_media: bool) -> int | None:
        return capabilities.post_limit(with_media=with_media)

    def text_problems(self, draft: PostDraft, capabilities: Capabilities) -> list[FieldProblem]:
        limit = self.text_limit(capabilities, with_media=bool(draft.media))
        if limit is None or len(draft.text) <= limit:
            return []
        what = "a caption with media" if draft.media and capabilities.post_caption_limit else "the text"
        return [FieldProblem(f"{draft.where}.content", f"must be at most {limit} characters on {draft.platform} "
                             f"({what})")]

    def options_from_credentials(self, credentials: dict[str, Any]) -> dict[str, Any] | None:
        return None

    def check(self, draft: PostDraft) -> list[FieldProblem]:
        """The platform's own rules of one target: its media mix, its first comment, its options."""
        problems = self.media_problems(draft)
        if "firstComment" in draft.options:
            problems += self.first_comment_problems(draft)
        return problems + self.option_problems(draft)

    def media_problems(self, draft: PostDraft) -> list[FieldProblem]:
        return []

    def option_problems(self, draft: PostDraft) -> list[FieldProblem]:
        return []

    def first_comment_refusal(self, draft: PostDraft) -> str | None:
        """Why this post takes no first comment at all (an Instagram story), or None."""
        return None

    def first_comment_problems(self, draft: PostDraft) -> list[FieldProblem]:
        where = f"{draft.options_field}.firstComment"
        text = draft.options["firstComment"]
        limit = self.first_comment_limit
        if limit is None:
            return [FieldProblem(where, f"a first comment is posted on {FIRST_COMMENT_PLATFORMS} only")]
        if not isinstance(text, str) or not text.strip():
            return [FieldProblem(where, "must be a non-empty text")]
        refusal = self.first_comment_refusal(draft)
        if refusal is not None:
            return [FieldProblem(where, refusal)]
        size = self.text_size(text)
        if size > limit:
            return [FieldProblem(where, f"must be at most {limit} on {draft.platform} (it is {size})")]
        return []


class InboxRules:
    """How a platform's inbox reaches the service: by its webhook alone (the default), or by polling
    the platform on the work engine (`service/inbox/polling.py`)."""

    # "pages": the inbox is read page by page, newest first, back to a cursor; "business_check": the
    # messages come by webhook, and one poll asks whether the account may use them (TikTok).
    poll: Literal["pages", "business_check"] | None = None
    # A webhook heard within a while means it is live: the poll rests meanwhile (X's Account Activity).
    rests_while_webhook_heard = False
    # Units of the platform's daily quota each page costs (YouTube); 0: not counted.
    page_units = 0
    # The threads the newest-first listing no longer shows are read again by id (YouTube's replies).
    rereads_recent_threads = False
    # A contact's handle is a phone number (E.164), not a user name.
    phone_handles = False
    # The webhooks carry no contact's name, and the platform offers a profile lookup
    # (`Adapter.contact_profile`) for it.
    looks_up_contacts = False
    # A contact can reply to the account's stories (a sequence's `story_reply` trigger).
    story_replies = False

    def parse_page(self, platform_account_id: str, page: dict[str, Any]) -> list[InboundEvent]:
        """One page (`Adapter.inbox_page` or `inbox_threads`) as events, with a webhook's dedupe keys."""
        raise Unsupported("this platform's inbox is not read by polling")

    def next_token(self, page: dict[str, Any]) -> str | None:
        token = page.get("nextPageToken")
        return str(token) if token else None

    def position(self, event: InboundEvent) -> str:
        """Where an event stands in the listing, comparable as text (the cursor is the newest read)."""
        return event.occurred_at.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    def after(self, event: InboundEvent, cursor: str | None) -> bool:
        """Whether the event is new since the cursor (an instant stamped to the second: its own second
        is read again, and stored once)."""
        return cursor is None or self.position(event) >= cursor

    def reached(self, page: dict[str, Any], cursor: str) -> bool:
        """Whether the page already lists something older than the cursor (so older pages follow)."""
        return False
