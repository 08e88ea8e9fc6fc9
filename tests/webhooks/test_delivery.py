"""Deliveries to a real HTTPS receiver on loopback: signature, headers, retries, failure, redelivery, rotation."""

from __future__ import annotations

import itertools
import json
import threading

import pytest
import stripe

from service.common import events
from storage.db import connection, db
from tests.conftest import bearer
from tests.support.webhook_receiver import Answer, running_receiver, wait_for
from tests.webhooks.conftest import TEST_DELAYS, TEST_TIMEOUT

pytestmark = pytest.mark.shared_service


@pytest.fixture
def tenant(live):
    made = live.tenant()
    yield made
    # As a service of its own did by stopping: no delivery of this test outlives it, to reach a later
    # test's receiver (on a port used again) or to keep the workers busy while that test is timed.
    key = bearer(made["apiKey"])
    for endpoint in live.client.get("/v1/webhooks", headers=key, params={"limit": 100}).json()["data"]:
        live.client.delete(f"/v1/webhooks/{endpoint['id']}", headers=key)


def _endpoint(client, tenant, url, **body):
    answer = client.post("/v1/webhooks", json={"url": url, **body}, headers=bearer(tenant["apiKey"]))
    assert answer.status_code == 201, answer.text
    return answer.json()


def _log(client, tenant, webhook_id, **params):
    answer = client.get(f"/v1/webhooks/{webhook_id}/deliveries", params=params, headers=bearer(tenant["apiKey"]))
    assert answer.status_code == 200
    return answer.json()["data"]


def _await_status(client, tenant, webhook_id, status, *, count=1, timeout=30):
    return wait_for(lambda: (rows := _log(client, tenant, webhook_id, status=status)) and len(rows) >= count
                    and rows, timeout=timeout)


def _verify(hit, secret):
    """What a receiver does with Stripe's own library; raises when the signature does not match."""
    return stripe.WebhookSignature.verify_header(hit.body, hit.headers["x-service-signature"], secret, 300)


def test_a_test_event_arrives_signed_verifiable_by_stripes_library(client, tenant, receiver):
    made = _endpoint(client, tenant, receiver.url + "/hook")
    queued = client.post(f"/v1/webhooks/{made['id']}/test", headers=bearer(tenant["apiKey"])).json()
    hit = wait_for(lambda: receiver.snapshot())[0]

    assert _verify(hit, made["secret"]) is True
    envelope = json.loads(hit.body)
    assert envelope["id"] == queued["eventId"]
    assert envelope["type"] == "webhook.test"
    assert envelope["apiVersion"] == "1.0.0"
    assert envelope["workspaceId"] == tenant["workspaceId"]
    assert envelope["createdAt"].endswith("Z")
    assert envelope["data"]["webhook"]["id"] == made["id"]
    assert hit.path == "/hook"
    assert hit.headers["content-type"] == "application/json"
    assert hit.headers["x-service-event"] == "webhook.test"
    assert hit.headers["x-service-delivery"] == queued["id"]
    assert hit.headers["user-agent"] == "Switchboard-Webhooks/1.0"
    assert hit.headers["host"] == receiver.url.removeprefix("https://")

    row = _await_status(client, tenant, made["id"], "DELIVERED")[0]
    assert row["attempts"] == 1
    assert row["responseStatus"] == 200
    assert row["lastError"] is None
    assert row["deliveredAt"] is not None
    assert row["nextAttemptAt"] is None


def test_every_delivery_verifies_with_the_standard_webhooks_library(client, tenant, receiver):
    from standardwebhooks.webhooks import Webhook, WebhookVerificationError

    made = _endpoint(client, tenant, receiver.url)
    queued = client.post(f"/v1/webhooks/{made['id']}/test", headers=bearer(tenant["apiKey"])).json()
    hit = wait_for(lambda: receiver.snapshot())[0]
    assert hit.headers["webhook-id"] == queued["eventId"] == json.loads(hit.body)["id"]
    assert Webhook(made["secret"]).verify(hit.body, hit.headers) == json.loads(hit.body)
    assert _verify(hit, made["secret"]) is True  # the same secret verifies Stripe's scheme too

    # During a rotation both secrets sign, in both schemes.
    rotated = client.post(f"/v1/webhooks/{made['id']}/rotate-secret", headers=bearer(tenant["apiKey"])).json()
    client.post(f"/v1/webhooks/{made['id']}/test", headers=bearer(tenant["apiKey"]))
    second = wait_for(lambda: len(receiver.snapshot()) >= 2 and receiver.snapshot())[1]
    for secret in (made["secret"], rotated["secret"]):
        assert Webhook(secret).verify(second.body, second.headers)["type"] == "webhook.test"
    raised = None
    try:
        Webhook("whsec_" + "A" * 43 + "=").verify(second.body, second.headers)
    except WebhookVerificationError as error:
        raised = error
    assert raised is not None


def test_a_wrong_secret_does_not_verify(client, tenant, receiver):
    made = _endpoint(client, tenant, receiver.url)
    client.post(f"/v1/webhooks/{made['id']}/test", headers=bearer(tenant["apiKey"]))
    hit = wait_for(lambda: receiver.snapshot())[0]
    wrong = "whsec_" + "A" * 43
    raised = None
    try:
        _verify(hit, wrong)
    except stripe.SignatureVerificationError as error:
        raised = error
    assert raised is not None


def test_emitted_events_reach_subscribed_enabled_endpoints_only(client, tenant, receiver):
    every = _endpoint(client, tenant, receiver.url + "/every")
    posts_only = _endpoint(client, tenant, receiver.url + "/posts", events=["post.published"])
    accounts = _endpoint(client, tenant, receiver.url + "/accounts", events=["account.connected"])
    disabled = _endpoint(client, tenant, receiver.url + "/disabled")
    client.patch(f"/v1/webhooks/{disabled['id']}", json={"enabled": False}, headers=bearer(tenant["apiKey"]))

    with connection(), db.atomic():
        event = events.emit(workspace_id=tenant["workspaceId"], type="account.connected", data={"id": "acc_1"})
    hits = wait_for(lambda: len(receiver.snapshot()) >= 2 and receiver.snapshot())
    _await_status(client, tenant, every["id"], "DELIVERED")
    _await_status(client, tenant, accounts["id"], "DELIVERED")

    assert sorted(hit.path for hit in hits) == ["/accounts", "/every"]
    assert {json.loads(hit.body)["id"] for hit in hits} == {event.id}
    assert json.loads(hits[0].body)["data"] == {"id": "acc_1"}
    assert _log(client, tenant, posts_only["id"]) == []
    assert _log(client, tenant, disabled["id"]) == []


def test_an_event_of_a_rolled_back_change_is_never_sent(client, tenant, receiver):
    made = _endpoint(client, tenant, receiver.url)

    class Abandon(Exception):
        pass

    try:
        with connection(), db.atomic():
            events.emit(workspace_id=tenant["workspaceId"], type="account.connected", data={"id": "acc_gone"})
            raise Abandon
    except Abandon:
        pass
    with connection(), db.atomic():
        events.emit(workspace_id=tenant["workspaceId"], type="account.disconnected", data={"id": "acc_kept"})
    _await_status(client, tenant, made["id"], "DELIVERED")
    assert [json.loads(hit.body)["type"] for hit in receiver.snapshot()] == ["account.disconnected"]


def test_a_receiver_failing_twice_gets_the_event_on_the_third_attempt_at_the_configured_delays(client, tenant, tls):
    with running_receiver(tls, lambda n, path: Answer(503 if n <= 2 else 200)) as flaky:
        made = _endpoint(client, tenant, flaky.url)
        client.post(f"/v1/webhooks/{made['id']}/test", headers=bearer(tenant["apiKey"]))
        row = _await_status(client, tenant, made["id"], "DELIVERED")[0]
        hits = flaky.snapshot()

    assert row["attempts"] == 3
    assert row["responseStatus"] == 200
    assert len(hits) == 3
    gaps = [later.at - earlier.at for earlier, later in itertools.pairwise(hits)]
    # Each retry waits its delay, and starts within a scheduler tick (0.2 s) plus a little work.
    assert TEST_DELAYS[0] - 0.05 <= gaps[0] <= TEST_DELAYS[0] + 1.0
    assert TEST_DELAYS[1] - 0.05 <= gaps[1] <= TEST_DELAYS[1] + 1.0
    assert len({json.loads(hit.body)["id"] for hit in hits}) == 1
    assert len({hit.body for hit in hits}) == 1
    assert len({hit.headers["x-service-delivery"] for hit in hits}) == 1
    for hit in hits:
        assert _verify(hit, made["secret"]) is True


def test_a_retry_is_shown_as_retrying_with_its_next_attempt(client, tenant, tls):
    with running_receiver(tls, lambda n, path: Answer(500 if n == 1 else 200)) as flaky:
        made = _endpoint(client, tenant, flaky.url)
        client.post(f"/v1/webhooks/{made['id']}/test", headers=bearer(tenant["apiKey"]))
        row = _await_status(client, tenant, made["id"], "RETRYING")[0]
        _await_status(client, tenant, made["id"], "DELIVERED")
    assert row["attempts"] == 1
    assert row["responseStatus"] == 500
    assert row["lastError"] == "HTTP 500."
    assert row["nextAttemptAt"] is not None


def test_a_receiver_that_always_fails_ends_failed_after_six_attempts(client, tenant, tls):
    with running_receiver(tls, lambda n, path: Answer(500)) as broken:
        made = _endpoint(client, tenant, broken.url)
        client.post(f"/v1/webhooks/{made['id']}/test", headers=bearer(tenant["apiKey"]))
        row = _await_status(client, tenant, made["id"], "FAILED", timeout=60)[0]
        hits = broken.snapshot()
    assert row["attempts"] == 6
    assert row["responseStatus"] == 500
    assert row["lastError"] == "HTTP 500."
    assert row["nextAttemptAt"] is None
    assert row["deliveredAt"] is None
    assert len(hits) == 6


def test_a_timeout_is_a_failed_attempt(client, tenant, tls):
    release = threading.Event()
    with running_receiver(tls, lambda n, path: Answer(200, until=release) if n == 1 else Answer(200)) as slow:
        made = _endpoint(client, tenant, slow.url)
        client.post(f"/v1/webhooks/{made['id']}/test", headers=bearer(tenant["apiKey"]))
        row = _await_status(client, tenant, made["id"], "RETRYING")[0]
        release.set()
        delivered = _await_status(client, tenant, made["id"], "DELIVERED")[0]
    assert row["lastError"] == f"No answer within {TEST_TIMEOUT:g} s."
    assert row["responseStatus"] is None
    assert delivered["attempts"] == 2


def test_redirects_are_not_followed(client, tenant, tls):
    def behaviour(n, path):
        return Answer(200) if path == "/elsewhere" else Answer(302, location="/elsewhere")

    with running_receiver(tls, behaviour) as redirecting:
        made = _endpoint(client, tenant, redirecting.url + "/hook")
        client.post(f"/v1/webhooks/{made['id']}/test", headers=bearer(tenant["apiKey"]))
        row = _await_status(client, tenant, made["id"], "RETRYING")[0]
        paths = [hit.path for hit in redirecting.snapshot()]
    assert row["responseStatus"] == 302
    assert "redirect" in row["lastError"]
    assert "/elsewhere" not in paths


def test_redelivery_sends_the_same_event_id_as_a_new_delivery(client, tenant, receiver):
    made = _endpoint(client, tenant, receiver.url)
    first = client.post(f"/v1/webhooks/{made['id']}/test", headers=bearer(tenant["apiKey"])).json()
    _await_status(client, tenant, made["id"], "DELIVERED")
    again = client.post(f"/v1/webhooks/deliveries/{first['id']}/redeliver", headers=bearer(tenant["apiKey"]))
    assert again.status_code == 202
    _await_status(client, tenant, made["id"], "DELIVERED", count=2)
    hits = receiver.snapshot()

    assert again.json()["id"] != first["id"]
    assert again.json()["eventId"] == first["eventId"]
    assert [json.loads(hit.body)["id"] for hit in hits] == [first["eventId"], first["eventId"]]
    assert [hit.headers["x-service-delivery"] for hit in hits] == [first["id"], again.json()["id"]]
    assert hits[0].body == hits[1].body


def test_after_rotation_both_secrets_verify_for_the_overlap(client, tenant, receiver):
    made = _endpoint(client, tenant, receiver.url)
    rotated = client.post(f"/v1/webhooks/{made['id']}/rotate-secret", headers=bearer(tenant["apiKey"])).json()
    client.post(f"/v1/webhooks/{made['id']}/test", headers=bearer(tenant["apiKey"]))
    hit = wait_for(lambda: receiver.snapshot())[0]
    header = hit.headers["x-service-signature"]
    assert header.count("v1=") == 2
    assert _verify(hit, rotated["secret"]) is True
    assert _verify(hit, made["secret"]) is True


def test_a_hanging_receiver_does_not_slow_api_calls(client, tenant, tls):
    release = threading.Event()
    with running_receiver(tls, lambda n, path: Answer(200, until=release)) as hanging:
        made = _endpoint(client, tenant, hanging.url)
        key = bearer(tenant["apiKey"])
        for _ in range(8):  # enough to occupy every worker thread with a hanging attempt
            client.post(f"/v1/webhooks/{made['id']}/test", headers=key)
        wait_for(lambda: len(hanging.snapshot()) >= 4)
        # Every call answers while the attempts still hang: an API waiting on them would answer only
        # when the attempts time out (10 s), past each call's own 3 s limit (a ReadTimeout here).
        for _ in range(10):
            assert client.post(f"/v1/webhooks/{made['id']}/test", headers=key, timeout=3).status_code == 202
            assert client.get(f"/v1/webhooks/{made['id']}/deliveries", headers=key, timeout=3).status_code == 200
        release.set()
