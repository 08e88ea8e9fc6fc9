"""Posts: one content published to several accounts, each a target that the engine publishes once.

A post is a `draft` (no time, not published), `scheduled` (its targets are engine rows due at
`scheduledFor`: the sweeper is the scheduler), or published now (`publishNow`: its targets are
due at once). From the first target a worker takes, the post is `publishing`; when every target has
settled it is `published`, `partial` or `failed`, and the matching `post.*` event is written in that
transaction. How one target is published exactly once is `service/posts/publishing.py`.

Targets are validated against each platform's capabilities and rules before anything is saved
(`checks.py`); lists and the calendar are `listing.py`; the record and its events `records.py`.
The posts modules import one way: `records` ← `checks`, `listing`, `publishing`, `approvals` ← `ops`.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from kit import clock, ids
from kit.errors import Conflict, ValidationFailed
from service.common import audit, idempotency
from service.identity.auth import Actor
from service.posts import approvals, publishing, queue, work
from service.posts.checks import TextMeasure, check, measure, preview
from service.posts.listing import CalendarEntry, calendar, list_posts, published_counts
from service.posts.records import emit, get_row, options_of, record
from service.posts.shapes import Post as PostRecord
from service.posts.shapes import PostDeleted
from storage.db import db
from storage.models import Account, Post, PostTarget

# What the front doors call here, wherever it is written.
__all__ = [
    "CalendarEntry", "TextMeasure", "calendar", "check", "create", "delete", "delete_for_account", "editable", "get",
    "get_row", "list_posts", "measure", "preview", "published_counts", "record", "update",
]


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
            platform=account.platform, position=position, content=target.content, options=options_of(target),
            status="queued", next_attempt_at=target_due if post.status in ("scheduled", "publishing") else None,
            # Scheduled rows are the sweeper's; rows due now are nudged after commit.
            nudged_at=None, created_at=moment, updated_at=moment,
        )
        made.append(target_id)
    return made


def _after_write(post: Post, target_ids: list[str]) -> None:
    if post.status == "publishing":
        publishing.nudge(target_ids)
    elif post.status == "scheduled":
        emit(post, "post.scheduled")


def _check_queue_choice(add_to_queue: bool | None, scheduled_for: str | None, publish_now: bool | None) -> None:
    if add_to_queue and (scheduled_for is not None or publish_now):
        raise ValidationFailed.field("addToQueue", "give addToQueue, scheduledFor or publishNow: one of them")


def _queue_slots(add_to_queue: bool | None, accounts: list[Account]) -> dict[str, dt.datetime] | None:
    return queue.claim_slots(accounts) if add_to_queue else None


def create(*, actor: Actor, content: str, targets: list[Any], media_ids: list[str] | None = None,
           scheduled_for: str | None = None, timezone: str | None = None, publish_now: bool | None = None,
           add_to_queue: bool | None = None) -> PostRecord:
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
        audit.record(actor, "post.created", target=("post", post.id), details={"status": post.status})
        if approvals.held(actor, post):  # a member's post waits for an owner or an admin
            approvals.hold(actor, post)
        else:
            _after_write(post, target_ids)
        # Under an Idempotency-Key, the post is the key's: a retry after a crash finds it, never a second.
        idempotency.attach(post.id)
        return record(post)


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
        audit.record(actor, "post.updated", target=("post", post.id), details={"status": post.status})
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


def delete(*, actor: Actor, post_id: str, from_platforms: bool | None = None) -> PostDeleted:
    """Draft or scheduled: deleted (a scheduled one with `post.cancelled`). Published or partial: 409,
    unless `from_platforms`, which deletes it on each platform that allows it first. Failed:
    deleted (nothing of it is live)."""
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
            audit.record(actor, "post.deleted", target=("post", post_id), details={"status": status})
            return PostDeleted(id=post_id, deleted=True, platforms=[])
        if status == "publishing" or not from_platforms:
            raise Conflict(f"A {status} post is live on its platforms: delete it with ?fromPlatforms=true, "
                           "which also deletes it there." if status != "publishing" else
                           "The post is publishing; wait until it settles.")
        # Engine work, run by this request once written; a worker finishes it if the request dies.
        deletions = work.queue_deletions(post_id)
        audit.record(actor, "post.deleted", target=("post", post_id), details={"status": status, "fromPlatforms": True})
    return PostDeleted(id=post_id, deleted=True, platforms=work.delete_now(post_id, deletions))


def delete_for_account(account_id: str) -> int:
    """Permanent deletion of an account takes its post targets with it."""
    return int(PostTarget.delete().where(PostTarget.account == account_id).execute())
