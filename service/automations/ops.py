"""Comment automations: a private-reply DM, and an optional public reply, for comments that match.

A comment reaches `comment_received` as a platform event, in the transaction that stores the event
once per account (so a webhook delivered twice is acted on once). For each active automation that
watches the comment's post (no `mediaIds`: every post, also later ones), in that transaction:

1. keywords are matched (`service/matching.py`); no match → logged with `reason: no_match`;
2. `oncePerUser`: the commenter is claimed in `automation_contact`, whose primary key makes ten
   concurrent comments from one person meet at the database: one wins, the others are skipped;
3. the DM is queued as an outbound message addressed by the comment (a private reply) in the
   conversation with the commenter, found or made as the inbox does; the outbound engine sends it
   at most once. The platforms take one private reply per comment within 7 days: an older comment,
   or one that already has its private reply (another automation's), gets none;
4. the public reply is a work row of this module's engine kind (`REPLY_WORK`), posted at most once
   (one per comment);
5. `comment.received` (once per comment) and `automation.triggered` events, and enrolment in the
   active `comment_automation` sequences that name the automation;
6. one log row per automation, in one statement, unique per (automation, comment): the record of
   what was done, and a second guard against acting twice.

The account's own comments (its public replies coming back as webhooks) never trigger. The log's
`dmStatus` is read from the message when asked, so it follows the send to its end.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from peewee import JOIN, fn

from kit import clock, ids, matching
from kit.errors import Conflict, FieldProblem, NotFound, ValidationFailed
from kit.pagination import Page, paginate, window
from kit.shapes import button_problems
from platforms.base import Button
from platforms.inbound import InboundEvent
from service.accounts import adapters
from service.accounts import ops as accounts
from service.automations import work
from service.automations.shapes import AutomationDeleted, AutomationStats
from service.automations.shapes import AutomationLog as LogRecord
from service.automations.shapes import CommentAutomation as AutomationRecord
from service.common import audit, events
from service.engine import core as engine
from service.identity.auth import Actor
from service.inbox import conversations, outbound
from service.sequences import ops as sequences
from storage import hot
from storage.hot import Prepared
from storage.models import (
    Account,
    AutomationContact,
    AutomationLog,
    CommentAutomation,
    Conversation,
    Message,
    PublicReply,
    Sequence,
)

log = logging.getLogger("switchboard.automations")

SENT = ("sent", "delivered", "read")
# A platform that keeps asking to slow down gets this many attempts at a public reply.


# -- reading -----------------------------------------------------------------------------------
def get_row(*, actor: Actor, automation_id: str) -> CommentAutomation:
    row = CommentAutomation.get_or_none(CommentAutomation.id == automation_id,
                                        CommentAutomation.workspace == actor.workspace_id)
    if row is None:
        raise NotFound("No comment automation with that id.")
    actor.require_profile(row.profile_id)
    return row


def _counts(query: Any) -> dict[str, int]:
    return {row[0]: int(row[1]) for row in query.tuples()}


def _stats(automation_ids: list[str]) -> dict[str, AutomationStats]:
    """Each automation's figures, counted from its log (four grouped counts for a whole page)."""
    if not automation_ids:
        return {}
    mine = AutomationLog.automation.in_(automation_ids)
    acted = AutomationLog.message_id.is_null(False) | AutomationLog.reply_id.is_null(False)
    count = fn.COUNT(AutomationLog.id)
    triggered = _counts(AutomationLog.select(AutomationLog.automation, count).where(mine, acted)
                        .group_by(AutomationLog.automation))
    skipped = _counts(AutomationLog.select(AutomationLog.automation, count)
                      .where(mine, AutomationLog.matched == True, ~acted)  # noqa: E712
                      .group_by(AutomationLog.automation))
    sent = _counts(AutomationLog.select(AutomationLog.automation, count)
                   .join(Message, on=(Message.id == AutomationLog.message_id))
                   .where(mine, Message.status.in_(SENT)).group_by(AutomationLog.automation))
    posted = _counts(AutomationLog.select(AutomationLog.automation, count)
                     .join(PublicReply, on=(PublicReply.id == AutomationLog.reply_id))
                     .where(mine, PublicReply.status == "posted").group_by(AutomationLog.automation))
    return {automation_id: AutomationStats(triggered=triggered.get(automation_id, 0),
                                           dms_sent=sent.get(automation_id, 0),
                                           replies_posted=posted.get(automation_id, 0),
                                           skipped=skipped.get(automation_id, 0))
            for automation_id in automation_ids}


def _records(rows: Iterable[CommentAutomation]) -> list[AutomationRecord]:
    rows = list(rows)
    stats = _stats([row.id for row in rows])
    for row in rows:
        setattr(row, "stats", stats[row.id])  # noqa: B010 - the record reads it as an attribute
    return [AutomationRecord.model_validate(row) for row in rows]


def get(*, actor: Actor, automation_id: str) -> AutomationRecord:
    return _records([get_row(actor=actor, automation_id=automation_id)])[0]


def list_automations(*, actor: Actor, account_id: str | None = None, status: str | None = None,
                     page: int | None = None, limit: int | None = None) -> Page:
    query = CommentAutomation.select().where(CommentAutomation.workspace == actor.workspace_id)
    if actor.profile_ids is not None:
        query = query.where(CommentAutomation.profile.in_(sorted(actor.profile_ids)))
    if account_id is not None:
        query = query.where(CommentAutomation.account == accounts.get_row(actor=actor, account_id=account_id).id)
    if status is not None:
        query = query.where(CommentAutomation.status == status)
    query = query.order_by(CommentAutomation.created_at, CommentAutomation.id)
    page, limit, offset = window(page, limit)
    total = query.count()
    rows = list(query.paginate(page, limit)) if offset < total else []
    return Page(AutomationRecord, list(_records(rows)), page, limit, total)


def list_logs(*, actor: Actor, automation_id: str, page: int | None = None, limit: int | None = None) -> Page:
    """What the automation did with each comment, newest first."""
    row = get_row(actor=actor, automation_id=automation_id)
    query = (
        AutomationLog.select(AutomationLog, Message.status.alias("dm_status"), PublicReply.status.alias("reply_status"))
        .join(Message, JOIN.LEFT_OUTER, on=(Message.id == AutomationLog.message_id))
        .switch(AutomationLog)
        .join(PublicReply, JOIN.LEFT_OUTER, on=(PublicReply.id == AutomationLog.reply_id))
        .where(AutomationLog.automation == row.id)
        .order_by(AutomationLog.created_at.desc(), AutomationLog.id.desc())
        .objects()
    )
    return paginate(query, page=page, limit=limit, record=LogRecord)


# -- writing -----------------------------------------------------------------------------------
def _button(label: str | None, url: str | None) -> tuple[str | None, str | None]:
    """`""` in either removes the button (both fields)."""
    if label == "" or url == "":
        return None, None
    return label, url


def _validate(account: Account, *, keywords: list[str], match_type: str, dm_text: str, label: str | None,
              url: str | None) -> None:
    capabilities = adapters.adapter(account.platform).capabilities
    problems: list[FieldProblem] = []
    if not (capabilities.comments and capabilities.private_replies):
        problems.append(FieldProblem("accountId", f"{account.platform} has no private replies to comments; use an "
                                                  "Instagram or Facebook account"))
    if match_type != "any" and not keywords:
        problems.append(FieldProblem("keywords", "is required unless matchType is any"))
    problems += button_problems(label, url, label_field="dmButtonLabel", url_field="dmButtonUrl")
    limit = capabilities.dm_text_limit
    if limit is not None and len(dm_text) > limit:
        problems.append(FieldProblem("dmText", f"must be at most {limit} characters on {account.platform}"))
    if problems:
        raise ValidationFailed("Some fields are not valid.", details=problems)


def create(
    *,
    actor: Actor,
    account_id: str,
    name: str,
    match_type: str,
    dm_text: str,
    media_ids: list[str] | None = None,
    keywords: list[str] | None = None,
    dm_button_label: str | None = None,
    dm_button_url: str | None = None,
    public_reply_text: str | None = None,
    once_per_user: bool = False,
    status: str = "active",
) -> AutomationRecord:
    account = accounts.get_row(actor=actor, account_id=account_id)
    actor.require_write()
    label, url = _button(dm_button_label, dm_button_url)
    keywords = list(keywords or [])
    _validate(account, keywords=keywords, match_type=match_type, dm_text=dm_text, label=label, url=url)
    moment = clock.now()
    row = CommentAutomation.create(
        id=ids.new_id("ca"), workspace=account.workspace_id, profile=account.profile_id, account=account.id,
        name=name, media_ids=list(dict.fromkeys(media_ids or [])), keywords=keywords, match_type=match_type,
        dm_text=dm_text, dm_button_label=label, dm_button_url=url, public_reply_text=public_reply_text,
        once_per_user=once_per_user, status=status, created_at=moment, updated_at=moment,
    )
    audit.record(actor, "automation.created", target=("automation", row.id))
    return _records([row])[0]


def update(*, actor: Actor, automation_id: str, **changes: Any) -> AutomationRecord:
    """Change the fields given; the others keep theirs. `dmButtonLabel: ""` or `dmButtonUrl: ""`
    removes the button; a label or URL alone pairs with the one stored."""
    row = get_row(actor=actor, automation_id=automation_id)
    actor.require_write()
    account = Account.get_by_id(row.account_id)
    label, url = row.dm_button_label, row.dm_button_url
    if "dm_button_label" in changes or "dm_button_url" in changes:
        label, url = _button(changes.get("dm_button_label", label), changes.get("dm_button_url", url))
    keywords = list(changes.get("keywords", row.keywords) or [])
    match_type = changes.get("match_type", row.match_type)
    dm_text = changes.get("dm_text", row.dm_text)
    _validate(account, keywords=keywords, match_type=match_type, dm_text=dm_text, label=label, url=url)
    for name in ("name", "match_type", "dm_text", "public_reply_text", "once_per_user", "status"):
        if name in changes:
            setattr(row, name, changes[name])
    if "media_ids" in changes:
        row.media_ids = list(dict.fromkeys(changes["media_ids"]))
    row.keywords, row.dm_button_label, row.dm_button_url = keywords, label, url
    row.updated_at = clock.now()
    row.save()
    audit.record(actor, "automation.updated", target=("automation", row.id))
    return _records([row])[0]


def delete(*, actor: Actor, automation_id: str) -> AutomationDeleted:
    """The automation goes with its log; DMs already queued still go, public replies not yet posted do not."""
    row = get_row(actor=actor, automation_id=automation_id)
    actor.require_write()
    replies = AutomationLog.select(AutomationLog.reply_id).where(AutomationLog.automation == row.id,
                                                                 AutomationLog.reply_id.is_null(False))
    PublicReply.delete().where(PublicReply.id.in_(replies), PublicReply.status == "pending").execute()
    row.delete_instance()
    audit.record(actor, "automation.deleted", target=("automation", row.id), details={"name": row.name})
    return AutomationDeleted(id=row.id, deleted=True)


# -- a comment arrives -------------------------------------------------------------------------
def _naive_utc(moment: dt.datetime) -> dt.datetime:
    return moment.astimezone(dt.UTC).replace(tzinfo=None) if moment.tzinfo is not None else moment


def _build_watching(account: str) -> Any:
    named = Sequence.select(Sequence.id).where(
        Sequence.account == account, Sequence.trigger == "comment_automation",
        Sequence.automation_id == CommentAutomation.id, Sequence.status == "active", Sequence.deleted_at.is_null())
    return (CommentAutomation.select(CommentAutomation, fn.EXISTS(named).alias("has_sequences"))
            .where(CommentAutomation.account == account, CommentAutomation.status == "active")
            .order_by(CommentAutomation.created_at, CommentAutomation.id))


# Every comment runs it: built once (storage/hot.py), not by peewee on every call.
_watching_query = Prepared(_build_watching, "account")


def _watching(account_id: str) -> list[CommentAutomation]:
    """The account's active automations, each knowing whether an active sequence names it (read in
    the same statement: a comment costs as few round trips as it can)."""
    return list(_watching_query(account=account_id))


def comment_received(account: Account, event: InboundEvent) -> None:
    """The inbound handler for comments (see the module docstring), in the event's transaction."""
    if event.from_self or not event.comment_id or event.contact_id == account.platform_account_id:
        return
    watching = [automation for automation in _watching(account.id)
                if not automation.media_ids or event.media_id in automation.media_ids]
    if not watching:
        return
    at = _naive_utc(event.occurred_at)
    comment_id = str(event.comment_id)
    handle = event.contact_handle or event.contact_name
    events.emit(workspace_id=account.workspace_id, type="comment.received", data={
        "accountId": account.id, "platform": account.platform, "commentId": comment_id, "mediaId": event.media_id,
        "commenterId": event.contact_id, "commenterHandle": handle, "text": event.text,
        "parentCommentId": event.parent_comment_id, "createdAt": clock.iso(at),
    })
    moment = clock.now()
    comment = _Comment(account, event, comment_id, at)
    rows = []
    for automation in watching:
        matched = matching.matches(event.text, automation.keywords or [], automation.match_type)
        entry = _Entry(id=ids.new_id("cal"), automation_id=automation.id, comment_id=comment_id,
                       media_id=event.media_id, commenter_id=event.contact_id, commenter_handle=handle,
                       text=event.text, matched=matched, reason=None if matched else "no_match", created_at=moment)
        if matched:
            _act(comment, automation, entry)
        rows.append(entry.row())
    # The event's own record already made this the only delivery acted on; the unique (automation,
    # comment) index is the second guard: a conflict here undoes the whole handler (its savepoint).
    hot.insert_many(AutomationLog, rows)


@dataclass
class _Entry:
    """A log row in the making (plain data: ten of them a comment)."""

    id: str
    automation_id: str
    comment_id: str
    media_id: str | None
    commenter_id: str | None
    commenter_handle: str | None
    text: str | None
    matched: bool
    reason: str | None
    created_at: dt.datetime
    conversation_id: str | None = None
    message_id: str | None = None
    reply_id: str | None = None
    dm_status: str | None = None
    reply_status: str | None = None

    def row(self) -> dict[str, Any]:
        return {"id": self.id, "automation": self.automation_id, "comment_id": self.comment_id,
                "media_id": self.media_id, "commenter_id": self.commenter_id,
                "commenter_handle": self.commenter_handle, "text": self.text, "matched": self.matched,
                "conversation_id": self.conversation_id, "message_id": self.message_id, "reply_id": self.reply_id,
                "reason": self.reason, "created_at": self.created_at}


class _Comment:
    """One comment as the automations that match it see it: the conversation with its author is
    found (or made) once, by the first automation that sends a DM."""

    def __init__(self, account: Account, event: InboundEvent, comment_id: str, at: dt.datetime) -> None:
        self.account, self.event, self.comment_id, self.at = account, event, comment_id, at
        # The event was new (its record was just stored), so the comment has no private reply yet;
        # the message table's unique index on the comment guards the rest.
        self.replied = False
        self._conversation: Conversation | None = None

    @property
    def conversation(self) -> Conversation:
        if self._conversation is None:
            self._conversation = conversations.conversation_with_commenter(self.account, self.event)
        return self._conversation


def _act(comment: _Comment, automation: CommentAutomation, entry: _Entry) -> None:
    """Send what the automation sends for this matching comment, and fill its log entry."""
    account = comment.account
    commenter = comment.event.contact_id or ""
    reason: str | None = None
    if comment.replied:
        reason = "already_replied"
    elif clock.now() - comment.at >= outbound.PRIVATE_REPLY_WINDOW:
        reason = "outside_messaging_window"
    if reason is None and automation.once_per_user and not _claim_commenter(automation.id, commenter):
        entry.reason = "once_per_user"
        return
    message: Message | None = None
    if reason is None:
        label, url = automation.dm_button_label, automation.dm_button_url
        # No savepoint: a second private reply to the comment would break the message table's unique
        # index, which undoes the whole handler (this event was new, so it cannot happen short of a bug).
        try:
            message = outbound.queue_outbound(
                comment.conversation, account, text=automation.dm_text,
                button=Button(label, url) if label and url else None, source="automation",
                comment_id=comment.comment_id, comment_at=comment.at,
            )
            comment.replied = True
        except Conflict:
            reason = "account_disconnected"
        except ValidationFailed as refused:
            reason = refused.code if refused.code != "validation_failed" else "not_sendable"
        if message is not None and not automation.once_per_user:
            _claim_commenter(automation.id, commenter)  # remembered, should oncePerUser be turned on later
    reply_id = _queue_public_reply(account, comment.comment_id, automation.public_reply_text) \
        if automation.public_reply_text else None
    entry.conversation_id = comment.conversation.id if message is not None else None
    entry.message_id = message.id if message is not None else None
    entry.reply_id = reply_id
    entry.reason = reason
    if message is None and reply_id is None:
        return
    entry.dm_status = message.status if message is not None else None
    entry.reply_status = "pending" if reply_id is not None else None
    events.emit(workspace_id=account.workspace_id, type="automation.triggered",
                data=LogRecord.model_validate(entry).dump())
    if message is not None and getattr(automation, "has_sequences", True):
        sequences.enroll_for_automation(comment.conversation, automation.id)


def _claim_commenter(automation_id: str, commenter_id: str) -> bool:
    """True when this call recorded the commenter for the automation (they had no DM from it)."""
    inserted = list(AutomationContact.insert(automation=automation_id, commenter_id=commenter_id,
                                             created_at=clock.now())
                    .on_conflict_ignore().returning(AutomationContact.commenter_id).execute())
    return bool(inserted)


def _queue_public_reply(account: Account, comment_id: str, text: str) -> str | None:
    """The public reply's work row (one per comment: another automation's reply wins); None if there is one."""
    moment = clock.now()
    new_id = ids.new_id("rpl")
    inserted = list(PublicReply.insert(
        id=new_id, account=account.id, comment_id=comment_id, text=text, status="pending", attempts=0,
        next_attempt_at=moment, created_at=moment, updated_at=moment,
    ).on_conflict_ignore().returning(PublicReply.id).execute())
    if not inserted:
        return None
    engine.nudge_after_commit(work.REPLY_WORK, [new_id])
    return new_id
