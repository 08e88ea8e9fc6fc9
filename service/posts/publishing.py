"""Publishing a post's targets exactly once: each target is a work row of the engine.

    queued ──(claimed: one conditional UPDATE)──> publishing ──> published   the platform's id kept;
                                                                             a row with an id is never
                                                                             published again
                                                             ──> queued      a multi-step publish's next
                                                                             step is due later (a poll)
                                                             ──> failed      refused (retry: POST /retry)
                                                             ──> unknown     the call went out and no
                                                                             answer came, or the worker
                                                                             died during it (lease ran out)

An `unknown` target is never published again blindly. Where the platform lists the account's recent
posts (`Capabilities.post_listing`), it is reconciled once the platform's processing time has passed:
found → `published` with the id found; not found → `failed` (retryable). Elsewhere it waits for a
person's retry. A worker lost during a step that may run twice (a status poll, a container not yet
published) simply runs that step again.

Multi-step publishes (Instagram's containers, TikTok's init then status, YouTube's resumable upload
and thumbnail, X's video chunks and thread, LinkedIn's video parts) keep what the platform gave them
so far in the row's `progress` and wait for their next step through `next_attempt_at`: the sweeper
hands them out again, after a restart too; nothing sleeps. Once part of a publish is public (a
thread's first post: `progress.live`), a worker lost later leaves the target `published` with the
reason, and a refused later part (`PartlyPublished`) does the same: nothing is published twice.

A first comment (`options.firstComment`) is the last step: the post's id is kept in `progress` before
the comment call, the comment goes out once, and its outcome is the target's `first_comment`
(`posted`, `failed`, or `unknown` when the worker was lost during the call: never posted again).

Targets run on a pool of their own (`POOL_SIZE` threads) rather than in the queue's few workers, so
the targets of one post publish in parallel and a slow platform holds none of the queue's workers.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from kit import clock, ids
from kit.errors import Conflict
from kit.settings import Settings
from platforms.base import (
    Indeterminate,
    MediaItem,
    PartlyPublished,
    PlatformFailure,
    PublishedPost,
    PublishPending,
    ReauthRequired,
    RetryLater,
    Unsupported,
)
from service.accounts import adapters
from service.common import audit
from service.engine import core as engine
from service.identity.auth import Actor
from service.media import ops as media
from service.posts import records as posts
from service.posts.shapes import Post as PostRecord
from storage.db import connection, db, reading
from storage.hot import sql
from storage.models import Account, Post, PostTarget
from storage.requests import outcome_written

log = logging.getLogger("switchboard.publishing")

POOL_SIZE = 32
TARGET = "post_target"  # the engine's kind (work.py: TARGET_WORK)
MAX_RETRY_LATER = 5  # a platform that keeps saying "later" gets this many attempts, then the target fails
MAX_RECONCILE_ATTEMPTS = 30
MAX_CHAINED_STEPS = 5

_pool: ThreadPoolExecutor | None = None


def lease_seconds(settings: Settings) -> float:
    return settings.publish_lease_seconds


def _executor() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(POOL_SIZE, thread_name_prefix="publish")
    return _pool


def run(target_id: str) -> None:
    """The engine's run: hand the target to the publishing pool (see the module docstring)."""
    _executor().submit(_guarded, target_id)


def run_here(target_ids: list[str]) -> None:
    """Due targets the sweep of this worker found: straight to the pool, without a queue round trip."""
    pool = _executor()
    for target_id in target_ids:
        pool.submit(_guarded, target_id)


def _guarded(target_id: str) -> None:
    try:
        publish(target_id)
    except Exception:
        log.exception("post target %s failed; the sweeper will settle it", target_id)


def nudge(target_ids: list[str]) -> None:
    engine.nudge_after_commit(engine.kind(TARGET), target_ids)


# -- one step ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Loaded:
    target: PostTarget
    post: Post
    account: Account | None
    items: list[MediaItem]
    extra_options: dict[str, Any]

    @property
    def text(self) -> str:
        return self.target.content if self.target.content is not None else self.post.content


@dataclass(frozen=True)
class Commented:
    """A published post and the outcome of its first comment (kept on the target)."""

    post: PublishedPost
    comment: dict[str, Any]


# PartlyPublished is one of the failures
Outcome = PublishedPost | Commented | PublishPending | PlatformFailure | Conflict | None
FIRST_COMMENT = "first_comment"


def publish(target_id: str) -> None:
    """One step of one target, if it is due and free. Call outside any transaction."""
    with connection():
        # The write lock only for the claim (and a scheduled post's start): the reads come after.
        with db.atomic():
            found = engine.claim(engine.kind(TARGET), target_id)  # declared in work.py
            if found is None:
                return
            # Its time came: the first target taken says so.
            Post.update(status="publishing", updated_at=clock.now()).where(
                Post.id == found.columns["post_id"], Post.status == "scheduled").execute()
        with reading():
            target = PostTarget.get_by_id(target_id)
            post = Post.get_by_id(target.post_id)
            account = Account.get_or_none(Account.id == target.account_id)
            rows = media.completed(post.workspace_id, list(post.media_ids or [])) if post.media_ids else {}
            items = [MediaItem(media.public_url(m), rows[m].content_type, rows[m].size)
                     for m in post.media_ids or [] if m in rows]
            extra = _media_options(post.workspace_id, dict(target.options or {}))
        if target.platform_post_id:  # published already (a late answer counted): never again
            with db.atomic():
                if engine.finish(found, status="published"):
                    settle(post.id)
            return
        loaded = _Loaded(target, post, account, items, extra)
        progress = target.progress or None
        if progress and progress.get("phase") == FIRST_COMMENT:
            outcome = _first_comment(loaded, found, progress)
        elif progress and progress.get("reconcile"):
            outcome = _reconcile(loaded, found)
        else:
            outcome = _step(loaded, progress)
            # A next step due at once runs now, in the same hands, once its progress is stored.
            for _ in range(MAX_CHAINED_STEPS):
                if not (isinstance(outcome, PublishPending) and outcome.poll_after <= 0):
                    break
                progress = {**outcome.progress, "repeatable": outcome.repeatable}
                if not _store_progress(found, progress):
                    return
                outcome = _step(loaded, progress)
        if isinstance(outcome, PublishedPost) and _comment_text(loaded.target):
            # Live: its first comment next, at most once (a worker lost now leaves it `unknown`).
            progress = {"phase": FIRST_COMMENT, "published": [outcome.platform_post_id, outcome.url],
                        "repeatable": False}
            if not _store_progress(found, progress):
                return
            outcome = _first_comment(loaded, found, progress)
        if outcome is None:
            return
        done = outcome

        def write() -> None:
            with db.atomic():
                _finish(found, loaded, done)

        outcome_written(write)  # the platform's answer, written through a database restart too


def _media_options(workspace_id: str, options: dict[str, Any]) -> dict[str, Any]:
    """Media an option names (YouTube's `thumbnailMediaId`) as the adapter reads them: URL, type, size."""
    thumbnail_id = options.get("thumbnailMediaId")
    if not isinstance(thumbnail_id, str):
        return {}
    row = media.completed(workspace_id, [thumbnail_id]).get(thumbnail_id)
    if row is None:
        return {}
    return {"thumbnail": {"url": media.public_url(thumbnail_id), "contentType": row.content_type, "size": row.size}}


# -- the first comment ------------------------------------------------------------------------------
LOST_COMMENT = ("The process posting the first comment stopped during the platform call; it was not posted again: "
                "look under the post.")


def _comment_text(target: PostTarget) -> str | None:
    text = (target.options or {}).get("firstComment")
    return text if isinstance(text, str) and text else None


def _first_comment(loaded: _Loaded, found: engine.Claim, progress: dict[str, Any]) -> Outcome:
    """The post is live (its id in `progress`): comment under it once. A refusal or a lost answer is
    kept on the target (`firstComment.status`), never retried; only "wait" from the platform (nothing
    was posted) is tried again later."""
    platform_post_id, url = progress["published"]
    published = PublishedPost(str(platform_post_id), url)
    text = _comment_text(loaded.target) or ""

    def outcome(status: str, error: str | None, comment_id: str | None = None) -> Commented:
        return Commented(published, {"text": text, "status": status, "platform_comment_id": comment_id, "error": error})

    if loaded.account is None:
        return outcome("failed", "The account was deleted.")
    try:
        comment_id = adapters.call(loaded.account, lambda adapter, ctx: adapter.comment_on_post(
            ctx, platform_post_id=published.platform_post_id, text=text))
    except RetryLater as wait:
        if found.attempts < MAX_RETRY_LATER:
            return PublishPending(progress, poll_after=wait.delay_seconds, repeatable=False)
        return outcome("failed", f"The platform kept asking to wait; gave up after {found.attempts} attempts.")
    except Indeterminate as lost:
        return outcome("unknown", f"No answer from the platform: {lost.message}; not posted again: look under the "
                                  "post.")
    except ReauthRequired:
        return outcome("failed", "The platform refused the stored credentials; reconnect the account.")
    except PlatformFailure as failure:
        return outcome("failed", f"The platform refused the comment: {failure.message}")
    except Conflict as conflict:
        return outcome("failed", conflict.message)
    return outcome("posted", None, str(comment_id))


def _store_progress(found: engine.Claim, progress: dict[str, Any]) -> bool:
    """Keep a step's result before the next one (and renew the lease), if still in our hands."""
    with db.atomic():
        return engine.renew_lease(found, progress=_json(progress))


def _step(loaded: _Loaded, progress: dict[str, Any] | None) -> Outcome:
    if loaded.account is None:
        return Conflict("The account was deleted.")
    options = {**(loaded.target.options or {}), **loaded.extra_options}
    try:
        return adapters.call(loaded.account, lambda adapter, ctx: adapter.publish_step(
            ctx, text=loaded.text, media=loaded.items, options=options, progress=progress))
    except PlatformFailure as failure:
        return failure
    except Conflict as conflict:  # disconnected since the post was made
        return conflict


def _json(value: dict[str, Any] | None) -> str | None:
    return None if value is None else json.dumps(value, separators=(",", ":"))


def _finish(found: engine.Claim, loaded: _Loaded, outcome: Outcome) -> None:
    moment = clock.now()
    post_id = loaded.post.id
    if isinstance(outcome, PublishedPost):
        if engine.finish(found, status="published", at=moment, platform_post_id=outcome.platform_post_id,
                         url=outcome.url, published_at=moment, error=None, progress=None):
            settle(post_id)
        return
    if isinstance(outcome, Commented):
        if engine.finish(found, status="published", at=moment, platform_post_id=outcome.post.platform_post_id,
                         url=outcome.post.url, published_at=moment, error=None, progress=None,
                         first_comment=_json(outcome.comment)):
            settle(post_id)
        return
    if isinstance(outcome, PartlyPublished):
        # Live on the platform, a later part of it not: published with the reason, never again.
        if engine.finish(found, status="published", at=moment, platform_post_id=outcome.platform_post_id,
                         url=outcome.url, published_at=moment, error=outcome.message, progress=None):
            settle(post_id)
        return
    if isinstance(outcome, PublishPending):
        progress = {**outcome.progress, "repeatable": outcome.repeatable}
        engine.finish(found, status="queued", at=moment, progress=_json(progress),
                      next_attempt_at=moment + dt.timedelta(seconds=max(outcome.poll_after, 0.05)))
        return
    assert outcome is not None
    step = engine.decide(found, outcome, at=moment)
    if step.status == "unknown":
        assert isinstance(outcome, PlatformFailure)
        engine.finish(found, status="unknown", at=moment)
        _plan_reconcile(loaded.target.id, f"No answer from the platform: {outcome.message}.")
        return
    if step.again:
        engine.finish_next(found, step)
        return
    if engine.finish_next(found, step, at=moment, progress=None):
        settle(post_id)


# -- unknown targets -----------------------------------------------------------------------------
LOST_MESSAGE = "The process publishing this stopped during the platform call; it may or may not be live."
LOST_PARTLY = ("The process publishing this stopped during a platform call after its first part was live: what "
               "is live is kept and nothing is published again (a thread may be shorter than asked).")


def _plan_reconcile(target_id: str, why: str) -> None:
    """An `unknown` target: look for it on the platform after its processing time, or wait for a person."""
    target = PostTarget.get_by_id(target_id)
    capabilities = adapters.adapter(target.platform).capabilities
    progress = dict(target.progress or {})
    if capabilities.post_listing:
        progress["reconcile"] = True
        due: dt.datetime | None = clock.now() + dt.timedelta(seconds=capabilities.publish_settle_seconds)
        error = f"{why} It is looked for among the account's recent posts, never published again blindly."
    else:
        due = None
        error = (f"{why} {target.platform} does not list recent posts to check: look on the platform, then "
                 "retry the post if it is not there.")
    PostTarget.update(status="unknown", next_attempt_at=due, progress=progress, error=error,
                      updated_at=clock.now()).where(PostTarget.id == target_id).execute()
    if due is None:
        settle(target.post_id)


def lost(target_ids: list[str]) -> None:
    """The sweeper found these `publishing` past their lease (in its transaction)."""
    for target in PostTarget.select().where(PostTarget.id.in_(target_ids)):
        progress = dict(target.progress or {})
        if progress.get("phase") == FIRST_COMMENT:
            # The post is live; its comment may or may not be: published, the comment never again. The
            # claim token stays, so a late answer of that worker still records what became of it.
            platform_post_id, url = progress["published"]
            moment = clock.now()
            PostTarget.update(status="published", platform_post_id=platform_post_id, url=url, published_at=moment,
                              error=None, progress=None, updated_at=moment,
                              first_comment={"text": _comment_text(target), "status": "unknown",
                                             "platform_comment_id": None, "error": LOST_COMMENT}).where(
                PostTarget.id == target.id).execute()
            settle(target.post_id)
            continue
        if progress.get("live") and not progress.get("repeatable"):
            # Part of it is public (a thread's first post): published with the reason, nothing again.
            platform_post_id, url = progress["live"]
            PostTarget.update(status="published", platform_post_id=platform_post_id, url=url,
                              published_at=clock.now(), error=LOST_PARTLY, progress=None,
                              updated_at=clock.now()).where(PostTarget.id == target.id).execute()
            settle(target.post_id)
            continue
        if progress.get("repeatable") and not progress.get("reconcile"):
            # Lost during a step that may run twice (a status poll): run it again.
            PostTarget.update(status="queued", next_attempt_at=clock.now(), updated_at=clock.now()).where(
                PostTarget.id == target.id).execute()
            continue
        _plan_reconcile(target.id, LOST_MESSAGE)
    log.warning("%d post target(s) left unknown by a stopped worker", len(target_ids))


def _reconcile(loaded: _Loaded, found: engine.Claim) -> Outcome:
    target, account = loaded.target, loaded.account
    if account is None:
        return Conflict("The account was deleted.")
    try:
        recent = adapters.call(account, lambda adapter, ctx: adapter.recent_posts(ctx))
    except (PlatformFailure, Conflict) as failure:
        if found.attempts >= MAX_RECONCILE_ATTEMPTS or isinstance(failure, Unsupported):
            return failure
        with db.atomic():
            engine.finish(found, status="unknown", next_attempt_at=clock.now() + dt.timedelta(seconds=30))
        return None
    with connection():
        known = {row.platform_post_id for row in PostTarget.select(PostTarget.platform_post_id).where(
            PostTarget.account == account.id, PostTarget.platform_post_id.is_null(False))}
    for candidate in recent:
        if candidate.platform_post_id not in known and (candidate.text or "") == loaded.text:
            log.info("post target %s reconciled: found on %s", target.id, target.platform)
            return PublishedPost(candidate.platform_post_id, candidate.url)
    return Unsupported("Not found among the account's recent posts after the platform's processing time; "
                       "retry the post to publish it.")


# -- the post as a whole ---------------------------------------------------------------------------
def _waiting(target: PostTarget) -> bool:
    return target.status in ("queued", "publishing") or (target.status == "unknown"
                                                          and target.next_attempt_at is not None)


def settle(post_id: str) -> None:
    """Once every target has settled, the post is published, partial or failed, with its event.

    Runs in the transaction of the target's change; the first UPDATE locks the post's row (on
    PostgreSQL) so two targets settling at once cannot both miss the last one."""
    db.execute_sql(sql("UPDATE post SET updated_at = updated_at WHERE id = ?"), (post_id,))
    post = Post.get_or_none(Post.id == post_id)
    if post is None:
        return
    targets = list(PostTarget.select().where(PostTarget.post == post_id).order_by(PostTarget.position))
    if any(_waiting(t) for t in targets):
        return
    published = [t for t in targets if t.status == "published"]
    status = "published" if len(published) == len(targets) else ("failed" if not published else "partial")
    if status == post.status:
        return
    post.status = status
    post.published_at = max((t.published_at for t in published if t.published_at), default=None)
    post.updated_at = clock.now()
    post.save()
    posts.emit(post, f"post.{status}", targets)
    # The service did it (the worker, on the post's schedule or right after a person's request).
    audit.record(None, f"post.{status}", workspace_id=post.workspace_id, target=("post", post.id))


def retry(*, actor: Actor, post_id: str) -> PostRecord:
    """Publish again the targets that failed (and `unknown` ones a person has checked); published
    targets are never touched."""
    actor.require_write()
    post = posts.get_row(actor=actor, post_id=post_id)
    again = list(PostTarget.select().where(
        PostTarget.post == post.id,
        (PostTarget.status == "failed") | ((PostTarget.status == "unknown") & PostTarget.next_attempt_at.is_null())))
    if not again:
        raise Conflict("The post has no failed target to retry.")
    moment = clock.now()
    engine.restart(engine.kind(TARGET), [t.id for t in again], status="queued", next_attempt_at=moment, error=None,
                   progress=None)
    post.status = "publishing"
    post.updated_at = moment
    post.save()
    audit.record(actor, "post.retried", target=("post", post.id), details={"targets": len(again)})
    nudge([t.id for t in again])
    return posts.record(post)


# -- posts made natively on the platform ------------------------------------------------------------
def record_external(account: Account, *, platform_post_id: str, text: str | None, url: str | None = None) -> bool:
    """A post the account made on the platform itself (seen through a webhook or a listing), kept
    with `source: external`; once per platform id. Returns whether it was new."""
    if PostTarget.select().where(PostTarget.account == account.id,
                                 PostTarget.platform_post_id == platform_post_id).exists():
        return False
    moment = clock.now()
    post = Post.create(id=ids.new_id("post"), workspace=account.workspace_id, content=text or "", media_ids=[],
                       status="published", published_at=moment, source="external", created_at=moment,
                       updated_at=moment)
    PostTarget.create(id=ids.new_id("pt"), post=post.id, workspace=account.workspace_id, account=account.id,
                      profile_id=account.profile_id, platform=account.platform, status="published",
                      platform_post_id=platform_post_id, url=url, published_at=moment, created_at=moment,
                      updated_at=moment)
    return True


def on_native_post(account: Account, event: Any) -> None:
    """The inbound handler of `post` events (Telegram `channel_post`, a Page's `feed` post).

    A platform also announces the posts we publish (Facebook does), and its webhook may arrive before
    our target has stored the id: a post of ours with that text still in the platform's hands is
    taken to be this one, not an external post."""
    if not event.platform_message_id:
        return
    text = event.text or ""
    ours = (PostTarget.select(PostTarget.id).join(Post).where(
        PostTarget.account == account.id, PostTarget.status.in_(("queued", "publishing", "unknown")),
        (PostTarget.content == text) | (PostTarget.content.is_null() & (Post.content == text))).exists())
    if not ours:
        record_external(account, platform_post_id=event.platform_message_id, text=event.text)
