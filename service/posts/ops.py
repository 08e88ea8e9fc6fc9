"""Posts: one content published to several accounts, each a target that the engine publishes once.

A post is a `draft` (no time, not published), `scheduled` (its targets are engine rows due at
`scheduledFor`: the sweeper is the scheduler), or published now (`publishNow`: its targets are
due at once). From the first target a worker takes, the post is `publishing`; when every target has
settled it is `published`, `partial` or `failed`, and the matching `post.*` event is written in that
transaction. How one target is published exactly once is `service/publishing.py`.

Targets are validated against each platform's capabilities before anything is saved: one 422 names
every problem by its field (`targets[1].content`, `mediaIds`).
"""

from __future__ import annotations

import bisect
import datetime as dt
import threading
import time
from dataclasses import dataclass
from typing import Any

from peewee import fn

from kit import clock, ids, scheduling
from kit.errors import Conflict, FieldProblem, NotFound, ValidationFailed
from kit.pagination import Page, records, window
from kit.shapes import OUT_OF_BOUNDS, bounded_utc
from platforms.base import PlatformFailure
from platforms.x_text import weighted_length
from service.accounts import adapters
from service.common import events, idempotency
from service.identity.auth import Actor
from service.media import ops as media
from service.posts.shapes import Post as PostRecord
from service.posts.shapes import PostDeleted, Target
from storage.db import db, reading
from storage.models import Account, Media, Post, PostTarget

X_LIMIT = 280


# -- the record ----------------------------------------------------------------------------------
def _shown_status(target: PostTarget) -> str:
    # Between the steps of a multi-step publish (a container processing) the row waits as `queued`
    # for its next poll; for the caller it is publishing.
    if target.status == "queued" and target.progress and not target.progress.get("reconcile"):
        return "publishing"
    return str(target.status)


def _target_record(post: Post, target: PostTarget) -> Target:
    return Target.model_validate(dict(
        account_id=target.account_id, platform=target.platform,
        content=target.content if target.content is not None else post.content, status=_shown_status(target),
        platform_post_id=target.platform_post_id, url=target.url, error=target.error,
        published_at=target.published_at, first_comment=target.first_comment))


def record(post: Post, targets: list[PostTarget] | None = None) -> PostRecord:
    if targets is None:
        targets = list(PostTarget.select().where(PostTarget.post == post.id).order_by(PostTarget.position))
    return PostRecord.model_validate(dict(
        id=post.id, content=post.content, media_ids=list(post.media_ids or []), status=post.status,
        scheduled_for=post.scheduled_for, timezone=post.timezone, published_at=post.published_at, source=post.source,
        targets=[_target_record(post, t) for t in targets], rejection_reason=post.rejection_reason,
        created_at=post.created_at, updated_at=post.updated_at))


def emit(post: Post, event_type: str, targets: list[PostTarget] | None = None) -> None:
    events.emit(workspace_id=post.workspace_id, type=event_type, data=record(post, targets).dump())


# -- validation ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Checked:
    accounts: list[Account]
    due: dt.datetime | None
    media: list[Media]


def _options_of(target: Any) -> dict[str, Any]:
    return dict(target.options) if target.options is not None else {}


def _check_target(index: int, account: Account, text: str, items: list[Media], options: dict[str, Any],
                  live_options: dict[str, Any] | None, option_media: dict[str, Media] | None = None
                  ) -> list[FieldProblem]:
    where = f"targets[{index}]"
    capabilities = adapters.adapter(account.platform).capabilities
    if not capabilities.publish:
        return [FieldProblem(f"{where}.accountId", f"{account.platform} accounts do not publish posts")]
    problems: list[FieldProblem] = []
    content_field = f"{where}.content"
    if account.platform == "x":
        weight = weighted_length(text)
        if weight > X_LIMIT:
            problems.append(FieldProblem(content_field, f"weighs {weight} of X's {X_LIMIT} (a link counts 23, most "
                                         "non-Latin characters and emoji 2)"))
    else:
        limit = capabilities.post_limit(with_media=bool(items))
        if limit is not None and len(text) > limit:
            what = "a caption with media" if items and capabilities.post_caption_limit else "the text"
            problems.append(FieldProblem(content_field, f"must be at most {limit} characters on {account.platform} "
                                         f"({what})"))
    videos = [m for m in items if m.content_type.startswith("video/")]
    if capabilities.post_media == "required_image_or_video" and not items:
        problems.append(FieldProblem("mediaIds", f"{account.platform} needs an image or a video"))
    if capabilities.post_media == "required_video" and not videos:
        problems.append(FieldProblem("mediaIds", f"{account.platform} needs a video"))
    if capabilities.max_media is not None and len(items) > capabilities.max_media:
        problems.append(FieldProblem("mediaIds", f"{account.platform} takes at most {capabilities.max_media} items"))
    if videos and not capabilities.video_posts:
        problems.append(FieldProblem("mediaIds", f"{account.platform} posts take text and images only"))
    problems += _platform_options(where, account.platform, items, options, option_media or {})
    if account.platform == "tiktok":
        allowed = list((live_options or {}).get("privacyLevels") or [])
        level = options.get("privacyLevel")
        if live_options is None:
            problems.append(FieldProblem(f"{where}.options.privacyLevel", "TikTok's publish options could not be "
                                         "read to check it; try again"))
        elif not allowed and live_options.get("blockedReason"):
            problems.append(FieldProblem(f"{where}.options.privacyLevel", str(live_options["blockedReason"])))
        elif level not in allowed:
            problems.append(FieldProblem(f"{where}.options.privacyLevel",
                                         "must be one of the account's publish options: " + ", ".join(allowed)))
    if account.platform == "telegram" and not (options.get("chatId") or (live_options and live_options.get("chatId"))):
        problems.append(FieldProblem(f"{where}.options.chatId", "a Telegram post needs the channel's chatId "
                                     "(@name or -100...), a channel the bot administers"))
    if account.platform == "meta_ads" and not (options.get("pageId") and options.get("link")):
        problems.append(FieldProblem(f"{where}.options", "a Meta Ads creative needs pageId and link"))
    return problems


X_REPLY_SETTINGS = ("everyone", "following", "mentionedUsers", "subscribers", "verified")


def _platform_options(where: str, platform: str, items: list[Media], options: dict[str, Any],
                      option_media: dict[str, Media]) -> list[FieldProblem]:
    """Each platform's own options, checked before anything is saved (`targets[i].options.<name>`)."""
    problems: list[FieldProblem] = []
    field = f"{where}.options"
    videos = [m for m in items if m.content_type.startswith("video/")]
    if platform == "x":
        if videos and len(items) > 1:
            problems.append(FieldProblem("mediaIds", "an X post takes one video alone, or up to 4 images"))
        if "replySettings" in options and options["replySettings"] not in X_REPLY_SETTINGS:
            problems.append(FieldProblem(f"{field}.replySettings", "must be one of " + ", ".join(X_REPLY_SETTINGS)))
        if "thread" in options:
            problems += _thread_problems(f"{field}.thread", options["thread"])
    if platform == "facebook" and videos and len(items) > 1:
        problems.append(FieldProblem("mediaIds", "a Facebook post takes one video alone, or images"))
    if "firstComment" in options:
        problems += _first_comment_problems(f"{field}.firstComment", platform, options)
    if platform == "instagram":
        problems += _instagram_options(field, items, options)
    if platform == "youtube":
        problems += _youtube_options(field, options, option_media)
    if platform == "linkedin":
        from platforms.linkedin import VIDEO_MAX_BYTES, VIDEO_MIN_BYTES

        if videos and len(items) > 1:
            problems.append(FieldProblem("mediaIds", "a LinkedIn post takes one video alone, or up to 20 images"))
        if any(not VIDEO_MIN_BYTES <= v.size <= VIDEO_MAX_BYTES for v in videos):
            problems.append(FieldProblem("mediaIds", "a LinkedIn video must be 75 KB to 500 MB"))
    return problems


# Where a post's first comment can go, and how long it may be (X: a reply, weighed X's way).
FIRST_COMMENT_LIMITS = {"instagram": 2200, "facebook": 8000, "linkedin": 1250, "x": X_LIMIT}


def _first_comment_problems(field: str, platform: str, options: dict[str, Any]) -> list[FieldProblem]:
    text = options["firstComment"]
    limit = FIRST_COMMENT_LIMITS.get(platform)
    if limit is None:
        return [FieldProblem(field, "a first comment is posted on Instagram, Facebook, LinkedIn and X only")]
    if not isinstance(text, str) or not text.strip():
        return [FieldProblem(field, "must be a non-empty text")]
    if platform == "instagram" and options.get("mediaType") == "STORIES":
        return [FieldProblem(field, "a story takes no comments")]
    size = weighted_length(text) if platform == "x" else len(text)
    if size > limit:
        return [FieldProblem(field, f"must be at most {limit} on {platform} (it is {size})")]
    return []


def _youtube_options(field: str, options: dict[str, Any], option_media: dict[str, Media]) -> list[FieldProblem]:
    from platforms.youtube import THUMBNAIL_MAX_BYTES

    problems: list[FieldProblem] = []
    if "publishAt" in options:
        value = options["publishAt"]
        moment = None
        if isinstance(value, str) and len(value) <= 64:
            try:
                moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                moment = None
        if moment is None or moment.tzinfo is None:
            problems.append(FieldProblem(f"{field}.publishAt", "must be an ISO 8601 time with its offset "
                                         "(2026-12-01T09:30:00Z)"))
        elif (instant := bounded_utc(moment)) is None:
            problems.append(FieldProblem(f"{field}.publishAt", OUT_OF_BOUNDS))
        elif instant <= clock.now():
            problems.append(FieldProblem(f"{field}.publishAt", "must be in the future"))
        if options.get("privacyStatus", "private") != "private":
            problems.append(FieldProblem(f"{field}.privacyStatus", "a video with publishAt is private until then: "
                                         "leave privacyStatus out or make it private"))
    if "thumbnailMediaId" in options:
        row = option_media.get(str(options["thumbnailMediaId"]))
        if row is None:
            problems.append(FieldProblem(f"{field}.thumbnailMediaId", "is not a completed media of this workspace"))
        elif row.content_type not in ("image/jpeg", "image/png") or row.size > THUMBNAIL_MAX_BYTES:
            problems.append(FieldProblem(f"{field}.thumbnailMediaId", "a YouTube thumbnail is a JPEG or PNG of "
                                         "at most 2 MB"))
    return problems


def _instagram_options(field: str, items: list[Media], options: dict[str, Any]) -> list[FieldProblem]:
    problems: list[FieldProblem] = []
    kind = options.get("mediaType")
    if "mediaType" in options and kind not in ("STORIES", "REELS"):
        problems.append(FieldProblem(f"{field}.mediaType", "must be STORIES or REELS (or left out: a feed post)"))
    if kind == "STORIES" and len(items) != 1:
        problems.append(FieldProblem("mediaIds", "an Instagram story is one image or one video"))
    if kind == "REELS" and (len(items) != 1 or not items[0].content_type.startswith("video/")):
        problems.append(FieldProblem("mediaIds", "an Instagram reel is one video"))
    for name in ("coverUrl", "shareToFeed"):
        if name in options and kind != "REELS":
            problems.append(FieldProblem(f"{field}.{name}", "is for reels only (mediaType REELS)"))
    cover = options.get("coverUrl")
    if "coverUrl" in options and not (isinstance(cover, str) and len(cover) <= 2048
                                      and cover.startswith(("https://", "http://"))):
        problems.append(FieldProblem(f"{field}.coverUrl", "must be an http(s) URL of an image Instagram can fetch"))
    if "shareToFeed" in options and not isinstance(options["shareToFeed"], bool):
        problems.append(FieldProblem(f"{field}.shareToFeed", "must be true or false"))
    return problems


def _thread_problems(field: str, thread: Any) -> list[FieldProblem]:
    from platforms.x import MAX_THREAD_POSTS

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
        elif weight > X_LIMIT:
            problems.append(FieldProblem(f"{field}[{index}]", f"weighs {weight} of X's {X_LIMIT} (a link counts "
                                         "23, most non-Latin characters and emoji 2)"))
    return problems


def _load_accounts(actor: Actor, targets: list[Any]) -> tuple[list[Account | None], list[FieldProblem]]:
    problems: list[FieldProblem] = []
    wanted = [t.account_id for t in targets]
    found = {a.id: a for a in Account.select().where(Account.id.in_(wanted), Account.workspace == actor.workspace_id)}
    accounts: list[Account | None] = []
    seen: set[str] = set()
    for index, target in enumerate(targets):
        account = found.get(target.account_id)
        if account is None:
            problems.append(FieldProblem(f"targets[{index}].accountId", "is not an account of this workspace"))
        elif target.account_id in seen:
            problems.append(FieldProblem(f"targets[{index}].accountId", "is already a target of this post"))
            account = None
        else:
            actor.require_profile(account.profile_id)
            if account.status != "connected":
                problems.append(FieldProblem(f"targets[{index}].accountId", "is disconnected"))
                account = None
        seen.add(target.account_id)
        accounts.append(account)
    return accounts, problems


# TikTok answers 20 creator_info queries a minute per account: a batch of posts (a week scheduled at
# once) reads the privacy levels once a minute, not once a post. Kept per process, briefly.
CREATOR_INFO_TTL = 60.0
_creator_cache: dict[str, tuple[float, dict[str, Any]]] = {}
_creator_lock = threading.Lock()


def _creator_options(account: Account) -> dict[str, Any] | None:
    moment = time.monotonic()
    with _creator_lock:
        cached = _creator_cache.get(account.id)
    if cached is not None and cached[0] > moment:
        return cached[1]
    try:
        live = adapters.call(account, lambda adapter, ctx: adapter.publish_options(ctx))
    except PlatformFailure:
        return None
    with _creator_lock:
        _creator_cache[account.id] = (moment + CREATOR_INFO_TTL, live)
    return live


def check(actor: Actor, *, content: str, media_ids: list[str], targets: list[Any], scheduled_for: str | None,
          timezone: str | None, publish_now: bool | None) -> Checked:
    """Every rule of a post, before anything is saved; TikTok's privacy levels are read live from the
    platform (so call this outside a write transaction)."""
    problems: list[FieldProblem] = []
    if scheduled_for is not None and publish_now:
        problems.append(FieldProblem("publishNow", "give scheduledFor or publishNow, not both"))
    due, time_problems = scheduling.due_at(scheduled_for, timezone)
    problems += time_problems
    with reading():
        found_media = media.completed(actor.workspace_id, media_ids)
        named = [str(_options_of(t)["thumbnailMediaId"]) for t in targets if "thumbnailMediaId" in _options_of(t)]
        option_media = media.completed(actor.workspace_id, named) if named else {}
        accounts, account_problems = _load_accounts(actor, targets)
    problems += account_problems
    for index, media_id in enumerate(media_ids):
        if media_id not in found_media:
            problems.append(FieldProblem(f"mediaIds[{index}]", "is not a completed media of this workspace"))
    items = [found_media[m] for m in media_ids if m in found_media]
    for index, (target, account) in enumerate(zip(targets, accounts, strict=True)):
        if account is None:
            continue
        live = None
        if account.platform == "telegram":
            live = {"chatId": adapters.context(account).credentials.get("channelId")}
        if account.platform == "tiktok":
            live = _creator_options(account)
        text = target.content if target.content is not None else content
        problems += _check_target(index, account, text, items, _options_of(target), live, option_media)
    if problems:
        raise ValidationFailed("Some targets cannot take this post.", details=problems)
    return Checked([a for a in accounts if a is not None], due, items)


# -- writing -------------------------------------------------------------------------------------
def _status_of(due: dt.datetime | None, publish_now: bool | None) -> str:
    if publish_now:
        return "publishing"
    return "scheduled" if due is not None else "draft"


def _write_targets(post: Post, targets: list[Any], accounts: list[Account], due: dt.datetime | None,
                   slots: dict[str, dt.datetime] | None = None) -> list[str]:
    moment = clock.now()
    made = []
    for position, (target, account) in enumerate(zip(targets, accounts, strict=True)):
        target_id = ids.new_id("pt")
        # Added to the queue: each target is due at its own account's slot.
        target_due = slots[account.id] if slots else due
        PostTarget.create(
            id=target_id, post=post.id, workspace=post.workspace_id, account=account.id, profile_id=account.profile_id,
            platform=account.platform, position=position, content=target.content, options=_options_of(target),
            status="queued", next_attempt_at=target_due if post.status in ("scheduled", "publishing") else None,
            # Scheduled rows are the sweeper's; rows due now are nudged after commit.
            nudged_at=None, created_at=moment, updated_at=moment,
        )
        made.append(target_id)
    return made


def _after_write(post: Post, target_ids: list[str]) -> None:
    from service.posts import publishing

    if post.status == "publishing":
        publishing.nudge(target_ids)
    elif post.status == "scheduled":
        emit(post, "post.scheduled")


def _check_queue_choice(add_to_queue: bool | None, scheduled_for: str | None, publish_now: bool | None) -> None:
    if add_to_queue and (scheduled_for is not None or publish_now):
        raise ValidationFailed.field("addToQueue", "give addToQueue, scheduledFor or publishNow: one of them")


def _queue_slots(add_to_queue: bool | None, accounts: list[Account]) -> dict[str, dt.datetime] | None:
    from service.posts import queue

    return queue.claim_slots(accounts) if add_to_queue else None


def create(*, actor: Actor, content: str, targets: list[Any], media_ids: list[str] | None = None,
           scheduled_for: str | None = None, timezone: str | None = None, publish_now: bool | None = None,
           add_to_queue: bool | None = None) -> PostRecord:
    from service.posts import approvals

    actor.require_write()
    _check_queue_choice(add_to_queue, scheduled_for, publish_now)
    media_ids = list(media_ids or [])
    checked = check(actor, content=content, media_ids=media_ids, targets=targets, scheduled_for=scheduled_for,
                    timezone=timezone, publish_now=publish_now)
    moment = clock.now()
    due = moment if publish_now else checked.due
    with db.atomic():
        slots = _queue_slots(add_to_queue, checked.accounts)
        if slots:
            due = min(slots.values())  # the post shows its first target's slot
        post = Post.create(id=ids.new_id("post"), workspace=actor.workspace_id, content=content, media_ids=media_ids,
                           status=_status_of(due, publish_now), scheduled_for=due if not publish_now else checked.due,
                           timezone=timezone, source="service", created_at=moment, updated_at=moment)
        target_ids = _write_targets(post, targets, checked.accounts, due, slots)
        if approvals.held(actor, post):  # a member's post waits for an owner or an admin
            approvals.hold(actor, post)
        else:
            _after_write(post, target_ids)
        # Under an Idempotency-Key, the post is the key's: a retry after a crash finds it, never a second.
        idempotency.attach(post.id)
        return record(post)


def get_row(*, actor: Actor, post_id: str) -> Post:
    post = Post.get_or_none(Post.id == post_id, Post.workspace == actor.workspace_id)
    if post is None:
        raise NotFound("No post with that id.")
    if actor.profile_ids is not None:
        for target in PostTarget.select(PostTarget.profile_id).where(PostTarget.post == post.id):
            actor.require_profile(target.profile_id)
    return post


def get(*, actor: Actor, post_id: str) -> PostRecord:
    return record(get_row(actor=actor, post_id=post_id))


def update(*, actor: Actor, post_id: str, content: str, targets: list[Any], media_ids: list[str] | None = None,
           scheduled_for: str | None = None, timezone: str | None = None, publish_now: bool | None = None,
           add_to_queue: bool | None = None) -> PostRecord:
    actor.require_write()
    _check_queue_choice(add_to_queue, scheduled_for, publish_now)
    with db.atomic():
        post = get_row(actor=actor, post_id=post_id)
        if post.status not in ("draft", "scheduled"):
            raise Conflict(f"A {post.status} post cannot change; only drafts and scheduled posts can.")
    media_ids = list(media_ids or [])
    checked = check(actor, content=content, media_ids=media_ids, targets=targets, scheduled_for=scheduled_for,
                    timezone=timezone, publish_now=publish_now)
    moment = clock.now()
    with db.atomic():
        # Still editable, and no target of it taken by a worker since (a schedule that fell due).
        post = get_row(actor=actor, post_id=post_id)
        taken = PostTarget.select().where(PostTarget.post == post.id, PostTarget.status != "queued").exists()
        if post.status not in ("draft", "scheduled") or taken:
            raise Conflict(f"A {post.status} post cannot change; only drafts and scheduled posts can.")
        PostTarget.delete().where(PostTarget.post == post.id).execute()
        slots = _queue_slots(add_to_queue, checked.accounts)  # its old slots are free again
        due = min(slots.values()) if slots else checked.due
        post.content = content
        post.media_ids = media_ids
        post.scheduled_for = due
        post.timezone = timezone
        post.status = _status_of(due, publish_now)
        post.updated_at = moment
        post.save()
        target_ids = _write_targets(post, targets, checked.accounts, moment if publish_now else due, slots)
        _after_write(post, target_ids)
        return record(post)


def editable(*, actor: Actor, post_id: str) -> dict[str, Any]:
    """A draft or scheduled post as `PUT /v1/posts/{id}` takes it back (each target's own content
    and options, which the record does not show), for a form that edits it; else 409."""
    post = get_row(actor=actor, post_id=post_id)
    if post.status not in ("draft", "scheduled"):
        raise Conflict(f"A {post.status} post cannot change; only drafts and scheduled posts can.")
    targets = PostTarget.select().where(PostTarget.post == post.id).order_by(PostTarget.position)
    return {"id": post.id, "content": post.content, "media_ids": list(post.media_ids or []), "status": post.status,
            "scheduled_for": post.scheduled_for, "timezone": post.timezone,
            "targets": [{"account_id": t.account_id, "content": t.content, "options": dict(t.options or {})}
                        for t in targets]}


def list_posts(*, actor: Actor, status: str | None = None, profile_id: str | None = None,
               account_id: str | None = None, platform: str | None = None, source: str | None = None,
               page: int | None = None, limit: int | None = None, from_: str | None = None,
               to: str | None = None) -> Page:
    dates = _window(from_, to)
    query = _visible(actor, Post.select(), dates)
    if status is not None:
        query = query.where(Post.status == status)
    if source not in (None, "all"):
        query = query.where(Post.source == source)
    target_filter = []
    if profile_id is not None:
        actor.require_profile(profile_id)
        target_filter.append(PostTarget.profile_id == profile_id)
    if account_id is not None:
        target_filter.append(PostTarget.account == account_id)
    if platform is not None:
        target_filter.append(PostTarget.platform == platform)
    if target_filter:
        query = query.where(Post.id.in_(PostTarget.select(PostTarget.post).where(*target_filter)))
    page, limit, offset = window(page, limit)
    total = query.count()
    rows = list(query.order_by(Post.created_at.desc(), Post.id.desc()).paginate(page, limit)) if offset < total else []
    by_post: dict[str, list[PostTarget]] = {row.id: [] for row in rows}
    if rows:
        for target in PostTarget.select().where(PostTarget.post.in_(list(by_post))).order_by(PostTarget.position):
            by_post[target.post_id].append(target)
    items = [record(row, by_post[row.id]) for row in rows]
    return Page(PostRecord, records(PostRecord, items), page, limit, total)


def _visible(actor: Actor, query: Any, dates: tuple[dt.datetime, dt.datetime] | None) -> Any:
    """The workspace's posts the actor may see, those of the window `[start, end)` when given: the
    one filter of `GET /v1/posts?from=&to=` and of the dashboard's calendar."""
    query = query.where(Post.workspace == actor.workspace_id)
    if dates is not None:
        start, end = dates
        # A calendar shows a post on the day it is due or went live (a target of a partial post too).
        live = PostTarget.select(PostTarget.post).where(PostTarget.workspace == actor.workspace_id,
                                                       PostTarget.published_at >= start, PostTarget.published_at < end)
        query = query.where(((Post.scheduled_for >= start) & (Post.scheduled_for < end))
                            | ((Post.published_at >= start) & (Post.published_at < end)) | Post.id.in_(live))
    if actor.profile_ids is not None:
        outside = PostTarget.select(PostTarget.post).where(PostTarget.profile_id.not_in(list(actor.profile_ids)))
        query = query.where(Post.id.not_in(outside))
    return query


# The contract's range of instants a caller may send (1970-01-01 .. 9999-12-30).
EARLIEST = dt.datetime(1970, 1, 1)
LATEST = dt.datetime(9999, 12, 30, 23, 59, 59)


def _bound(value: str | None, field: str, problems: list[FieldProblem]) -> dt.datetime | None:
    if value is None:
        return None
    try:
        parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        if parsed.tzinfo is None:
            raise ValueError(value)
        moment = parsed.astimezone(dt.UTC).replace(tzinfo=None)
    except (ValueError, OverflowError):
        problems.append(FieldProblem(field, "must be an ISO 8601 instant with Z or an offset "
                                            "(2026-12-01T00:00:00Z)"))
        return None
    if not EARLIEST <= moment <= LATEST:
        problems.append(FieldProblem(field, "must lie between 1970-01-01 and 9999-12-30"))
        return None
    return moment


def _window(from_: str | None, to: str | None) -> tuple[dt.datetime, dt.datetime] | None:
    """`[from, to)` as naive UTC, either end open; None without either."""
    if from_ is None and to is None:
        return None
    problems: list[FieldProblem] = []
    start, end = _bound(from_, "from", problems), _bound(to, "to", problems)
    if start is not None and end is not None and start >= end:
        problems.append(FieldProblem("to", "must be after from"))
    if problems:
        raise ValidationFailed("Some fields are not valid.", details=problems)
    return start or EARLIEST, end or LATEST


def delete(*, actor: Actor, post_id: str, from_platforms: bool | None = None) -> PostDeleted:
    """Draft or scheduled: deleted (a scheduled one with `post.cancelled`). Published or partial: 409,
    unless `from_platforms`, which deletes it on each platform that allows it first. Failed:
    deleted (nothing of it is live)."""
    from service.posts import work

    actor.require_write()
    with db.atomic():
        post = get_row(actor=actor, post_id=post_id)
        status = post.status
        if status in ("draft", "scheduled", "failed", "cancelled"):
            targets = list(PostTarget.select().where(PostTarget.post == post.id).order_by(PostTarget.position))
            if any(t.status != "queued" for t in targets) and status == "scheduled":
                raise Conflict("The post started publishing; it can no longer be cancelled.")
            if status == "scheduled":
                post.status = "cancelled"
                emit(post, "post.cancelled", targets)
            post.delete_instance(recursive=True)
            return PostDeleted(id=post_id, deleted=True, platforms=[])
        if status == "publishing" or not from_platforms:
            raise Conflict(f"A {status} post is live on its platforms: delete it with ?fromPlatforms=true, "
                           "which also deletes it there." if status != "publishing" else
                           "The post is publishing; wait until it settles.")
        # Engine work, run by this request once written; a worker finishes it if the request dies.
        deletions = work.queue_deletions(post_id)
    return PostDeleted(id=post_id, deleted=True, platforms=work.delete_now(post_id, deletions))


def delete_for_account(account_id: str) -> int:
    """Permanent deletion of an account takes its post targets with it."""
    return PostTarget.delete().where(PostTarget.account == account_id).execute()



def published_counts(*, account_ids: list[str], start: dt.datetime, end: dt.datetime,
                     source: str = "all") -> dict[str, dict[str, int]]:
    """For follower analytics: per account, its targets `published` in [start, end) of posts of that
    `source` (`all`, `service`, `external`), with their summed `likes`, `comments`, `shares`.
    Accounts without any are left out."""
    query = (PostTarget.select(PostTarget.account, fn.COUNT(PostTarget.id).alias("count"),
                               fn.SUM(PostTarget.likes).alias("likes"), fn.SUM(PostTarget.comments).alias("comments"),
                               fn.SUM(PostTarget.shares).alias("shares"))
             .join(Post)
             .where(PostTarget.account.in_(account_ids), PostTarget.status == "published",
                    PostTarget.published_at >= start, PostTarget.published_at < end)
             .group_by(PostTarget.account))
    if source != "all":
        query = query.where(Post.source == source)
    rows: list[dict[str, Any]] = list(query.dicts())  # type: ignore[arg-type]
    return {row["account"]: {"count": int(row["count"]), "likes": int(row["likes"] or 0),
                             "comments": int(row["comments"] or 0), "shares": int(row["shares"] or 0)}
            for row in rows}


# -- for the composer and the calendar -------------------------------------------------------------
@dataclass(frozen=True)
class TextMeasure:
    """A text as one platform counts it: `used` of `limit` (None: the platform sets no limit)."""

    platform: str
    used: int
    limit: int | None
    unit: str

    @property
    def over(self) -> bool:
        return self.limit is not None and self.used > self.limit


def measure(*, platform: str, text: str, with_media: bool = False) -> TextMeasure:
    """How `platform` counts `text` for a post, with the very rule `check` applies: X's weighted
    length (a link 23, CJK and emoji 2), else characters against the text or caption limit."""
    if platform == "x":
        return TextMeasure(platform, weighted_length(text), X_LIMIT, "weighted characters")
    capabilities = adapters.adapter(platform).capabilities
    return TextMeasure(platform, len(text), capabilities.post_limit(with_media=with_media), "characters")


@dataclass(frozen=True)
class CalendarEntry:
    id: str
    content: str
    status: str
    at: dt.datetime


def calendar(*, actor: Actor, from_: str, to: str, per_day: int = 4, zone: dt.tzinfo = dt.UTC
             ) -> dict[dt.date, tuple[list[CalendarEntry], int]]:
    """The posts `list_posts(from_=, to=)` finds in a window, by day (in `zone`): each day's first
    `per_day` by time and how many it holds in all. A month of thousands of posts is one narrow
    query (the time as stored, no conversion per row; each row's day found by bisection among the
    days' starts) and one more for the few shown."""
    start, end = _window(from_, to) or (EARLIEST, LATEST)
    when = fn.COALESCE(Post.published_at, Post.scheduled_for).coerce(False)
    query = _visible(actor, Post.select(when, Post.id), (start, end))
    first_day = start.replace(tzinfo=dt.UTC).astimezone(zone).date() - dt.timedelta(days=1)
    last_day = min(end, LATEST).replace(tzinfo=dt.UTC).astimezone(zone).date() + dt.timedelta(days=1)
    days = [first_day + dt.timedelta(days=n) for n in range((last_day - first_day).days + 1)]
    # Each day's first instant in UTC, written as the database writes a naive UTC time.
    starts = [dt.datetime.combine(day, dt.time(), tzinfo=zone).astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S")
              for day in days]
    counts: dict[int, int] = {}
    shown: dict[int, list[str]] = {}
    # The driver's own rows: peewee's per-row conversion would cost more than the rest of the page.
    rows: Any = db.execute(query.order_by(when, Post.id)).fetchall()
    for at, post_id in rows:
        if at is None:
            continue
        index = bisect.bisect_right(starts, str(at)) - 1
        counts[index] = counts.get(index, 0) + 1
        if counts[index] <= per_day:
            shown.setdefault(index, []).append(post_id)
    wanted = [post_id for ids_ in shown.values() for post_id in ids_]
    found = {post.id: post for post in Post.select(Post.id, Post.content, Post.status, Post.scheduled_for,
                                                   Post.published_at).where(Post.id.in_(wanted))} if wanted else {}
    out: dict[dt.date, tuple[list[CalendarEntry], int]] = {}
    for index, count in counts.items():
        entries = []
        for post_id in shown.get(index, []):
            post = found[post_id]
            at = (post.published_at or post.scheduled_for or start).replace(tzinfo=dt.UTC).astimezone(zone)
            entries.append(CalendarEntry(post.id, post.content[:80], post.status, at))
        out[days[index]] = (entries, count)
    return out
