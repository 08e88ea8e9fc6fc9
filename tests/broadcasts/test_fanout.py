"""The fan-out writes recipients and their messages in bounded chunks, and a worker that dies in the
middle of it leaves the rest to the next claim, which goes on from where it stopped."""

from __future__ import annotations

import datetime as dt
from collections import Counter

from kit import clock
from service.broadcasts import completion
from service.broadcasts import work as broadcast_work
from storage.db import connection
from storage.models import Conversation, Event
from tests.conftest import bearer
from tests.support.sandbox import connect_account
from tests.support.webhook_receiver import wait_for


def _bot_with_contacts(live, tenant, count):
    bot = connect_account(live.client, tenant, "telegram")
    for n in range(count):
        wrote = live.client.post("/sandbox/telegram/inbound-message",
                                 json={"accountId": bot["id"], "from": {"id": str(83000 + n)}, "text": "hi"})
        assert wrote.status_code == 200
    return bot


def _done(live, tenant, broadcast_id, timeout=15.0):
    def finished():
        got = live.client.get(f"/v1/broadcasts/{broadcast_id}", headers=bearer(tenant["apiKey"])).json()
        return got["status"] == "completed" and got
    return wait_for(finished, timeout=timeout)


def _sent(live, bot):
    rows = live.client.get("/sandbox/telegram/sent", params={"accountId": bot["id"]}).json()["data"]
    return Counter(row["to"] for row in rows)


def test_a_fan_out_in_small_chunks_reaches_everyone_once(live, monkeypatch):
    monkeypatch.setattr(broadcast_work, "CHUNK", 3)
    tenant = live.tenant()
    bot = _bot_with_contacts(live, tenant, 7)
    created = live.client.post("/v1/broadcasts", headers=bearer(tenant["apiKey"]),
                               json={"accountId": bot["id"], "name": "Chunks", "text": "in threes", "sendNow": True})
    done = _done(live, tenant, created.json()["id"])
    assert done["counts"] == {"targeted": 7, "sent": 7, "failed": 0, "skipped": 0}
    assert _sent(live, bot) == Counter({str(83000 + n): 1 for n in range(7)})


def test_chosen_conversations_are_reached_once_each_in_small_chunks_past_one_that_went_away(live, monkeypatch):
    monkeypatch.setattr(broadcast_work, "CHUNK", 3)
    tenant = live.tenant()
    bot = _bot_with_contacts(live, tenant, 9)
    with connection():
        chosen = sorted(conversation.id for conversation in Conversation.select().where(Conversation.account == bot["id"]))
    created = live.client.post("/v1/broadcasts", headers=bearer(tenant["apiKey"]), json={
        "accountId": bot["id"], "name": "Chosen", "text": "for some", "scheduledFor": clock.iso(clock.now() + dt.timedelta(minutes=5)),
        "audience": {"conversationIds": [*reversed(chosen[1:8]), chosen[2]]}})
    assert created.status_code == 201
    with connection():  # the last of the first chunk goes away before the broadcast starts
        Conversation.delete().where(Conversation.id == chosen[3]).execute()
    clock.advance(5 * 60 + 1)
    done = _done(live, tenant, created.json()["id"], timeout=live.settings.scheduler_tick_seconds + 15)
    assert done["counts"] == {"targeted": 6, "sent": 6, "failed": 0, "skipped": 0}
    with connection():
        reached = {conversation.external_conversation_id for conversation in
                   Conversation.select().where(Conversation.id.in_(chosen[1:8]))}
    assert _sent(live, bot) == Counter({chat: 1 for chat in reached})


def test_a_fan_out_cut_short_is_taken_over_from_where_it_stopped(live, monkeypatch):
    monkeypatch.setattr(broadcast_work, "CHUNK", 3)
    real_chunk = broadcast_work._fan_out_chunk
    calls = []

    def dies_after_the_first_chunk(found):
        calls.append(found.token)
        if len(calls) == 2:
            raise RuntimeError("the worker died here")  # the second chunk's transaction rolls back
        return real_chunk(found)

    monkeypatch.setattr(broadcast_work, "_fan_out_chunk", dies_after_the_first_chunk)
    tenant = live.tenant()
    bot = _bot_with_contacts(live, tenant, 8)
    created = live.client.post("/v1/broadcasts", headers=bearer(tenant["apiKey"]),
                               json={"accountId": bot["id"], "name": "Cut", "text": "eventually", "sendNow": True})
    broadcast_id = created.json()["id"]
    wait_for(lambda: sum(_sent(live, bot).values()) == 3, timeout=10)  # the first chunk only
    assert live.client.get(f"/v1/broadcasts/{broadcast_id}", headers=bearer(tenant["apiKey"])).json()["status"] == \
        "sending"

    clock.advance(live.settings.send_lease_seconds + 1)  # the dead worker's claim runs out
    done = _done(live, tenant, broadcast_id)
    assert done["counts"] == {"targeted": 8, "sent": 8, "failed": 0, "skipped": 0}
    assert _sent(live, bot) == Counter({str(83000 + n): 1 for n in range(8)})
    assert len(set(calls)) == 2  # two claims: the first worker's and the one that took over
    with connection():
        assert Event.select().where(Event.workspace == tenant["workspaceId"],
                                    Event.type == "broadcast.started").count() == 1


def test_the_scheduler_completes_a_broadcast_that_no_finishing_message_completed(live, monkeypatch):
    # As when a worker stops between its group's last send and the check, or the last message was
    # a retry sent alone: every recipient follows its message, and nothing else completes it.
    monkeypatch.setattr(completion, "complete_after", lambda message_ids: None)
    monkeypatch.setattr(completion, "complete_if_done", lambda broadcast_id: None)  # nor does the fan-out's end
    tenant = live.tenant()
    bot = _bot_with_contacts(live, tenant, 3)
    created = live.client.post("/v1/broadcasts", headers=bearer(tenant["apiKey"]),
                               json={"accountId": bot["id"], "name": "Net", "text": "caught", "sendNow": True})
    done = _done(live, tenant, created.json()["id"], timeout=live.settings.scheduler_tick_seconds + 5)
    assert done["counts"] == {"targeted": 3, "sent": 3, "failed": 0, "skipped": 0}
    with connection():
        assert Event.select().where(Event.workspace == tenant["workspaceId"],
                                    Event.type == "broadcast.completed").count() == 1
