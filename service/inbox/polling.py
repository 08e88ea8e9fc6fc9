"""Inboxes read by polling, as a kind of the engine (`POLL_WORK`): each account's `inbox_poll` chore.

Which accounts are polled (from an interval after they connect) is what each platform's
`inbox_rules` declare (`platforms/<name>/rules.py`): YouTube channels (their comment threads: YouTube
has no webhook for comments), X accounts where no Account Activity webhook is heard
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

import contextlib
import datetime as dt
import functools
import logging
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from kit import clock, metrics
from kit.errors import Conflict
from platforms import registry
from platforms.base import PlatformFailure
from platforms.inbound import InboundEvent
from platforms.rules import InboxRules
from service.accounts import adapters
from service.common.configured import Configured
from service.engine import core as engine
from service.inbox import inbound, polls
from service.inbox.inbound import store_events
from storage.db import connection, db, is_postgres
from storage.hot import from_row, run_fixed
from storage.models import Account, InboxPoll

settings = Configured(__name__)  # handed in by the composition root (wire)

log = logging.getLogger("switchboard.polls")

BATCH = 200
MAX_PAGES = 10  # back to the cursor; past this many pages a burst is read on the next poll
RECENT_THREADS = dt.timedelta(days=7)
THREADS_BY_ID = 50  # commentThreads.list takes at most 50 ids
# Written out, on the (account, activity_at) index: it runs on every YouTube poll.
_RECENT = ("SELECT external_conversation_id FROM conversation WHERE account_id = ? AND activity_at >= ?"
           " AND external_conversation_id IS NOT NULL ORDER BY activity_at DESC LIMIT ?")

POLL = "inbox_poll"  # the engine's kind (work.py: POLL_WORK)
Outcome = Literal["read", "quota", "failed", "gone", "checked"]


def interval() -> dt.timedelta:
    return dt.timedelta(seconds=settings().inbox_poll_seconds)


_EPOCH = dt.datetime(1970, 1, 1)


def next_poll(account_id: str, after: dt.datetime) -> dt.datetime:
    """When the account is next polled, about an interval after `after`: at its own instant of the
    interval (its phase, from its id), the first one at least half an interval on. Accounts whose
    chores were armed together (every account at a first start, or after a long stop) would
    otherwise keep polling together, all in the same second of every interval; by their phases,
    10,000 accounts at 60 s are some 167 polls in each second instead of 10,000 in one."""
    seconds = interval().total_seconds()
    phase = zlib.crc32(account_id.encode()) / 2**32 * seconds
    earliest = (after - _EPOCH).total_seconds() + seconds / 2
    slot = earliest - earliest % seconds + phase
    if slot < earliest:
        slot += seconds
    return _EPOCH + dt.timedelta(seconds=slot)


def _names(test: Callable[[InboxRules], bool]) -> str:
    """The platforms whose inbox rules pass `test`, as an SQL list of literals (names of our own)."""
    return ", ".join(f"'{name}'" for name in registry.platforms_where(lambda cls: test(cls.inbox_rules))) or "''"


@functools.cache
def _due_sql() -> str:
    """Written out: it runs on every scheduler tick, and building it with peewee (three queries, their
    expressions and their SQL) cost more CPU than the database's own work on it. Which platforms it
    names is what their inbox rules declare. It reads every account: asked `seldom` (`_due`)."""
    return ("SELECT id FROM account WHERE status = 'connected' AND needs_reauth = ? AND connected_at <= ?"  # noqa: S608
            " AND platform IN (" + _names(lambda rules: rules.poll is not None) + ")"
            " AND id NOT IN (SELECT account_id FROM account_chore WHERE chore = 'inbox_poll'"
            " AND (status != 'idle' OR next_attempt_at > ?))"
            " AND id NOT IN (SELECT account_id FROM inbox_poll WHERE (platform IN ("
            + _names(lambda rules: rules.rests_while_webhook_heard) + ") AND webhook_at > ?)"
            " OR (platform IN (" + _names(lambda rules: rules.poll == "business_check")
            + ") AND business IS NOT NULL))"
            " ORDER BY id LIMIT ?")


@functools.cache
def _recent_sql() -> str:
    """`_due_sql`'s conditions, from the idle chores whose time came within a window: a search of
    the chores' (chore, status, next_attempt_at) index that reads as many rows as are due, with each
    one's account and poll row by their keys."""
    return ("SELECT account.id FROM account_chore JOIN account ON account.id = account_chore.account_id"  # noqa: S608
            " WHERE account_chore.chore = 'inbox_poll' AND account_chore.status = 'idle'"
            " AND account_chore.next_attempt_at > ? AND account_chore.next_attempt_at <= ?"
            " AND account.status = 'connected' AND account.needs_reauth = ? AND account.connected_at <= ?"
            " AND account.platform IN (" + _names(lambda rules: rules.poll is not None) + ")"
            " AND NOT EXISTS (SELECT 1 FROM inbox_poll WHERE inbox_poll.account_id = account.id"
            " AND ((inbox_poll.platform IN (" + _names(lambda rules: rules.rests_while_webhook_heard) + ")"
            " AND inbox_poll.webhook_at > ?)"
            " OR (inbox_poll.platform IN (" + _names(lambda rules: rules.poll == "business_check")
            + ") AND inbox_poll.business IS NOT NULL)))"
            " ORDER BY account_chore.next_attempt_at LIMIT ?")


# The recent chores' window: a chore is armed within a tick of falling due, so one older than this
# is an account whose polls rest (a live X webhook, a checked TikTok account) or a backlog (no worker
# ran for a while), which the whole read finds.
RECENT_WINDOW = dt.timedelta(minutes=15)
WHOLE_READ_EVERY = 60.0  # seconds, at most: accounts without a chore yet, chores past the window


def _due(limit: int = BATCH) -> list[dict[str, str]]:
    """The poll chores to arm now: connected accounts of the polled platforms whose chore is idle and
    due (or not made yet), less X accounts whose webhook is live and TikTok accounts already checked.

    Every tick reads the chores due within `RECENT_WINDOW`, an index search whatever the number of
    accounts; the read of every account (new accounts, chores older than the window) runs at most
    every `WHOLE_READ_EVERY` seconds (or every interval, if shorter) while it finds none, on every
    tick while it does. 10,000 accounts at 60 s are some 167 chores due a second.

    A newly connected account is first read an interval after connecting: connecting made its own
    calls, and whoever tries the account at once (the sandbox's `faults` arm "the next call") should
    meet only the calls they made."""
    moment = clock.now()
    quiet_since = moment - polls.WEBHOOK_FRESH
    connected_before = moment - interval()
    rows = run_fixed(_recent_sql(), (moment - max(RECENT_WINDOW, 2 * interval()), moment, False, connected_before,
                                     quiet_since, limit)).fetchall()
    ids = [row[0] for row in rows]
    if len(ids) < limit:
        every = min(WHOLE_READ_EVERY, interval().total_seconds())
        whole = engine.seldom(POLL + ":all", every, lambda: [row[0] for row in run_fixed(
            _due_sql(), (False, connected_before, moment, quiet_since, limit)).fetchall()])
        taken = set(ids)
        ids += [account_id for account_id in whole if account_id not in taken][: limit - len(ids)]
    return [{"id": f"inbox_poll_{account_id}", "account_id": account_id, "chore": "inbox_poll"} for account_id in ids]


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


# The claimed chore's account, read with the claim (on PostgreSQL in the claim's own statement).
_ACCOUNT = engine.Joined(
    columns=", ".join(f'account."{field.column_name}"' for field in Account._meta.sorted_fields),
    joins="LEFT JOIN account ON account.id = claimed.account_id")


def _writing() -> Any:
    """A write transaction on SQLite; none on PostgreSQL, where each of the poll's writes around its
    call is one statement (the claim with its account, the quota with the cursor, the outcome with
    the new cursor) that commits by itself, a round trip each instead of BEGIN, several and COMMIT."""
    return contextlib.nullcontext() if is_postgres() else db.atomic()


def _run(chore_id: str) -> Outcome | None:
    with connection():
        with _writing():
            # A worker killed after the claim and before the quota's count leaves the chore to its
            # lease (handed out again) with nothing counted: a poll that was not made.
            found = engine.claim(engine.kind(POLL), chore_id, joined=_ACCOUNT)  # declared in work.py
            if found is None:
                return None
            account = from_row(Account, found.joined) if found.joined and found.joined[0] is not None else None
            if account is None or account.status != "connected":
                engine.settle_idle(found, next_attempt_at=next_poll(found.columns["account_id"], clock.now()))
                return "gone"
            rules = registry.declared(account.platform).inbox_rules
            # The first page's quota is counted with the claim (one transaction less a poll).
            paid, cursor = polls.begin(account, units=rules.page_units)
            if not paid:
                engine.settle_idle(found, next_attempt_at=polls.quota_resets_at())
                log.info("account %s: today's YouTube poll budget is spent; polling resumes with the next quota "
                         "day", account.id)
                return "quota"
        if rules.poll == "business_check":
            return _check_business(found, account)
        try:
            read = _read(account, rules, cursor)
        except _Spent:
            with db.atomic():
                engine.settle_idle(found, next_attempt_at=polls.quota_resets_at())
            return "quota"
        except (PlatformFailure, Conflict) as failure:
            # Its policy (work.py: POLL_POLICY) puts the chore back to idle, due again after an interval.
            # A refused credential has flagged the account `needsReauth` in the call already.
            log.info("polling account %s: %s", account.id, failure.message)
            with db.atomic():
                engine.fail(found, failure)
            return "failed"
        # The messages, the cursor and the chore move together, or not at all: the cursor rides with
        # the chore's outcome (on PostgreSQL in its statement), the messages in their transaction.
        with db.atomic() if read.events else _writing():
            recorded = engine.Also(*polls.read_recorded(account.id, read.cursor))
            if not engine.settle_idle(found, next_attempt_at=next_poll(account.id, clock.now()), also=(recorded,)):
                return None  # the lease ran out and another worker has it: its commit counts
            if read.events:
                store_events(account, read.events)
    return "read"


def _check_business(found: engine.Claim, account: Account) -> Outcome:
    """TikTok: ask once whether the account is a Business Account (its capabilities say so)."""
    try:
        business = adapters.call(account, lambda adapter, ctx: adapter.business_messaging(ctx))
    except (PlatformFailure, Conflict) as failure:
        with db.atomic():
            engine.fail(found, failure)  # asked again after an interval (work.py: POLL_POLICY)
        return "checked"
    with db.atomic():
        if engine.settle_idle(found, next_attempt_at=next_poll(account.id, clock.now())):
            InboxPoll.update(business=business, polled_at=clock.now(), updated_at=clock.now()).where(
                InboxPoll.account == account.id).execute()
    return "checked"


def _page(account: Account, rules: InboxRules, page_token: str | None) -> dict[str, Any]:
    if rules.page_units and page_token is not None:  # the first page was counted at the claim
        with db.atomic():  # counted before the call: the budget is never overrun
            if not polls.spend(account, rules.page_units):
                raise _Spent
    return adapters.call(account, lambda adapter, ctx: adapter.inbox_page(ctx, page_token=page_token))


def _read(account: Account, rules: InboxRules, cursor: str | None) -> _Read:
    """The platform's pages, newest first, back to the cursor (the first poll reads one page)."""
    events: list[InboundEvent] = []
    listed: set[str | None] = set()  # the threads (YouTube) on the pages read
    token: str | None = None
    newest = cursor
    for _ in range(MAX_PAGES):
        page = _page(account, rules, token)
        found = rules.parse_page(account.platform_account_id, page)
        listed |= {event.contact_id for event in found}
        fresh = [event for event in found if rules.after(event, cursor)]
        events += fresh
        for event in fresh:
            newest = _newer(rules, newest, event)
        token = rules.next_token(page)
        reached = cursor is None or len(fresh) < len(found) or rules.reached(page, cursor)
        if reached or not token:
            break
    if rules.rereads_recent_threads:
        events += _recent_threads(account, rules, listed)
    if cursor is not None:
        # Read again (at the cursor's own second, or in a thread read again by id): an event this old
        # was stored when it was new, and its inbound record may be gone (`inbound.RETENTION`).
        horizon = (clock.now() - inbound.REREAD_HORIZON).replace(tzinfo=dt.UTC)
        events = [event for event in events if event.occurred_at >= horizon]
    # Oldest first, as they happened: a thread's first comment before its replies.
    events.sort(key=lambda event: event.occurred_at)
    return _Read(events, newest)


def _recent_threads(account: Account, rules: InboxRules, seen: set[str | None]) -> list[InboundEvent]:
    """The comments of the account's recently active threads that the pages read did not list, read
    again by id (their replies may be new; the cursor does not apply: they are older threads)."""
    rows = run_fixed(_RECENT, (account.id, clock.now() - RECENT_THREADS, THREADS_BY_ID + len(seen))).fetchall()
    threads = [str(row[0]) for row in rows if row[0] not in seen]
    if not threads:
        return []
    with db.atomic():
        if not polls.spend(account, rules.page_units):
            return []  # today's budget is spent: the new threads above are kept, these wait
    page = adapters.call(account, lambda adapter, ctx: adapter.inbox_threads(
        ctx, thread_ids=threads[:THREADS_BY_ID]))
    return rules.parse_page(account.platform_account_id, page)


def _newer(rules: InboxRules, cursor: str | None, event: InboundEvent) -> str:
    position = rules.position(event)
    return position if cursor is None or position > cursor else cursor


