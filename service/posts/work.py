"""Deleting a published post on its platforms, as a kind of the engine (`DELETION_WORK`).

`DELETE /v1/posts/{id}?fromPlatforms=true` writes one `PostDeletion` row per target that is live
(in the request's transaction, marked in hand), runs them itself and answers with what each platform
did; the post goes once every one of its deletions has settled. A process that stops in between
leaves the rest to the engine: the sweep hands them out once their lease runs out, and the last one
to settle takes the post away.

At least once: the adapter contract says deleting a post that is already gone succeeds (each adapter
maps its platform's not-found to success), so a deletion whose worker died is simply run again; at
worst the platform hears a second delete of what is gone. A refusal is not retried: the request
answers with it at once, as it did when the calls ran inline.
"""

from __future__ import annotations

import logging

from kit import clock, ids
from kit.errors import Conflict
from kit.settings import Settings
from platforms.base import PlatformFailure, Unsupported
from service.accounts import adapters
from service.engine import core as engine
from service.engine.outcomes import Policy
from service.posts.shapes import PlatformDeletion
from storage.db import connection, db
from storage.models import Account, Post, PostDeletion, PostTarget

log = logging.getLogger("switchboard.posts")


def queue_deletions(post_id: str) -> list[str]:
    """A deletion row per live target of the post, in the caller's transaction, in hand: the caller
    runs them (`delete_now`) once it commits, and the sweeper only if the caller dies first."""
    targets = list(PostTarget.select().where(PostTarget.post == post_id, PostTarget.platform_post_id.is_null(False))
                   .order_by(PostTarget.position))
    moment = clock.now()
    rows = [{"id": ids.new_id("pdel"), "post_id": post_id, "account_id": target.account_id,
             "platform": target.platform, "platform_post_id": target.platform_post_id, "position": position,
             "status": "pending", "attempts": 0, "next_attempt_at": moment, "nudged_at": moment,
             "created_at": moment, "updated_at": moment} for position, target in enumerate(targets)]
    if rows:
        PostDeletion.insert_many(rows).execute()
    return [str(row["id"]) for row in rows]


def _call(row: PostDeletion) -> PlatformFailure | Conflict | None:
    """Delete it on its platform (outside any transaction): None, or why not."""
    with connection():
        account = Account.get_or_none(Account.id == row.account_id)
    try:
        if account is None:
            raise Conflict("The account was deleted.")
        platform_post_id = row.platform_post_id
        adapters.call(account, lambda adapter, ctx: adapter.delete_post(ctx, platform_post_id=platform_post_id))
    except (PlatformFailure, Conflict) as failure:
        return failure
    return None


def run(deletion_id: str, *, forget: bool = True) -> None:
    """The engine's run of one deletion, if it is due and free. With `forget`, the post goes once
    its last deletion settles (the request that made them passes False: it answers first)."""
    with connection():
        with db.atomic():
            found = engine.claim(DELETION_WORK, deletion_id)
            if found is None:
                return
            row = PostDeletion.get_by_id(deletion_id)
        failure = _call(row)
        with db.atomic():
            if failure is None:
                held = engine.finish(found, status="deleted", error=None)
            else:
                held = engine.fail(found, failure) is not None
            if held and forget:
                forget_when_settled(row.post_id)


def forget_when_settled(post_id: str) -> bool:
    """The post (with its targets) and its deletion rows go once none of them is pending."""
    if PostDeletion.select().where(PostDeletion.post_id == post_id, PostDeletion.status == "pending").exists():
        return False
    Post.delete().where(Post.id == post_id).execute()
    PostDeletion.delete().where(PostDeletion.post_id == post_id).execute()
    return True


def delete_now(post_id: str, deletion_ids: list[str]) -> list[PlatformDeletion]:
    """Run the request's deletions one after the other and answer with what each platform did."""
    for deletion_id in deletion_ids:
        try:
            run(deletion_id, forget=False)
        except Exception:  # one fault must not keep the others from running; the sweeper retries it
            log.exception("deleting post %s on its platform (%s) failed", post_id, deletion_id)
    with connection(), db.atomic():
        rows = list(PostDeletion.select().where(PostDeletion.id.in_(deletion_ids)).order_by(PostDeletion.position))
        outcomes = [PlatformDeletion(account_id=row.account_id, platform=row.platform,
                                     deleted=row.status == "deleted",
                                     error=row.error if row.status != "pending" else "Still being deleted.")
                    for row in rows]
        forget_when_settled(post_id)
    return outcomes


def lease_seconds(settings: Settings) -> float:
    # One platform call, as a message's send.
    return settings.send_lease_seconds


# One attempt: the request that asked answers with each platform's refusal at once (a platform that
# asks to wait is a refusal too: the caller may ask again). A worker that died mid-call leaves the
# row to run again (at least once: deleting what is gone succeeds).
DELETION_POLICY = Policy(
    retry_status="pending", failed_status="failed", max_attempts=1,
    gave_up_text="The platform asked to wait; ask again later.",
    failed_texts=((Unsupported, "The platform does not let apps delete posts: {message}; delete it on the platform."),
                  (PlatformFailure, "The platform refused: {message}")),
    conflict_text=None,
)

DELETION_WORK = engine.Kind(
    name="post_deletion", table="post_deletion", ready=("pending",), run=run, lease_seconds=lease_seconds,
    policy=DELETION_POLICY, sweep_batch=100, sweep_batches_per_tick=1,
)
