"""The shapes of posts and media: what `/v1` and the MCP tools take and answer."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from service.accounts.shapes import PLATFORMS
from service.kit.shapes import LEFT_OUT, Body, Id, Instant, NullableInstant, PageQuery, Query, Record, rule

POST_STATUSES = ("draft", "scheduled", "publishing", "published", "partial", "failed", "cancelled")
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


class PostRef(Body):
    """An MCP tool's argument naming one post (on /v1, the path)."""

    post_id: Id


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


class UploadIn(Body):
    filename: Annotated[str, Field(min_length=1, max_length=255, examples=["launch.mp4"])]
    content_type: Annotated[str, Field(min_length=3, max_length=100, pattern=r"^[a-z]+/[a-z0-9.+-]+$",
                                       examples=["video/mp4"])]
    size: Annotated[int, Field(ge=1, description="Bytes; at most the service's media size limit.")]


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
    created_at: Instant
    updated_at: Instant


class PlatformDeletion(Record):
    account_id: str
    platform: Literal[PLATFORMS]  # type: ignore[valid-type]
    deleted: bool = Field(description="False where the platform refused or does not let an app delete posts.")
    error: str | None


class PostDeleted(Record):
    id: str
    deleted: bool
    platforms: list[PlatformDeletion] = Field(description="With `fromPlatforms=true`: what each platform did.")


class Upload(Record):
    token: str = Field(description="Shown once; the upload URL carries it.")
    upload_url: str = Field(description="PUT the raw bytes here (any content type), then POST `.../complete`.")
    expires_at: Instant


class UploadProgress(Record):
    token: str
    received_bytes: int


class MediaRecord(Record):
    id: str
    media_id: str = Field(description="The same as `id`.")
    filename: str
    content_type: str = Field(description="Read from the bytes, not from the name.")
    size: int
    sha256: str
    url: str = Field(description="Where platforms fetch it: served by this service under its base URL.")
    created_at: Instant
