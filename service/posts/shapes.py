"""The shapes of posts and media: what `/v1` and the MCP tools take and answer."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from kit.shapes import LEFT_OUT, Body, Id, Instant, NullableInstant, PageQuery, Query, Record, rule
from service.accounts.shapes import PLATFORMS

POST_STATUSES = ("draft", "scheduled", "publishing", "published", "partial", "failed", "cancelled", "pending_approval",
                 "rejected")
TARGET_STATUSES = ("queued", "publishing", "published", "failed", "unknown")
SOURCES = ("service", "external")
SOURCE_FILTER = ("all", "service", "external")
MAX_CONTENT = 100_000
MAX_TARGETS = 20
MAX_MEDIA = 20

Content = Annotated[str, Field(max_length=MAX_CONTENT)]


# -- requests ----------------------------------------------------------------------------------


class TargetIn(Body):
    account_id: Id
    content: Content = Field(LEFT_OUT, description="Replaces the post's `content` on this account's platform.")
    options: dict[str, Any] = Field(LEFT_OUT, description=(
        "Platform choices (see `GET /v1/accounts/{id}/publish-options`): TikTok `privacyLevel` (one of the "
        "account's publish options, required), `disableComment`, `disableDuet`, `disableStitch`; YouTube `title`, "
        "`privacyStatus`, `publishAt` (ISO 8601 time ahead: private until then), `thumbnailMediaId` (a JPEG or PNG "
        "media of at most 2 MB); X `replySettings`, `thread` (texts of the posts that follow, each replying to the "
        "previous, each weighing at most 280); Instagram `mediaType` (`STORIES` or `REELS`), with reels "
        "`coverUrl` and `shareToFeed`; Instagram, Facebook, LinkedIn and X `firstComment` (posted under the post "
        "once it is live, at most once); Telegram `chatId`; Meta Ads `pageId`, `link`; Facebook `link`."),
        examples=[{"thread": ["2/2 and the rest"], "firstComment": "More at example.com"}])


class PostIn(Body):
    """A new post. No `scheduledFor` and no `publishNow` → a draft."""

    content: Content = Field(examples=["Our spring collection is here 🌸"])
    media_ids: list[Id] = Field(default_factory=list, max_length=MAX_MEDIA,
                                description="Completed uploads (`med_...`), in order.")
    targets: list[TargetIn] = Field(min_length=1, max_length=MAX_TARGETS)
    scheduled_for: Annotated[str, Field(max_length=64, examples=["2026-12-01T09:30:00Z"])] = Field(
        LEFT_OUT, description="With an offset (or Z), or a wall time read in `timezone`; outside 1970-01-01 .. "
                              "9999-12-30 in UTC → 422.")
    timezone: Annotated[str, Field(max_length=64, examples=["Europe/Paris"])] = LEFT_OUT
    publish_now: bool = Field(LEFT_OUT, description="Publish at once on every target (in parallel).")
    add_to_queue: bool = Field(LEFT_OUT, description=(
        "Each target takes the next free slot of its account's posting queue (`PUT /v1/accounts/{id}/queue`); "
        "two posts never share a slot of one account. An account without a queue → 422. Not with "
        "`scheduledFor` or `publishNow`."))


class PostUpdate(PostIn):
    """A draft or scheduled post replaced as a whole (the same fields as when creating it)."""


class PostUpdateTo(PostUpdate):
    post_id: Id


class PostQuery(PageQuery):
    status: Literal[POST_STATUSES] = LEFT_OUT  # type: ignore[valid-type]
    profile_id: Id = LEFT_OUT
    account_id: Id = LEFT_OUT
    platform: Literal[PLATFORMS] = LEFT_OUT  # type: ignore[valid-type]
    source: Literal[SOURCE_FILTER] = Field(LEFT_OUT, description=(  # type: ignore[valid-type]
        "`all` (default), `service` (published through Switchboard) or `external` (made natively on the platform)."))
    # `from` is a Python keyword: the attribute is `from_`, the wire name `from` (a calendar's window).
    from_: Annotated[str, Field(alias="from", min_length=1, max_length=64, examples=["2026-12-01T00:00:00Z"])] = Field(
        LEFT_OUT, alias="from", description=(
            "An instant (ISO 8601 with `Z` or an offset): only posts scheduled or published at or after it."))
    to: Annotated[str, Field(min_length=1, max_length=64, examples=["2027-01-01T00:00:00Z"])] = Field(
        LEFT_OUT, description="An instant: only posts scheduled or published before it (the window is `[from, to)`).")


class PostRef(Body):
    """An MCP tool's argument naming one post (on /v1, the path)."""

    post_id: Id


class DeletePostTool(Body):
    """`delete_post` as an MCP tool: the post's id and `/v1`'s query flag as arguments."""

    post_id: Id
    from_platforms: bool = Field(LEFT_OUT, description="`true`: also delete a published post on each platform.")


def _query_bool(value: Any) -> Any:
    # A URL carries text: `true` and `false` only (as the document says), not "1", "yes" or "True".
    if isinstance(value, str):
        if value in ("true", "false"):
            return value == "true"
        raise rule("must be true or false")
    return value


class DeleteQuery(Query):
    from_platforms: Annotated[bool, BeforeValidator(_query_bool),
                              Field(description="`true`: also delete a published post on each platform.")] | None = None


# -- records -----------------------------------------------------------------------------------


class FirstComment(Record):
    text: str
    status: Literal["posted", "failed", "unknown"] = Field(description=(
        "`unknown`: no answer came (or the worker stopped) while posting it; it is never posted twice."))
    platform_comment_id: str | None
    error: str | None


class Target(Record):
    account_id: str
    platform: Literal[PLATFORMS]  # type: ignore[valid-type]
    content: str = Field(description="What this platform gets: the target's own content, else the post's.")
    status: Literal[TARGET_STATUSES] = Field(description=(  # type: ignore[valid-type]
        "`unknown`: the process publishing it stopped during the platform call. It is reconciled against the "
        "platform's recent posts where the platform lists them, never republished blindly."))
    platform_post_id: str | None
    url: str | None
    error: str | None
    published_at: NullableInstant
    first_comment: FirstComment | None = Field(description=(
        "With `options.firstComment`: the comment posted under the post once it is live, at most once."))


class Post(Record):
    id: str
    content: str
    media_ids: list[str]
    status: Literal[POST_STATUSES]  # type: ignore[valid-type]
    scheduled_for: NullableInstant
    timezone: str | None
    published_at: NullableInstant
    source: Literal[SOURCES]  # type: ignore[valid-type]
    targets: list[Target]
    rejection_reason: str | None = Field(None, description="Why an owner or admin rejected it (`rejected`).")
    created_at: Instant
    updated_at: Instant


class RejectPost(Body):
    reason: Annotated[str, Field(min_length=1, max_length=2000)]


class PostReason(Body):
    """`reject_post` as a tool."""

    post_id: Id
    reason: Annotated[str, Field(min_length=1, max_length=2000)]


class PlatformDeletion(Record):
    account_id: str
    platform: Literal[PLATFORMS]  # type: ignore[valid-type]
    deleted: bool = Field(description="False where the platform refused or does not let an app delete posts.")
    error: str | None


class PostDeleted(Record):
    id: str
    deleted: bool
    platforms: list[PlatformDeletion] = Field(description="With `fromPlatforms=true`: what each platform did.")


# -- the posting queue -------------------------------------------------------------------------

MAX_QUEUE_SLOTS = 100


class QueueSlot(Body):
    weekday: Annotated[int, Field(ge=1, le=7, description="1 = Monday … 7 = Sunday.")]
    time: Annotated[str, Field(pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]$", examples=["09:30"],
                               description="`HH:MM`, 24-hour, read in the queue's `timezone`.")]


class QueueIn(Body):
    """The whole queue, replaced: `slots: []` empties it (then `addToQueue` is refused for the account)."""

    timezone: Annotated[str, Field(min_length=1, max_length=64, examples=["Europe/Paris"])] = Field(
        "UTC", description="IANA time zone the slots are read in (default UTC).")
    slots: list[QueueSlot] = Field(max_length=MAX_QUEUE_SLOTS, description=(
        "Weekly slots; duplicates are dropped and the list comes back sorted."))


class QueueSlotRecord(Record):
    weekday: int
    time: str


class PostingQueueRecord(Record):
    account_id: str
    timezone: str
    slots: list[QueueSlotRecord]
    next_slots: list[Instant] = Field(description=(
        "The next free slots (at most 5), as instants: where the next posts added to the queue will go."))


# -- CSV import --------------------------------------------------------------------------------

MAX_CSV_CHARACTERS = 1024 * 1024


class ImportQuery(Query):
    dry_run: Annotated[bool, BeforeValidator(_query_bool),
                       Field(description="`true`: check every row and save nothing.")] | None = None


class ImportCsvTool(Body):
    """`import_posts_csv` as an MCP tool: the file's text and `/v1`'s query flag as arguments."""

    csv: Annotated[str, Field(min_length=1, max_length=MAX_CSV_CHARACTERS, description=(
        "The CSV text: a header row naming content, accounts and optionally scheduledFor, timezone, mediaUrls, "
        "firstComment; at most 1,000 rows."))]
    dry_run: bool = Field(False, description="`true`: check every row and save nothing.")


class ImportRowError(Record):
    row: int = Field(description="The row's number, 1 being the first row after the header.")
    field: str = Field(description="The column at fault.")
    message: str


class ImportReport(Record):
    rows: int
    valid: int
    errors: list[ImportRowError]


class ImportCreated(Record):
    created: list[str] = Field(description="The new posts' ids, in the file's order.")


class ImportOutcome(Record):
    """`import_posts_csv`'s answer: the dry run's report, or the posts made (`created`, empty in a dry run)."""

    rows: int
    valid: int
    errors: list[ImportRowError]
    created: list[str]
