"""Sequences end to end (CONTRACT section 3 "Sequences"): contacts write and comment through the
sandbox, steps fall due on the service's clock (`clock.advance`, never minutes of sleep), and what
the "platform" received is read back from the emulator."""

from __future__ import annotations

import time

import pytest

from kit import clock
from storage.db import connection
from storage.models import Event
from tests.conftest import bearer
from tests.support.sandbox import connect_account
from tests.support.webhook_receiver import wait_for

pytestmark = pytest.mark.shared_service


TICKS = 1.0  # a few scheduler ticks (0.2 s in tests): long enough for a step that was due to go


@pytest.fixture
def bot(client, tenant):
    return connect_account(client, tenant, "telegram")


def _dm(client, account, contact, text, **extra):
    answer = client.post(f"/sandbox/{account['platform']}/inbound-message",
                         json={"accountId": account["id"], "from": {"id": contact}, "text": text, **extra})
    assert answer.status_code == 200, answer.text


def _conversation(client, tenant, account, contact):
    """The contact's conversation (they write first, which also opens Meta's window)."""
    _dm(client, account, contact, "hello")
    listed = client.get("/v1/conversations", headers=bearer(tenant["apiKey"]), params={"accountId": account["id"]})
    return next(c for c in listed.json()["data"] if c["externalConversationId"] == contact)


def _create(client, tenant, account, steps, **fields):
    body = {"accountId": account["id"], "name": "Follow-ups", "trigger": "manual", "steps": steps, **fields}
    return client.post("/v1/sequences", headers=bearer(tenant["apiKey"]), json=body)


def _sequence(client, tenant, account, steps, **fields):
    answer = _create(client, tenant, account, steps, **fields)
    assert answer.status_code == 201, answer.text
    return answer.json()


def _steps(*texts, delay=0):
    return [{"delayMinutes": delay if n else 0, "text": text} for n, text in enumerate(texts)]


def _enroll(client, tenant, sequence, conversation_id):
    answer = client.post(f"/v1/sequences/{sequence['id']}/enroll", headers=bearer(tenant["apiKey"]),
                         params={"conversationId": conversation_id})
    assert answer.status_code == 200, answer.text
    return answer.json()


def _enrollments(client, tenant, sequence):
    answer = client.get(f"/v1/sequences/{sequence['id']}/enrollments", headers=bearer(tenant["apiKey"]))
    assert answer.status_code == 200, answer.text
    return answer.json()["data"]


def _put(client, tenant, sequence, **fields):
    answer = client.put(f"/v1/sequences/{sequence['id']}", headers=bearer(tenant["apiKey"]), json=fields)
    assert answer.status_code == 200, answer.text
    return answer.json()


def _texts(client, account, kind="dm"):
    rows = client.get(f"/sandbox/{account['platform']}/sent", params={"accountId": account["id"]}).json()["data"]
    return [row["text"] for row in rows if row["kind"] == kind]


def _events(tenant, kind):
    with connection():
        return [e.data for e in Event.select().where(Event.workspace == tenant["workspaceId"], Event.type == kind)
                .order_by(Event.created_at, Event.id)]


def test_three_steps_without_delay_arrive_in_order_and_complete(client, tenant, bot):
    conversation = _conversation(client, tenant, bot, "7001")
    sequence = _sequence(client, tenant, bot, _steps("one", "two", "three"))
    enrolled = _enroll(client, tenant, sequence, conversation["id"])
    assert (enrolled["status"], enrolled["currentStep"], enrolled["conversationId"]) == ("active", 0,
                                                                                         conversation["id"])
    done = wait_for(lambda: [e for e in _enrollments(client, tenant, sequence) if e["status"] == "completed"])
    wait_for(lambda: len(_texts(client, bot)) == 3)
    assert _texts(client, bot) == ["one", "two", "three"]
    assert (done[0]["currentStep"], done[0]["nextStepAt"], done[0]["reason"]) == (3, None, None)
    assert [(h["step"], h["status"]) for h in done[0]["history"]] == [(1, "queued"), (2, "queued"), (3, "queued")]
    messages = client.get(f"/v1/conversations/{conversation['id']}/messages", headers=bearer(tenant["apiKey"]))
    assert [m["source"] for m in messages.json()["data"] if m["direction"] == "outbound"] == ["sequence"] * 3
    assert [e["id"] for e in _events(tenant, "sequence.enrolled")] == [enrolled["id"]]
    assert [e["id"] for e in _events(tenant, "sequence.completed")] == [enrolled["id"]]


def test_delays_count_from_the_previous_step(client, tenant, bot):
    conversation = _conversation(client, tenant, bot, "7002")
    sequence = _sequence(client, tenant, bot, [{"delayMinutes": 0, "text": "now"},
                                               {"delayMinutes": 60, "text": "in an hour"},
                                               {"delayMinutes": 1440, "text": "a day later"}])
    enrolled = _enroll(client, tenant, sequence, conversation["id"])
    wait_for(lambda: _texts(client, bot) == ["now"])
    waiting = wait_for(lambda: [e for e in _enrollments(client, tenant, sequence) if e["currentStep"] == 1])[0]
    assert clock.parse_iso(waiting["nextStepAt"]) - clock.parse_iso(enrolled["enrolledAt"]) == \
        clock.parse_iso("2026-01-01T01:00:00Z") - clock.parse_iso("2026-01-01T00:00:00Z")
    clock.advance(59 * 60)
    time.sleep(TICKS)
    assert _texts(client, bot) == ["now"]
    clock.advance(61)
    wait_for(lambda: _texts(client, bot) == ["now", "in an hour"])
    clock.advance(1440 * 60)
    wait_for(lambda: _texts(client, bot) == ["now", "in an hour", "a day later"])
    wait_for(lambda: _enrollments(client, tenant, sequence)[0]["status"] == "completed")


def test_a_reply_stops_the_enrolment_before_the_next_step(client, tenant, bot):
    conversation = _conversation(client, tenant, bot, "7003")
    sequence = _sequence(client, tenant, bot, _steps("hi", "still there?", delay=30), stopOnReply=True)
    _enroll(client, tenant, sequence, conversation["id"])
    wait_for(lambda: _texts(client, bot) == ["hi"])
    _dm(client, bot, "7003", "yes, thanks")
    stopped = _enrollments(client, tenant, sequence)[0]
    assert (stopped["status"], stopped["reason"], stopped["nextStepAt"]) == ("stopped", "replied", None)
    assert stopped["endedAt"] is not None
    clock.advance(31 * 60)
    time.sleep(TICKS)
    assert _texts(client, bot) == ["hi"]
    assert [e["id"] for e in _events(tenant, "sequence.stopped")] == [stopped["id"]]
    # Without stopOnReply, a reply changes nothing.
    other = _sequence(client, tenant, bot, _steps("a", "b", delay=30))
    _enroll(client, tenant, other, conversation["id"])
    wait_for(lambda: _texts(client, bot) == ["hi", "a"])
    _dm(client, bot, "7003", "ok")
    assert _enrollments(client, tenant, other)[0]["status"] == "active"


def test_a_paused_sequence_holds_its_steps_and_sends_the_due_ones_in_order_on_resume(client, tenant, bot):
    conversation = _conversation(client, tenant, bot, "7004")
    sequence = _sequence(client, tenant, bot, _steps("first", "second", "third", delay=10))
    _enroll(client, tenant, sequence, conversation["id"])
    wait_for(lambda: _texts(client, bot) == ["first"])
    paused = _put(client, tenant, sequence, status="paused")
    assert (paused["status"], paused["name"], len(paused["steps"])) == ("paused", "Follow-ups", 3)
    clock.advance(25 * 60)
    time.sleep(TICKS)
    assert _texts(client, bot) == ["first"]
    # A paused sequence enrols no one by its trigger either.
    trigger = _sequence(client, tenant, bot, _steps("welcome"), trigger="conversation_started", status="paused")
    _dm(client, bot, "7005", "new here")
    assert _enrollments(client, tenant, trigger) == []
    _put(client, tenant, sequence, status="active")
    wait_for(lambda: len(_texts(client, bot)) == 3)
    assert _texts(client, bot) == ["first", "second", "third"]


def test_a_new_conversation_enrols_in_conversation_started_sequences(client, tenant, bot):
    sequence = _sequence(client, tenant, bot, _steps("welcome!"), trigger="conversation_started")
    _dm(client, bot, "7006", "hi there")
    wait_for(lambda: _texts(client, bot) == ["welcome!"])
    started = client.post("/v1/inbox/conversations", headers=bearer(tenant["apiKey"]),
                          json={"accountId": bot["id"], "externalConversationId": "7007"})
    assert started.status_code == 201
    enrolled = _enrollments(client, tenant, sequence)
    assert len(enrolled) == 2
    assert enrolled[1]["conversationId"] == started.json()["id"]
    # Its second message enrols no one again.
    _dm(client, bot, "7006", "hello again")
    assert len(_enrollments(client, tenant, sequence)) == 2


def test_story_replies_enrol_by_keyword(client, tenant):
    instagram = connect_account(client, tenant, "instagram")
    promo = _sequence(client, tenant, instagram, _steps("Here is your code"), trigger="story_reply",
                      keywords=["promocao"], matchType="contains")
    every = _sequence(client, tenant, instagram, _steps("Thanks for the reply"), trigger="story_reply")
    _dm(client, instagram, "8001", "Quero a PROMOÇÃO!", storyReply=True)
    _dm(client, instagram, "8002", "nice story", storyReply=True)
    _dm(client, instagram, "8003", "promocao")  # a plain DM, not a story reply
    assert len(_enrollments(client, tenant, promo)) == 1
    assert len(_enrollments(client, tenant, every)) == 2
    wait_for(lambda: sorted(_texts(client, instagram)) == ["Here is your code", "Thanks for the reply",
                                                            "Thanks for the reply"])


def test_a_comment_automation_enrols_and_a_step_outside_the_window_is_skipped(client, tenant):
    instagram = connect_account(client, tenant, "instagram")
    automation = client.post("/v1/comment-automations", headers=bearer(tenant["apiKey"]), json={
        "accountId": instagram["id"], "name": "Guide", "keywords": ["guide"], "matchType": "contains",
        "dmText": "Here is the guide"}).json()
    sequence = _sequence(client, tenant, instagram, _steps("Did you read it?", "Any questions?", delay=60),
                         trigger="comment_automation", automationId=automation["id"])
    answer = client.post("/sandbox/instagram/comment", json={
        "accountId": instagram["id"], "mediaId": "m1", "from": {"id": "8101", "handle": "reader"},
        "text": "guide please"})
    assert answer.status_code == 200
    enrolled = _enrollments(client, tenant, sequence)
    assert len(enrolled) == 1
    # A private reply opens no messaging window: the first step is skipped, and the sequence goes on.
    waiting = wait_for(lambda: [e for e in _enrollments(client, tenant, sequence) if e["currentStep"] == 1])[0]
    assert [(h["step"], h["status"], h["reason"]) for h in waiting["history"]] == [
        (1, "skipped", "outside_messaging_window")]
    _dm(client, instagram, "8101", "thanks!")
    clock.advance(61 * 60)
    done = wait_for(lambda: [e for e in _enrollments(client, tenant, sequence) if e["status"] == "completed"])[0]
    assert [(h["step"], h["status"]) for h in done["history"]] == [(1, "skipped"), (2, "queued")]
    wait_for(lambda: _texts(client, instagram) == ["Any questions?"])
    assert _texts(client, instagram, kind="private_reply") == ["Here is the guide"]


def test_enrolling_twice_returns_the_active_enrolment_and_delete_cancels(client, tenant, bot):
    conversation = _conversation(client, tenant, bot, "7101")
    sequence = _sequence(client, tenant, bot, _steps("a", "b", delay=60))
    first = _enroll(client, tenant, sequence, conversation["id"])
    again = client.post(f"/v1/sequences/{sequence['id']}/enroll", headers=bearer(tenant["apiKey"]),
                        json={"conversationId": conversation["id"]})
    assert again.status_code == 200 and again.json()["id"] == first["id"]
    missing = client.post(f"/v1/sequences/{sequence['id']}/enroll", headers=bearer(tenant["apiKey"]))
    assert missing.status_code == 422
    assert [d["field"] for d in missing.json()["error"]["details"]] == ["conversationId"]
    other_bot = connect_account(client, tenant, "telegram")
    elsewhere = _conversation(client, tenant, other_bot, "7102")
    refused = client.post(f"/v1/sequences/{sequence['id']}/enroll", headers=bearer(tenant["apiKey"]),
                          params={"conversationId": elsewhere["id"]})
    assert refused.status_code == 422
    assert [d["field"] for d in refused.json()["error"]["details"]] == ["conversationId"]
    wait_for(lambda: _texts(client, bot) == ["a"])
    deleted = client.delete(f"/v1/sequences/{sequence['id']}", headers=bearer(tenant["apiKey"]))
    assert deleted.status_code == 200
    assert deleted.json() == {"id": sequence["id"], "deleted": True, "cancelledEnrollments": 1}
    assert client.get(f"/v1/sequences/{sequence['id']}", headers=bearer(tenant["apiKey"])).status_code == 404
    clock.advance(61 * 60)
    time.sleep(TICKS)
    assert _texts(client, bot) == ["a"]


def test_put_keeps_what_it_does_not_name_and_lists_filter(live, client, tenant, bot):
    sequence = _sequence(client, tenant, bot, _steps("a"), stopOnReply=True, keywords=["x"])
    changed = _put(client, tenant, sequence, name="Renamed",
                   steps=[{"delayMinutes": 5, "text": "b", "buttonLabel": "Open", "buttonUrl": "https://example.com"}])
    assert (changed["name"], changed["stopOnReply"], changed["keywords"], changed["trigger"]) == (
        "Renamed", True, ["x"], "manual")
    assert changed["steps"] == [{"delayMinutes": 5, "text": "b", "template": None, "buttonLabel": "Open",
                                 "buttonUrl": "https://example.com"}]
    assert client.get(f"/v1/sequences/{sequence['id']}", headers=bearer(tenant["apiKey"])).json() == changed
    listed = client.get("/v1/sequences", headers=bearer(tenant["apiKey"]), params={"accountId": bot["id"]}).json()
    assert [s["id"] for s in listed["data"]] == [sequence["id"]]
    assert client.get("/v1/sequences", headers=bearer(tenant["apiKey"]),
                      params={"status": "paused"}).json()["data"] == []
    stranger = live.tenant()
    assert client.get(f"/v1/sequences/{sequence['id']}", headers=bearer(stranger["apiKey"])).status_code == 404
    refused = client.put(f"/v1/sequences/{sequence['id']}", headers=bearer(tenant["apiKey"]),
                         json={"accountId": bot["id"]})
    assert refused.status_code == 422


def _rules():
    step = {"delayMinutes": 0, "text": "hi"}
    return [
        ({"steps": []}, {"steps"}),
        ({"steps": [step] * 21}, {"steps"}),
        ({"steps": [{"delayMinutes": -1, "text": "hi"}]}, {"steps[0].delayMinutes"}),
        ({"steps": [{"delayMinutes": 525601, "text": "hi"}]}, {"steps[0].delayMinutes"}),
        ({"steps": [{"delayMinutes": 1.5, "text": "hi"}]}, {"steps[0].delayMinutes"}),
        ({"steps": [step, {"delayMinutes": 0, "text": "hi", "buttonLabel": "Go"}]},
         {"steps[1].buttonLabel", "steps[1].buttonUrl"}),
        ({"steps": [{"delayMinutes": 0, "text": "hi", "buttonLabel": "Go", "buttonUrl": "ftp://x"}]},
         {"steps[0].buttonUrl"}),
        ({"steps": [{"delayMinutes": 0, "text": ""}]}, {"steps[0].text"}),
        ({"trigger": "comment_automation"}, {"automationId"}),
        ({"trigger": "manual", "automationId": "ca_nope"}, {"automationId"}),
        ({"trigger": "comment_automation", "automationId": "ca_nope"}, {"automationId"}),
        ({"trigger": "story_reply"}, {"trigger"}),  # a Telegram bot has no stories
        ({"trigger": "sometimes"}, {"trigger"}),
        ({"matchType": "fuzzy"}, {"matchType"}),
        ({"status": "stopped"}, {"status"}),
        ({"stopOnReply": "yes"}, {"stopOnReply"}),
        ({"step": []}, {"step"}),
    ]


@pytest.mark.parametrize(("fields", "named"), _rules())
def test_each_rule_is_a_422_naming_its_field(client, tenant, bot, fields, named):
    answer = _create(client, tenant, bot, **({"steps": [{"delayMinutes": 0, "text": "hi"}]} | fields))
    assert answer.status_code == 422, answer.text
    assert {d["field"] for d in answer.json()["error"]["details"]} == named


def test_the_automation_must_be_on_the_same_account(client, tenant):
    instagram = connect_account(client, tenant, "instagram")
    facebook = connect_account(client, tenant, "facebook")
    automation = client.post("/v1/comment-automations", headers=bearer(tenant["apiKey"]), json={
        "accountId": facebook["id"], "name": "x", "matchType": "any", "dmText": "hi"}).json()
    answer = _create(client, tenant, instagram, _steps("a"), trigger="comment_automation",
                     automationId=automation["id"])
    assert answer.status_code == 422
    assert [d["field"] for d in answer.json()["error"]["details"]] == ["automationId"]
    assert _create(client, tenant, facebook, _steps("a"), trigger="comment_automation",
                   automationId=automation["id"]).status_code == 201


def test_concurrent_enrolments_of_one_conversation_make_one(client, tenant, bot):
    from concurrent.futures import ThreadPoolExecutor

    conversation = _conversation(client, tenant, bot, "7201")
    sequence = _sequence(client, tenant, bot, _steps("only once", "later", delay=60))
    with ThreadPoolExecutor(8) as pool:
        enrolled = list(pool.map(lambda _: _enroll(client, tenant, sequence, conversation["id"]), range(8)))
    assert len({e["id"] for e in enrolled}) == 1
    assert len(_enrollments(client, tenant, sequence)) == 1
    wait_for(lambda: _texts(client, bot) == ["only once"])
    assert len(_events(tenant, "sequence.enrolled")) == 1


def test_deleting_an_account_for_good_takes_its_automations_and_sequences(client, tenant):
    instagram = connect_account(client, tenant, "instagram")
    automation = client.post("/v1/comment-automations", headers=bearer(tenant["apiKey"]), json={
        "accountId": instagram["id"], "name": "x", "matchType": "any", "dmText": "hi"}).json()
    conversation = _conversation(client, tenant, instagram, "8301")
    sequence = _sequence(client, tenant, instagram, _steps("a", "b", delay=60), trigger="comment_automation",
                         automationId=automation["id"])
    _enroll(client, tenant, sequence, conversation["id"])
    client.post("/sandbox/instagram/comment", json={"accountId": instagram["id"], "mediaId": "m1",
                                                    "from": {"id": "8302"}, "text": "hello"}).raise_for_status()
    assert client.post(f"/v1/accounts/{instagram['id']}/disconnect", headers=bearer(tenant["apiKey"])).status_code == 200
    deleted = client.delete(f"/v1/accounts/{instagram['id']}/permanent", headers=bearer(tenant["apiKey"]))
    assert deleted.status_code == 200, deleted.text
    assert client.get(f"/v1/sequences/{sequence['id']}", headers=bearer(tenant["apiKey"])).status_code == 404
    assert client.get(f"/v1/comment-automations/{automation['id']}",
                      headers=bearer(tenant["apiKey"])).status_code == 404


@pytest.mark.parametrize("platform", ["youtube", "linkedin"])
def test_a_sequence_needs_direct_messages(client, tenant, platform):
    # LinkedIn has no messages at all; YouTube's conversations are public comment threads, where the
    # same follow-ups under every thread would be public spam.
    account = connect_account(client, tenant, platform)
    answer = _create(client, tenant, account, _steps("Hi"))
    assert answer.status_code == 422
    assert [d["field"] for d in answer.json()["error"]["details"]] == ["accountId"]
