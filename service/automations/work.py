"""A comment automation's public reply as a kind of the engine (`REPLY_WORK`).

The reply's row is written with the comment's log (ops.py); a worker claims it, posts it outside any
transaction and finishes it. At most once: a public reply is seen by everyone, so one whose call had
no answer, or whose worker died during the call, ends `unknown` and is never posted again.
"""

from __future__ import annotations

from kit.errors import Conflict
from platforms.base import PlatformFailure
from service.accounts import adapters
from service.engine import core as engine
from service.engine.outcomes import Policy
from storage.db import connection, db
from storage.models import Account, PublicReply

MAX_REPLY_ATTEMPTS = 8
REPLY_LEASE_SECONDS = 60.0


def post_reply(reply_id: str) -> None:
    """One attempt at one public reply, if it is due and free; outside any transaction."""
    with connection():
        with db.atomic():
            found = engine.claim(REPLY_WORK, reply_id)
            if found is None:
                return
            reply = PublicReply.get_by_id(reply_id)
            account = Account.get_by_id(reply.account_id)
        comment_id, text = reply.comment_id, reply.text
        outcome: str | PlatformFailure | Conflict
        try:
            outcome = adapters.call(account, lambda adapter, ctx: adapter.public_reply(
                ctx, comment_id=comment_id, text=text))
        except PlatformFailure as failure:
            outcome = failure
        except Conflict as conflict:
            outcome = conflict
        with db.atomic():
            _finish_reply(found, outcome)


def _finish_reply(found: engine.Claim, outcome: str | PlatformFailure | Conflict) -> None:
    if isinstance(outcome, str):
        engine.finish(found, status="posted", platform_reply_id=outcome, error=None)
        return
    engine.fail(found, outcome)


def _lost(reply_ids: list[str]) -> None:
    PublicReply.update(
        error="The process posting this reply stopped during the platform call; it may or may not have been posted, "
              "so it is not posted again."
    ).where(PublicReply.id.in_(reply_ids)).execute()


# At most once: a public reply is seen by everyone, so one that had no answer is never posted again.
REPLY_POLICY = Policy(
    retry_status="pending", failed_status="failed", lost_status="unknown", max_attempts=MAX_REPLY_ATTEMPTS,
    retry_text="The platform asked to slow down.",
    lost_text="No answer from the platform: {message}. It may or may not have been posted, so it is not posted again.",
)

REPLY_WORK = engine.Kind(
    name="public_reply", table="public_reply", ready=("pending",), in_flight="posting", lost="unknown",
    on_lost=_lost, run=post_reply, lease_seconds=lambda settings: REPLY_LEASE_SECONDS, policy=REPLY_POLICY,
)
