"""A post as the front doors show it (`record`), its events, and the one read that every posts module
shares (`get_row`): the bottom of the posts modules, which import it and never the other way."""

from __future__ import annotations

from typing import Any

from kit.errors import NotFound
from service.common import events
from service.identity.auth import Actor
from service.posts.shapes import Post as PostRecord
from service.posts.shapes import Target
from storage.models import Post, PostTarget


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


def get_row(*, actor: Actor, post_id: str) -> Post:
    post = Post.get_or_none(Post.id == post_id, Post.workspace == actor.workspace_id)
    if post is None:
        raise NotFound("No post with that id.")
    if actor.profile_ids is not None:
        for target in PostTarget.select(PostTarget.profile_id).where(PostTarget.post == post.id):
            actor.require_profile(target.profile_id)
    return post


def options_of(target: Any) -> dict[str, Any]:
    return dict(target.options) if target.options is not None else {}
