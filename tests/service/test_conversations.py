"""The inbox's service functions, as the MCP tools will call them."""

import datetime as dt

import pytest

from kit.errors import ValidationFailed
from service.common import signals
from service.identity.auth import Actor
from service.inbox import conversations, outbound
from storage.db import connection, db
from storage.models import Account, Conversation, Event
from tests.support.factories import add_account


def _actor(tenant, **overrides):
    return Actor(workspace_id=tenant["workspaceId"], permission=overrides.get("permission", "read-write"),
                 profile_ids=overrides.get("profile_ids"), credential_id="key_test")


def test_a_start_that_loses_the_race_returns_the_winners_conversation(tenant, monkeypatch):
    """The insert meets the unique index when another caller committed between our look-up and our
    insert: the answer is the other caller's conversation, and one `conversation.started`."""
    account_id = add_account(tenant["workspaceId"], tenant["profileId"], platform="telegram")
    actor = _actor(tenant)
    with connection(), db.atomic():
        winner = conversations.start_conversation(actor=actor, account_id=account_id, contact_handle="@Ann")
    real_find = conversations._find
    calls = []

    def find_after_the_winner(*args, **kwargs):
        calls.append(1)
        return None if len(calls) == 1 else real_find(*args, **kwargs)  # the first ran before its commit

    monkeypatch.setattr(conversations, "_find", find_after_the_winner)
    with connection(), db.atomic():
        loser = conversations.start_conversation(actor=actor, account_id=account_id, contact_handle="ann")
    assert len(calls) == 2
    assert loser.created is False
    assert loser.conversation.id == winner.conversation.id
    with connection():
        assert Conversation.select().count() == 1
        assert Event.select().where(Event.type == "conversation.started").count() == 1


def test_receivers_run_in_the_same_transaction_and_a_failing_one_undoes_nothing(tenant, monkeypatch):
    account_id = add_account(tenant["workspaceId"], tenant["profileId"], platform="telegram")
    seen = []

    def enrol(conversation, how):
        seen.append((conversation.id, how, Conversation.select().where(Conversation.id == conversation.id).count()))

    def broken(conversation, how):
        raise RuntimeError("a feature's bug")

    monkeypatch.setattr(signals.conversation_started, "receivers", [broken, enrol])
    with connection(), db.atomic():
        started = conversations.start_conversation(actor=_actor(tenant), account_id=account_id,
                                                   external_conversation_id="901")
    assert seen == [(started.conversation.id, "api", 1)]
    with connection():
        assert Conversation.select().count() == 1


def test_window_is_read_from_the_platforms_capabilities(tenant):
    account_id = add_account(tenant["workspaceId"], tenant["profileId"], platform="whatsapp")
    with connection(), db.atomic():
        started = conversations.start_conversation(actor=_actor(tenant), account_id=account_id,
                                                   contact_handle="+15550009999")
        row = Conversation.get_by_id(started.conversation.id)
        account = Account.get_by_id(account_id)
        now = dt.datetime(2026, 5, 1, 12, 0)
        assert outbound.within_window(row, at=now) is False
        row.last_inbound_at = now - dt.timedelta(hours=23, minutes=59)
        assert outbound.within_window(row, at=now) is True
        row.last_inbound_at = now - dt.timedelta(hours=24)
        assert outbound.within_window(row, at=now) is False
        with pytest.raises(ValidationFailed) as raised:
            outbound.queue_outbound(row, account, text="hi")
        assert raised.value.code == "outside_messaging_window"
