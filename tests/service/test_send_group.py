"""A task's group of messages sent one after the other (`inbox_work.send_group`), against the sandbox
emulator: each reaches its person once and is recorded with its event, whatever the group's other
rows are doing; on PostgreSQL a sent outcome goes with the next message's claim, and it is written
alone when that statement fails."""

from __future__ import annotations

import pytest
from peewee import OperationalError

from service.engine import core as engine
from service.inbox import outbound
from service.inbox import work as inbox_work
from storage.db import connection, db, is_postgres
from storage.models import Account, Conversation, Event, Message
from tests.support.sandbox import connect_account

pytestmark = pytest.mark.shared_service


def _queued(client, tenant, texts: list[str], chats: int = 2) -> tuple[list[str], list[dict]]:
    """`texts` queued as `pending` messages (not nudged: the test sends them) over `chats` Telegram
    conversations that their contacts opened, each with a bot of its own."""
    bots, rows = [], []
    for n in range(chats):
        bot = connect_account(client, tenant, "telegram")
        wrote = client.post("/sandbox/telegram/inbound-message",
                            json={"accountId": bot["id"], "from": {"id": str(6100 + n)}, "text": "hi"})
        assert wrote.status_code == 200, wrote.text
        bots.append(bot)
        with connection():
            rows.append((Conversation.get(Conversation.account == bot["id"]), Account.get_by_id(bot["id"])))
    with connection(), db.atomic():
        ids = [outbound.queue_outbound(*rows[n % chats], text=text, nudge=False).id for n, text in enumerate(texts)]
    return ids, bots


def _delivered(client, bots: list[dict]) -> list[str]:
    texts = []
    for bot in bots:
        answer = client.get("/sandbox/telegram/sent", params={"accountId": bot["id"]})
        texts += [row["text"] for row in answer.json()["data"] if row["kind"] == "dm"]
    return texts


def _statuses(ids: list[str]) -> list[str]:
    with connection():
        found = {row.id: row.status for row in Message.select(Message.id, Message.status).where(Message.id.in_(ids))}
    return [found[message_id] for message_id in ids]


def _sent_events(tenant) -> list[str]:
    with connection():
        rows = Event.select(Event.data).where(Event.workspace == tenant["workspaceId"], Event.type == "message.sent")
        return sorted(row.data["id"] for row in rows)


def test_a_group_reaches_each_person_once_with_each_outcome_and_event(client, tenant):
    texts = ["one", "two", "three", "four", "five"]
    ids, bots = _queued(client, tenant, texts)
    with connection():
        before = {row.id: row.last_message_at for row in Conversation.select().where(
            Conversation.account.in_([bot["id"] for bot in bots]))}

    inbox_work.send_group(ids)

    assert _statuses(ids) == ["sent"] * 5
    assert sorted(_delivered(client, bots)) == sorted(texts)
    assert _sent_events(tenant) == sorted(ids)
    with connection():
        rows = list(Message.select().where(Message.id.in_(ids)))
        assert all(row.platform_message_id and row.claim_token is None for row in rows)
        # Each conversation touched by its last message sent (the inbox orders by it).
        for conversation_id, earlier in before.items():
            last = max(row.updated_at for row in rows if row.conversation_id == conversation_id)
            assert Conversation.get_by_id(conversation_id).last_message_at == last > earlier


def test_rows_another_worker_holds_or_finished_are_left_alone_and_the_rest_recorded(client, tenant):
    ids, bots = _queued(client, tenant, ["first", "held", "last"])
    first, held, last = ids
    with connection(), db.atomic():
        other = engine.claim(inbox_work.MESSAGE_WORK, held)  # another worker's, mid-call
    assert other is not None

    # The last row twice (a duplicate task's): the second time it is done, and the outcome written
    # with that claim, which found nothing, still counts.
    inbox_work.send_group([first, held, last, last])

    assert _statuses(ids) == ["sent", "sending", "sent"]
    assert sorted(_delivered(client, bots)) == ["first", "last"]
    assert _sent_events(tenant) == sorted([first, last])
    with connection():
        assert Message.get_by_id(held).claim_token == other.token


def test_an_outcome_is_written_alone_when_the_statement_with_the_next_claim_fails(client, tenant, monkeypatch):
    if not is_postgres():
        pytest.skip("only PostgreSQL writes an outcome with the next claim")
    ids, bots = _queued(client, tenant, ["reached", "refused", "after"])

    def refused(*args, **kwargs):
        raise OperationalError("the database refused the statement")

    monkeypatch.setattr(engine, "finish_and_claim", refused)
    inbox_work.send_group(ids)

    # The first message reached its person: its outcome is recorded though the statement that was to
    # carry it failed; the second was never claimed (pending, for the sweeper); the third went on.
    assert _statuses(ids) == ["sent", "pending", "sent"]
    assert sorted(_delivered(client, bots)) == ["after", "reached"]
    assert _sent_events(tenant) == sorted([ids[0], ids[2]])
