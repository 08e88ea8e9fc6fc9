"""How many a broadcast would reach if it started now: the audience the fan-out resolves
(`conversationIds` win, else contacts active within `activeWithinDays`, else every conversation of
the account), and how many of them the platform's messaging window would
skip. For a person choosing the audience before sending; the fan-out (`work._fan_out_chunk`) takes
its conversations from the same `conversations` query when it starts."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from kit import clock
from service.accounts import adapters
from service.accounts import ops as accounts
from service.identity.auth import Actor
from storage.models import Conversation


@dataclass(frozen=True)
class AudiencePreview:
    targeted: int
    outside_window: int
    window_hours: int | None

    @property
    def reached(self) -> int:
        return self.targeted - self.outside_window


def conversations(account_id: str, *, conversation_ids: list[str] | None, active_within_days: int | None,
                  since: dt.datetime) -> Any:
    """The audience as a query: the chosen conversations of the account when given (they win),
    else those whose contact wrote within `active_within_days` of `since`, else all of them."""
    query = Conversation.select().where(Conversation.account == account_id)
    if conversation_ids:
        return query.where(Conversation.id.in_(list(dict.fromkeys(conversation_ids))))
    if active_within_days:
        return query.where(Conversation.last_inbound_at >= since - dt.timedelta(days=active_within_days))
    return query


def preview(*, actor: Actor, account_id: str, active_within_days: int | None = None,
            conversation_ids: list[str] | None = None, template: bool = False) -> AudiencePreview:
    account = accounts.get_row(actor=actor, account_id=account_id)  # another workspace's: 404
    moment = clock.now()
    query = conversations(account.id, conversation_ids=conversation_ids, active_within_days=active_within_days,
                          since=moment)
    targeted = query.count()
    hours = adapters.adapter(account.platform).capabilities.messaging_window_hours
    if hours is None or template:  # a template reaches contacts outside the window
        return AudiencePreview(targeted, 0, hours)
    outside = query.where(Conversation.last_inbound_at.is_null()
                          | (Conversation.last_inbound_at <= moment - dt.timedelta(hours=hours))).count()
    return AudiencePreview(targeted, outside, hours)
