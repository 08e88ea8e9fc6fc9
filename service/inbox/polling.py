"""Inboxes read by polling, as a kind of the engine (`POLL_WORK`): each account's `inbox_poll` chore.

Which accounts are polled (from an interval after they connect): YouTube channels (their comment
threads: YouTube has no webhook for comments), X accounts where no Account Activity webhook is heard
(`polls.WEBHOOK_FRESH`), and TikTok accounts once, to learn whether they are Business Accounts
(Business Messaging itself arrives by webhook). Every `SWITCHBOARD_INBOX_POLL_SECONDS` (default 60) per account.

How a poll stays exactly-once in effect, whatever the number of workers and whoever dies:
- The chore row is armed when its own `next_attempt_at` has come (`arm_when_due`), and a run sets
  the next one as it settles: one claim per account per interval, however many sweepers armed it.
- The platform is read outside any transaction, from the stored cursor, newest first, back to it.
- The messages read, the new cursor and the chore's settling commit in one transaction, only if
  the claim is still this worker's. A worker killed before that commit changed nothing: its lease
  runs out, the chore is handed out again (at least once: reading twice harms nothing) and reads
  the same items from the same cursor. Each message is stored once anyway (its inbound record is
  unique per account and platform message id), so a webhook and a poll of the same X DM meet too.
- YouTube's quota is counted before each page (`polls.spend`); a poll that finds the budget spent
  waits for the next quota day.
- YouTube lists a channel's threads newest first by their top-level comment, so a new reply under an
  older thread is not on the pages read back to the cursor. The threads of the account's
  conversations active in the last week (`RECENT_THREADS`, up to 50) are read again by id, one more
  page of quota a poll; what was stored already is stored once.
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass
from typing import Any, Literal

from kit import clock, metrics, settings
from kit.errors import Conflict
from platforms import inbound as platform_inbound
from platforms.base import PlatformFailure, ReauthRequired, RetryLater
from platforms.inbound import InboundEvent
from service.accounts import adapters
from service.engine import core as engine
from service.inbox import polls
from service.inbox.inbound import store_events
from storage.db import connection, db
from storage.hot import by_id, run_fixed
from storage.models import Account, InboxPoll

log = logging.getLogger("switchboard.polls")

POLLED = ("youtube", "x", "tiktok")
BATCH = 200
MAX_PAGES = 10  # back to the cursor; past this many pages a burst is read on the next poll
RECENT_THREADS = dt.timedelta(days=7)
THREADS_BY_ID = 50  # commentThreads.list takes at most 50 ids
# Written out, on the (account, activity_at) index: it runs on every YouTube poll.
_RECENT = ("SELECT external_conversation_id FROM conversation WHERE account_id = ? AND activity_at >= ?"
           " AND external_conversation_id IS NOT NULL ORDER BY activity_at DESC LIMIT ?")

Outcome = Literal["read", "quota", "later", "reauth_needed", "gone", "checked"]


def interval() -> dt.timedelta:
    return dt.timedelta(seconds=settings.current().inbox_poll_seconds)


# Written out: it runs on every scheduler tick, and building it with peewee (three queries, their
# expressions and their SQL) cost more CPU than the database's own work on it.
_DUE = ("SELECT id FROM account WHERE status = 'connected' AND needs_reauth = ? AND connected_at <= ?"  # noqa: S608
        " AND platform IN (" + ", ".join(f"'{name}'" for name in POLLED) + ")"
        " AND id NOT IN (SELECT account_id FROM account_chore WHERE chore = 'inbox_poll'"
        " AND (status != 'idle' OR next_attempt_at > ?))"
        " AND id NOT IN (SELECT account_id FROM inbox_poll WHERE (platform = 'x' AND webhook_at > ?)"
        " OR (platform = 'tiktok' AND business IS NOT NULL))"
        " ORDER BY id LIMIT ?")


def _due(limit: int = BATCH) -> list[dict[str, str]]:
    """The poll chores to arm now: connected accounts of the polled platforms whose chore is idle and
    due (or not made yet), less X accounts whose webhook is live and TikTok accounts already checked.

    A newly connected account is first read an interval after connecting: connecting made its own
    calls, and whoever tries the account at once (the sandbox's `faults` arm "the next call") should
    meet only the calls they made."""
    moment = clock.now()
    rows = run_fixed(_DUE, (False, moment - interval(), moment, moment - polls.WEBHOOK_FRESH, limit)).fetchall()
    return [{"id": f"inbox_poll_{row[0]}", "account_id": row[0], "chore": "inbox_poll"} for row in rows]


@dataclass
class _Read:
    events: list[InboundEvent]
    cursor: str | None


class _Spent(Exception):
    """YouTube's poll budget for today is spent."""


def run(chore_id: str) -> Outcome | None:
    """The engine's run of one armed poll: None when it was not ours to run."""
    outcome = _run(chore_id)
    if outcome is not None:
        metrics.inbox_poll(outcome)
    return outcome


def _run(chore_id: str) -> Outcome | None:
    with connection():
        with db.atomic():
            found = engine.claim(POLL_WORK, chore_id)
            if found is None:
                return None
            account = by_id(Account, found.columns["account_id"])
            if account is None or account.status != "connected":
                engine.settle_idle(found, next_attempt_at=clock.now() + interval())
                return "gone"
            # The first page's quota is counted with the claim (one transaction less a poll).
            paid, cursor = polls.begin(account, units=polls.POLL_UNITS if account.platform == "youtube" else 0)
            if not paid:
                engine.settle_idle(found, next_attempt_at=polls.quota_resets_at())
                log.info("account %s: today's YouTube poll budget is spent; polling resumes with the next quota "
                         "day", account.id)
                return "quota"
        if account.platform == "tiktok":
            return _check_business(found, account)
        try:
            read = _read(account, cursor)
        except _Spent:
            with db.atomic():
                engine.settle_idle(found, next_attempt_at=polls.quota_resets_at())
            return "quota"
        except (ReauthRequired, Conflict):  # flagged `needsReauth` by the call, or disconnected meanwhile
            with db.atomic():
                engine.settle_idle(found, next_attempt_at=clock.now() + interval())
            return "reauth_needed"
        except PlatformFailure as failure:
            wait = max(failure.delay_seconds, interval().total_seconds()) if isinstance(failure, RetryLater) else (
                interval().total_seconds())
            log.info("polling account %s: %s; tried again in %.0f s", account.id, failure.message, wait)
            with db.atomic():
                engine.settle_idle(found, next_attempt_at=clock.now() + dt.timedelta(seconds=wait))
            return "later"
        with db.atomic():
            # The messages, the cursor and the chore move together, or not at all.
            if not engine.settle_idle(found, next_attempt_at=clock.now() + interval()):
                return None  # the lease ran out and another worker has it: its commit counts
            if read.events:
                store_events(account, read.events)
            polls.record_read(account.id, read.cursor)
    return "read"


def _check_business(found: engine.Claim, account: Account) -> Outcome:
    """TikTok: ask once whether the account is a Business Account (its capabilities say so)."""
    try:
        business = adapters.call(account, lambda adapter, ctx: adapter.business_messaging(ctx))
    except (PlatformFailure, Conflict):
        business = None  # asked again after an interval
    with db.atomic():
        if engine.settle_idle(found, next_attempt_at=clock.now() + interval()) and business is not None:
            InboxPoll.update(business=business, polled_at=clock.now(), updated_at=clock.now()).where(
                InboxPoll.account == account.id).execute()
    return "checked"


def _page(account: Account, page_token: str | None) -> dict[str, Any]:
    if account.platform == "youtube" and page_token is not None:  # the first page was counted at the claim
        with db.atomic():  # counted before the call: the budget is never overrun
            if not polls.spend(account, polls.POLL_UNITS):
                raise _Spent
    return adapters.call(account, lambda adapter, ctx: adapter.inbox_page(ctx, page_token=page_token))


def _read(account: Account, cursor: str | None) -> _Read:
    """The platform's pages, newest first, back to the cursor (the first poll reads one page)."""
    events: list[InboundEvent] = []
    listed: set[str | None] = set()  # the threads (YouTube) on the pages read
    token: str | None = None
    newest = cursor
    for _ in range(MAX_PAGES):
        page = _page(account, token)
        found = _events(account, page)
        listed |= {event.contact_id for event in found}
        fresh = [event for event in found if _after(account.platform, event, cursor)]
        events += fresh
        for event in fresh:
            newest = _newer(account.platform, newest, event)
        token = _next_token(account.platform, page)
        reached = cursor is None or len(fresh) < len(found) or (account.platform == "youtube" and _older_thread(
            page, cursor))
        if reached or not token:
            break
    if account.platform == "youtube":
        events += _recent_threads(account, listed)
    # Oldest first, as they happened: a thread's first comment before its replies.
    events.sort(key=lambda event: event.occurred_at)
    return _Read(events, newest)


def _recent_threads(account: Account, seen: set[str | None]) -> list[InboundEvent]:
    """The comments of the account's recently active threads that the pages read did not list, read
    again by id (their replies may be new; the cursor does not apply: they are older threads)."""
    rows = run_fixed(_RECENT, (account.id, clock.now() - RECENT_THREADS, THREADS_BY_ID + len(seen))).fetchall()
    threads = [str(row[0]) for row in rows if row[0] not in seen]
    if not threads:
        return []
    with db.atomic():
        if not polls.spend(account, polls.POLL_UNITS):
            return []  # today's budget is spent: the new threads above are kept, these wait
    page = adapters.call(account, lambda adapter, ctx: adapter.inbox_threads(
        ctx, thread_ids=threads[:THREADS_BY_ID]))
    return platform_inbound.parse_youtube_threads(account.platform_account_id, page)


def _events(account: Account, page: dict[str, Any]) -> list[InboundEvent]:
    if account.platform == "x":
        return platform_inbound.parse_x_dm_events(account.platform_account_id, page)
    return platform_inbound.parse_youtube_threads(account.platform_account_id, page)


def _next_token(platform: str, page: dict[str, Any]) -> str | None:
    token = (page.get("meta") or {}).get("next_token") if platform == "x" else page.get("nextPageToken")
    return str(token) if token else None


def _position(platform: str, event: InboundEvent) -> str:
    """X: the DM event's id (ids grow with time); YouTube: the comment's instant."""
    if platform == "x":
        return (event.platform_message_id or "").rjust(24, "0")
    return event.occurred_at.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _after(platform: str, event: InboundEvent, cursor: str | None) -> bool:
    # YouTube stamps to the second: a comment of the cursor's own second is read again (and stored once).
    if cursor is None:
        return True
    position = _position(platform, event)
    return position > cursor if platform == "x" else position >= cursor


def _newer(platform: str, cursor: str | None, event: InboundEvent) -> str:
    position = _position(platform, event)
    return position if cursor is None or position > cursor else cursor


def _older_thread(page: dict[str, Any], cursor: str) -> bool:
    """A page that lists a thread started before the cursor reaches it: older threads follow."""
    for event in platform_inbound.parse_youtube_threads("", page):
        if event.parent_comment_id is None and _position("youtube", event) < cursor:
            return True
    return False


def lease_seconds() -> float:
    # A few platform calls, as a message's send.
    return settings.current().send_lease_seconds


POLL_WORK = engine.Kind(
    name="inbox_poll", table="account_chore", scope="chore = 'inbox_poll'", ready=("due",), idle="idle",
    arm=_due, arm_when_due=True, run=run, lease_seconds=lease_seconds, returning=("account_id",),
    sweep_batch=BATCH, sweep_batches_per_tick=5,
)
