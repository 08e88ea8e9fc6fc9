"""Durable sending through the inbox API: one key is one message, a platform's 429 is a wait and never a
failure, and what the platform received is read back from the sandbox emulator."""

from __future__ import annotations

import threading
import uuid

import httpx2
import pytest

from service.common import idempotency
from service.engine import core as engine
from storage.db import connection, db
from storage.models import Event, IdempotencyRecord, Message
from tests.conftest import bearer
from tests.support.sandbox import connect_account
from tests.support.webhook_receiver import wait_for


def _telegram_conversation(client, tenant, chat_id="5001"):
    """A bot and a conversation its contact opened, as on Telegram: a bot cannot write first."""
    bot = connect_account(client, tenant, "telegram")
    wrote = client.post("/sandbox/telegram/inbound-message",
                        json={"accountId": bot["id"], "from": {"id": chat_id, "name": "Ada"}, "text": "hello"})
    assert wrote.status_code == 200, wrote.text
    listed = client.get("/v1/conversations", headers=bearer(tenant["apiKey"]), params={"accountId": bot["id"]})
    (conversation,) = listed.json()["data"]
    return bot, conversation


def _sent(client, platform, account):
    answer = client.get(f"/sandbox/{platform}/sent", params={"accountId": account["id"]})
    assert answer.status_code == 200
    return [row for row in answer.json()["data"] if row["kind"] == "dm"]


def _outbound(conversation_id):
    with connection():
        return list(Message.select().where(Message.conversation == conversation_id, Message.direction == "outbound"))



def test_twelve_concurrent_sends_with_one_key_make_one_message(client, tenant, server_url):
    bot, conversation = _telegram_conversation(client, tenant)
    client.post("/sandbox/telegram/latency", json={"milliseconds": 400})
    key = f"send-{uuid.uuid4().hex}"
    barrier = threading.Barrier(12)
    answers: list[httpx2.Response] = []

    def send():
        with httpx2.Client(base_url=server_url, timeout=30) as http:
            barrier.wait()
            answers.append(http.post(f"/v1/conversations/{conversation['id']}/messages", json={"text": "only once"},
                                     headers={**bearer(tenant["apiKey"]), "Idempotency-Key": key}))

    threads = [threading.Thread(target=send) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    statuses = sorted(answer.status_code for answer in answers)
    assert statuses.count(201) >= 1
    assert set(statuses) <= {201, 409}
    in_progress = [a.json()["error"]["code"] for a in answers if a.status_code == 409]
    assert set(in_progress) <= {"idempotency_in_progress"}
    assert len({a.json()["id"] for a in answers if a.status_code == 201}) == 1
    assert [row["text"] for row in _sent(client, "telegram", bot)] == ["only once"]
    assert len(_outbound(conversation["id"])) == 1


def test_a_client_that_timed_out_and_retried_sends_once(client, tenant, server_url):
    bot, conversation = _telegram_conversation(client, tenant)
    client.post("/sandbox/telegram/latency", json={"milliseconds": 1500})
    headers = {**bearer(tenant["apiKey"]), "Idempotency-Key": "retry-me"}
    path = f"/v1/conversations/{conversation['id']}/messages"
    with httpx2.Client(base_url=server_url, timeout=0.3) as impatient, pytest.raises(httpx2.TimeoutException):
        impatient.post(path, json={"text": "patience"}, headers=headers)

    retried = client.post(path, json={"text": "patience"}, headers=headers)
    assert retried.status_code == 409
    assert retried.json()["error"]["code"] == "idempotency_in_progress"
    final = wait_for(lambda: (answer := client.post(path, json={"text": "patience"}, headers=headers)).status_code != 409
                   and answer)
    assert final.status_code == 201
    assert final.headers["Idempotent-Replayed"] == "true"
    assert final.json()["status"] == "sent"
    assert [row["text"] for row in _sent(client, "telegram", bot)] == ["patience"]
    assert len(_outbound(conversation["id"])) == 1


def test_a_claim_waits_for_the_disk_and_a_sent_outcome_does_not(client, tenant, monkeypatch):
    # At most once rests on the claim: a claim the database lost would send the message again. An
    # outcome lost in a crash leaves the row `sending` until its lease makes it `unknown`, so its
    # commit need not wait for the disk (on PostgreSQL; SQLite's commits never wait for it).
    bot, conversation = _telegram_conversation(client, tenant)
    flushes: dict[str, list[bool]] = {"claim": [], "outcome": []}
    run_fixed = engine.run_fixed

    def watched(template: str, params: tuple, *, wait_for_flush: bool = True):
        if template.startswith("UPDATE message SET claimed_until") or "(UPDATE message SET claimed_until" in template:
            flushes["claim"].append(wait_for_flush)
        elif "UPDATE message SET status = ?" in template:
            flushes["outcome"].append(wait_for_flush)
        return run_fixed(template, params, wait_for_flush=wait_for_flush)

    monkeypatch.setattr(engine, "run_fixed", watched)
    answer = client.post(f"/v1/conversations/{conversation['id']}/messages", json={"text": "claimed durably"},
                         headers=bearer(tenant["apiKey"]))
    assert answer.status_code == 201, answer.text
    assert answer.json()["status"] == "sent"
    assert flushes == {"claim": [True], "outcome": [False]}
    assert [row["text"] for row in _sent(client, "telegram", bot)] == ["claimed durably"]


def test_a_platform_asking_to_slow_down_is_a_wait_not_a_failure(client, tenant):
    bot, conversation = _telegram_conversation(client, tenant)
    client.post("/sandbox/telegram/faults", json={"accountId": bot["id"], "failNext": 2, "status": 429,
                                                   "retryAfter": 1})
    answer = client.post(f"/v1/conversations/{conversation['id']}/messages", json={"text": "after the wait"},
                         headers=bearer(tenant["apiKey"]))
    assert answer.status_code == 202, answer.text
    accepted = answer.json()
    assert accepted["status"] == "pending"
    assert "slow down" in accepted["error"]

    def settled():
        rows = client.get(f"/v1/conversations/{conversation['id']}/messages", headers=bearer(tenant["apiKey"]))
        return [m for m in rows.json()["data"] if m["id"] == accepted["id"] and m["status"] == "sent"]

    sent = wait_for(settled, timeout=20)[0]
    assert sent["platformMessageId"]
    assert sent["error"] is None
    assert [row["text"] for row in _sent(client, "telegram", bot)] == ["after the wait"]
    with connection():
        assert Message.get_by_id(accepted["id"]).attempts == 3
        kinds = [e.type for e in Event.select().where(Event.type.in_(["message.sent", "message.failed"]))]
    assert kinds == ["message.sent"]


def test_a_refusal_and_a_slow_down_read_differently(client, tenant):
    bot, conversation = _telegram_conversation(client, tenant)
    client.post("/sandbox/telegram/faults", json={"accountId": bot["id"], "failNext": 1, "status": 400})
    refused = client.post(f"/v1/conversations/{conversation['id']}/messages", json={"text": "no"},
                          headers=bearer(tenant["apiKey"]))
    assert refused.status_code == 502
    assert "refused" in refused.json()["error"]["message"]
    assert "in time" not in refused.json()["error"]["message"]
    (failed,) = _outbound(conversation["id"])
    assert failed.status == "failed"


def test_replayed_answers_are_encrypted_at_rest(client, tenant):
    answer = client.post("/v1/api-keys", json={"name": "replayed"},
                         headers={**bearer(tenant["apiKey"]), "Idempotency-Key": "key-once"})
    assert answer.status_code == 201
    secret = answer.json()["key"]
    again = client.post("/v1/api-keys", json={"name": "replayed"},
                        headers={**bearer(tenant["apiKey"]), "Idempotency-Key": "key-once"})
    assert again.json()["key"] == secret
    with connection():
        (row,) = IdempotencyRecord.select().where(IdempotencyRecord.idempotency_key == "key-once")
    assert secret not in row.body
    assert idempotency.stored_body(row)["key"] == secret


def test_a_failed_request_frees_its_key(client, tenant):
    _bot, conversation = _telegram_conversation(client, tenant)
    headers = {**bearer(tenant["apiKey"]), "Idempotency-Key": "bad-then-good"}
    path = f"/v1/conversations/{conversation['id']}/messages"
    too_long = client.post(path, json={"text": "x" * 4097}, headers=headers)
    assert too_long.status_code == 422
    with connection():
        assert not IdempotencyRecord.select().where(IdempotencyRecord.idempotency_key == "bad-then-good").exists()
    assert client.post(path, json={"text": "x" * 4097}, headers=headers).status_code == 422


def test_a_key_freed_by_its_holder_while_another_request_reserves_it_is_taken(tenant, monkeypatch):
    # On PostgreSQL a request that failed frees its key in a transaction of its own. Another request
    # with the key may have found the holder's row (its insert did nothing) and then read it, gone.
    credential, key = f"key_{uuid.uuid4().hex[:12]}", "freed-meanwhile"
    with connection(), db.atomic():
        holder = idempotency.reserve(credential, key, "same body")
    assert isinstance(holder, idempotency.Reservation)
    insert = IdempotencyRecord.insert

    def insert_then_the_holder_fails(**row):
        query = insert(**row)
        ignoring = query.on_conflict_ignore

        def on_conflict_ignore(*args, **kwargs):
            statement = ignoring(*args, **kwargs)
            run = statement.execute

            def execute(*args, **kwargs):
                done = run(*args, **kwargs)
                idempotency.release(holder)  # the holder failed, having made nothing
                return done

            statement.execute = execute
            return statement

        query.on_conflict_ignore = on_conflict_ignore
        return query

    monkeypatch.setattr(IdempotencyRecord, "insert", insert_then_the_holder_fails)
    with connection(), db.atomic():
        taken = idempotency.reserve(credential, key, "same body")
    assert isinstance(taken, idempotency.Reservation) and taken.owner != holder.owner


def test_whatsapp_refusing_later_moves_the_sent_message_to_failed(client, tenant):
    wa = connect_account(client, tenant, "whatsapp")
    contact = {"id": "15551234567", "name": "Lin"}
    for body in ({"text": "hi"}, {"text": "long ago", "timestamp": "2020-01-01T00:00:00Z"}):
        wrote = client.post("/sandbox/whatsapp/inbound-message", json={"accountId": wa["id"], "from": contact, **body})
        assert wrote.status_code == 200, wrote.text
    # WhatsApp's clock now says the contact last wrote years ago; ours says a moment ago. WhatsApp
    # accepts the send and refuses it a moment later in a status webhook.
    (conversation,) = client.get("/v1/conversations", headers=bearer(tenant["apiKey"]),
                                 params={"accountId": wa["id"]}).json()["data"]
    answer = client.post(f"/v1/conversations/{conversation['id']}/messages", json={"text": "too late"},
                         headers=bearer(tenant["apiKey"]))
    assert answer.status_code == 201, answer.text
    assert answer.json()["status"] == "sent"

    def failed():
        rows = client.get(f"/v1/conversations/{conversation['id']}/messages", headers=bearer(tenant["apiKey"]))
        return [m for m in rows.json()["data"] if m["id"] == answer.json()["id"] and m["status"] == "failed"]

    (message,) = wait_for(failed)
    assert "(131047)" in message["error"] and "24 hours" in message["error"]
    assert _sent(client, "whatsapp", wa) == []
    with connection():
        kinds = [e.type for e in Event.select().where(Event.type.in_(["message.sent", "message.failed"]))
                 .order_by(Event.created_at)]
    assert kinds == ["message.sent", "message.failed"]


def _whatsapp_conversation_out_of_window(client, tenant):
    wa = connect_account(client, tenant, "whatsapp")
    wrote = client.post("/sandbox/whatsapp/inbound-message", json={
        "accountId": wa["id"], "from": {"id": "15557654321", "name": "Ola"}, "text": "old",
        "timestamp": "2020-01-01T00:00:00Z"})
    assert wrote.status_code == 200, wrote.text
    (conversation,) = client.get("/v1/conversations", headers=bearer(tenant["apiKey"]),
                                 params={"accountId": wa["id"]}).json()["data"]
    return wa, conversation


def test_outside_the_window_an_approved_whatsapp_template_still_reaches_the_contact(client, tenant):
    wa, conversation = _whatsapp_conversation_out_of_window(client, tenant)
    path = f"/v1/conversations/{conversation['id']}/messages"
    refused = client.post(path, json={"text": "free text"}, headers=bearer(tenant["apiKey"]))
    assert refused.status_code == 422
    assert refused.json()["error"]["code"] == "outside_messaging_window"

    listed = client.get(f"/v1/accounts/{wa['id']}/templates", headers=bearer(tenant["apiKey"]))
    assert listed.status_code == 200, listed.text
    templates = {(t["name"], t["language"]): t for t in listed.json()["data"]}
    assert templates[("order_update", "en_US")] == {"name": "order_update", "language": "en_US",
                                                    "category": "UTILITY", "parameters": 2,
                                                    "parameterFormat": "POSITIONAL", "parameterNames": [],
                                                    "headerFormat": None, "headerVariable": False,
                                                    "headerParameterName": None, "buttonParameters": []}
    assert ("spring_offer", "en_US") not in templates  # still in review

    template = {"name": "order_update", "language": "en_US", "parameters": ["A-1042", "Friday"]}
    sent = client.post(path, json={"template": template}, headers=bearer(tenant["apiKey"]))
    assert sent.status_code == 201, sent.text
    assert sent.json()["status"] == "sent"
    assert sent.json()["template"] == {**template, "headerMediaUrl": None, "buttonParameters": [], "headerText": None}
    assert sent.json()["text"] is None
    assert [row["text"] for row in _sent(client, "whatsapp", wa)] == ["Your order A-1042 ships on Friday."]

    wrong = client.post(path, json={"template": {"name": "order_update", "language": "en_US", "parameters": ["A-1"]}},
                        headers=bearer(tenant["apiKey"]))
    assert wrong.status_code == 502
    assert "132000" in wrong.json()["error"]["message"] or "parameters" in wrong.json()["error"]["message"]


def test_named_parameters_a_media_header_and_a_url_button_variable_reach_the_contact(client, tenant):
    """Cloud API templates beyond positional body text: `parameter_format: NAMED` bodies are sent with
    each `parameter_name`, a media header with its link, a URL button's variable in a `button`
    component (https://developers.facebook.com/docs/whatsapp/cloud-api/guides/send-message-templates)."""
    wa, conversation = _whatsapp_conversation_out_of_window(client, tenant)
    path = f"/v1/conversations/{conversation['id']}/messages"
    templates = {t["name"]: t for t in client.get(f"/v1/accounts/{wa['id']}/templates",
                                                   headers=bearer(tenant["apiKey"])).json()["data"]}
    assert templates["delivery_named"]["parameterNames"] == ["first_name", "order_id"]
    assert templates["launch_video"]["headerFormat"] == "VIDEO" and templates["launch_video"]["buttonParameters"] == [0]

    named = client.post(path, headers=bearer(tenant["apiKey"]), json={"template": {
        "name": "delivery_named", "language": "en_US", "parameters": ["Ana", "A-7"]}})
    assert named.status_code == 201, named.text
    video = client.post(path, headers=bearer(tenant["apiKey"]), json={"template": {
        "name": "launch_video", "language": "en_US", "parameters": ["today"],
        "headerMediaUrl": "https://cdn.example.com/launch.mp4", "buttonParameters": ["spring"]}})
    assert video.status_code == 201, video.text
    rows = _sent(client, "whatsapp", wa)
    assert [row["text"] for row in rows] == ["Hi Ana, order A-7 arrives today.", "Our launch: today."]
    components = rows[1]["payload"]["template"]["components"]
    assert components[0] == {"type": "header", "parameters": [
        {"type": "video", "video": {"link": "https://cdn.example.com/launch.mp4"}}]}
    assert components[-1] == {"type": "button", "sub_type": "url", "index": "0",
                              "parameters": [{"type": "text", "text": "spring"}]}


def test_a_text_headers_variable_is_filled_and_an_unknown_template_is_never_sent(client, tenant):
    """A TEXT header with a variable takes a `header` component with its text, else WhatsApp refuses
    the message (132000); a template the account has not approved is refused before any send, not
    sent with positional parameters on the chance they fit."""
    wa, conversation = _whatsapp_conversation_out_of_window(client, tenant)
    path = f"/v1/conversations/{conversation['id']}/messages"
    templates = {t["name"]: t for t in client.get(f"/v1/accounts/{wa['id']}/templates",
                                                   headers=bearer(tenant["apiKey"])).json()["data"]}
    assert templates["ticket_header"]["headerVariable"] is True

    sent = client.post(path, headers=bearer(tenant["apiKey"]), json={"template": {
        "name": "ticket_header", "language": "en_US", "headerText": "T-42"}})
    assert sent.status_code == 201, sent.text
    assert sent.json()["template"]["headerText"] == "T-42"
    rows = _sent(client, "whatsapp", wa)
    assert rows[-1]["payload"]["template"]["components"] == [
        {"type": "header", "parameters": [{"type": "text", "text": "T-42"}]}]

    missing = client.post(path, headers=bearer(tenant["apiKey"]), json={"template": {
        "name": "ticket_header", "language": "en_US"}})
    assert missing.status_code == 502
    assert "headerText" in missing.json()["error"]["message"]
    unknown = client.post(path, headers=bearer(tenant["apiKey"]), json={"template": {
        "name": "no_such_template", "language": "en_US", "parameters": ["A-1"]}})
    assert unknown.status_code == 502
    assert "not an approved template" in unknown.json()["error"]["message"]
    assert len(_sent(client, "whatsapp", wa)) == len(rows)  # neither reached WhatsApp


def test_templates_are_whatsapps_and_a_message_is_text_or_a_template(client, tenant):
    bot, conversation = _telegram_conversation(client, tenant)
    path = f"/v1/conversations/{conversation['id']}/messages"
    template = {"name": "hello_world", "language": "en_US"}
    not_here = client.post(path, json={"template": template}, headers=bearer(tenant["apiKey"]))
    assert not_here.status_code == 422
    assert not_here.json()["error"]["details"][0]["field"] == "template"
    both = client.post(path, json={"text": "hi", "template": template}, headers=bearer(tenant["apiKey"]))
    neither = client.post(path, json={}, headers=bearer(tenant["apiKey"]))
    assert both.status_code == neither.status_code == 422
    assert client.get(f"/v1/accounts/{bot['id']}/templates", headers=bearer(tenant["apiKey"])).status_code == 422
    assert _sent(client, "telegram", bot) == []
