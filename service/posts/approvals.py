"""Approvals: with the workspace's `postApproval` on, a post a `member` makes to publish (now, at a
time, or in the queue) waits as `pending_approval` until an owner or an admin approves it (it then
goes on as it would have) or rejects it with a reason (`rejected`). Drafts are not held, nor posts
made with an API key. Each step writes its event and an audit row in the transaction of the change.
"""

from __future__ import annotations

from typing import Any

from kit import clock
from kit.errors import Conflict
from service.common import audit
from service.identity.auth import Actor
from service.posts.records import emit, get_row, record
from service.posts.shapes import Post as PostRecord
from storage.models import Post, PostTarget, Workspace

REVIEW = "approve or reject posts"


def held(actor: Actor, post: Post) -> bool:
    """Whether this new post waits: a member's, to publish, in a workspace that asks for approval."""
    if actor.role != "member" or post.status not in ("scheduled", "publishing"):
        return False
    return bool(Workspace.select(Workspace.post_approval).where(Workspace.id == post.workspace_id).scalar())


def hold(actor: Actor, post: Post) -> None:
    """Keep what the post would have done, and take its targets off the schedule meanwhile."""
    targets = list(PostTarget.select().where(PostTarget.post == post.id))
    due = {t.id: clock.iso(t.next_attempt_at) if t.next_attempt_at else None for t in targets}
    Post.update(status="pending_approval", approval={"status": post.status, "due": due}).where(
        Post.id == post.id).execute()
    PostTarget.update(next_attempt_at=None).where(PostTarget.post == post.id).execute()
    post.status, post.approval = "pending_approval", {"status": post.status, "due": due}
    emit(post, "post.approval_requested")
    audit.record(actor, "post.approval_requested", target=("post", post.id))


def _waiting(actor: Actor, post_id: str) -> Post:
    post = get_row(actor=actor, post_id=post_id)
    actor.require_role("admin", REVIEW)
    actor.require_write()
    actor.require_full_scope(REVIEW)  # a key limited to profiles does not review: owners, admins, workspace keys
    if post.status != "pending_approval":
        raise Conflict(f"The post is {post.status}, not waiting for approval.")
    return post


def approve(*, actor: Actor, post_id: str) -> PostRecord:
    """The post goes on as it would have: published now (also when its time passed meanwhile) or at its time."""
    post = _waiting(actor, post_id)
    plan: dict[str, Any] = post.approval or {}
    moment = clock.now()
    due = {target_id: clock.parse_iso(at) if at else None for target_id, at in (plan.get("due") or {}).items()}
    late = plan.get("status") == "publishing" or any(at is not None and at <= moment for at in due.values())
    status = "publishing" if late else "scheduled"
    target_ids = []
    for target_id, at in due.items():
        PostTarget.update(next_attempt_at=moment if late else at).where(PostTarget.id == target_id).execute()
        target_ids.append(target_id)
    Post.update(status=status, approval=None, updated_at=moment).where(Post.id == post.id).execute()
    post = Post.get_by_id(post.id)
    emit(post, "post.approved")
    audit.record(actor, "post.approved", target=("post", post.id))
    from service.posts import ops  # it holds posts through here: the one way back

    ops._after_write(post, target_ids)
    return record(post)


def reject(*, actor: Actor, post_id: str, reason: str) -> PostRecord:
    post = _waiting(actor, post_id)
    Post.update(status="rejected", approval=None, rejection_reason=reason, updated_at=clock.now()).where(
        Post.id == post.id).execute()
    post = Post.get_by_id(post.id)
    emit(post, "post.rejected")
    audit.record(actor, "post.rejected", target=("post", post.id), details={"reason": reason})
    return record(post)


def pending(*, actor: Actor) -> list[PostRecord]:
    """The posts waiting for review, oldest first (the dashboard's queue)."""
    query = Post.select().where(Post.workspace == actor.workspace_id, Post.status == "pending_approval")
    return [record(post) for post in query.order_by(Post.created_at, Post.id)
            if actor.profile_ids is None or _within(actor, post)]


def _within(actor: Actor, post: Post) -> bool:
    return all(actor.sees_profile(t.profile_id) for t in PostTarget.select(PostTarget.profile_id).where(
        PostTarget.post == post.id))
