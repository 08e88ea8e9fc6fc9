"""The emulator's signed webhook deliveries as a whole: WhatsApp's and Telegram's messages, the
controls' validation, the service's account ids, the latency control."""

from __future__ import annotations

import json


def test_emulator_whatsapp_and_telegram_messages(sandbox):
    wa = sandbox.connected("whatsapp")
    sandbox.inbound("whatsapp", wa, {"id": "+15557654321", "name": "Lu"}, "oi")
    hook = sandbox.hooks[-1]
    assert hook.verified
    (event,) = hook.events
    assert (
        event.platform_account_id,
        event.contact_id,
        event.contact_handle,
        event.contact_name,
        event.text,
    ) == (wa.platform_account_id, "15557654321", "+15557654321", "Lu", "oi")
    tg = sandbox.connected("telegram")
    sandbox.inbound("telegram", tg, {"id": "99", "handle": "max", "name": "Max Power"}, "/start")
    hook = sandbox.hooks[-1]
    assert hook.verified and hook.query == {"bot": tg.platform_account_id}
    (event,) = hook.events
    assert (event.kind, event.contact_id, event.contact_handle, event.contact_name) == (
        "message",
        "99",
        "max",
        "Max Power",
    )
    assert event.dedupe_key.startswith(f"telegram:{tg.platform_account_id}:")


def test_control_validation_is_422_and_unknown_account_404(sandbox):
    bad = sandbox.control("telegram", "inbound-message", {"accountId": 5, "text": "x", "extra": 1})
    assert bad.status_code == 422
    error = bad.json()["error"]
    assert error["code"] == "validation_failed"
    assert {d["field"] for d in error["details"]} == {"accountId", "from", "extra"}
    unknown = sandbox.control("telegram", "followers", {"accountId": "acc_nope", "followers": 1})
    assert unknown.status_code == 404
    assert sandbox.control("x", "faults", {"failNext": 1, "status": 418}).status_code == 422
    assert json.loads(sandbox.control("x", "latency", {"milliseconds": 0}).text) == {"milliseconds": 0}


def test_service_account_ids_are_translated(sandbox):
    acc = sandbox.connected("telegram")
    sandbox.aliases[("telegram", "acc_svc_1")] = acc.platform_account_id
    sandbox.inbound("telegram", acc, {"id": "1212"}, "hey")
    sandbox.adapters["telegram"].send_dm(acc, recipient="1212", text="yo")
    rows = sandbox.client.get(sandbox.url("telegram", "sent"), params={"accountId": "acc_svc_1"}).json()[
        "data"
    ]
    assert [(r["accountId"], r["text"]) for r in rows] == [("acc_svc_1", "yo")]


def test_latency_control_delays_answers(sandbox):
    import time

    acc = sandbox.account("linkedin")
    sandbox.control("linkedin", "latency", {"milliseconds": 300})
    started = time.monotonic()
    sandbox.adapters["linkedin"].follower_count(acc)
    elapsed = time.monotonic() - started
    sandbox.control("linkedin", "latency", {"milliseconds": 0})
    assert elapsed >= 0.3
