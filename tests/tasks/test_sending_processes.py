"""Durable sending across real processes: a sender killed (SIGKILL) in the middle of its calls leaves
every message settled and none sent twice; two worker processes share one bot's pace.

The API of the test process hosts the sandbox emulator; the senders are separate `switchboard`
processes on the same database and queue, whose adapters call that emulator."""

from __future__ import annotations

import bisect
import contextlib
import datetime as dt
import itertools
import signal
import statistics
import subprocess
import threading
from collections import Counter
from collections.abc import Iterator

import httpx2
import pytest

from kit.settings import Settings
from service.inbox import outbound
from storage.db import connection, db
from storage.models import Account, Conversation, Message
from switchboard.app import create_app
from tests.conftest import bearer
from tests.support.live_server import free_port, live_server
from tests.support.processes import serve_process, service_env, switchboard, wait_healthy, worker_processes
from tests.support.sandbox import connect_account
from tests.support.webhook_receiver import wait_for

LEASE = "3"  # seconds a sender holds a message; short, so the test sees a lost one settled


@pytest.fixture
def api_only(service: Settings) -> Iterator[httpx2.Client]:
    """The API (and the emulator) with no worker: sending is left to the test's processes."""
    port = int(service.base_url.rsplit(":", 1)[1])
    with live_server(create_app(service, worker=False), port=port) as url, \
            httpx2.Client(base_url=url, timeout=30) as http:
        yield http


def _telegram_conversation(http: httpx2.Client, tenant: dict[str, str]) -> tuple[dict, dict]:
    bot = connect_account(http, tenant, "telegram")
    wrote = http.post("/sandbox/telegram/inbound-message",
                      json={"accountId": bot["id"], "from": {"id": "7001", "name": "Grace"}, "text": "hi"})
    assert wrote.status_code == 200, wrote.text
    (conversation,) = http.get("/v1/conversations", headers=bearer(tenant["apiKey"]),
                               params={"accountId": bot["id"]}).json()["data"]
    return bot, conversation


def _sent_texts(http: httpx2.Client, bot: dict) -> list[str]:
    rows = http.get("/sandbox/telegram/sent", params={"accountId": bot["id"]}).json()["data"]
    return [row["text"] for row in rows if row["kind"] == "dm"]


def _statuses(conversation_id: str) -> dict[str, str]:
    with connection():
        rows = Message.select().where(Message.conversation == conversation_id, Message.direction == "outbound")
        return {row.text: row.status for row in rows}



def _retry_all(url: str, tenant: dict[str, str], path: str, texts: list[str]) -> dict[str, dict]:
    retried = {}
    with httpx2.Client(base_url=url, timeout=30) as http:
        for text in texts:
            headers = {**bearer(tenant["apiKey"]), "Idempotency-Key": f"key-{text}"}
            answer = wait_for(lambda: (a := http.post(path, json={"text": text}, headers=headers)).status_code != 409
                            and a, timeout=30)
            assert answer.status_code in (201, 202), answer.text
            retried[text] = answer.json()
    return retried


def test_a_sender_killed_mid_call_leaves_every_message_settled_and_none_twice(api_only, tenant, settings, tmp_path):
    bot, conversation = _telegram_conversation(api_only, tenant)
    api_only.post("/sandbox/telegram/latency", json={"milliseconds": 1500})
    port = free_port()
    sender = subprocess.Popen(switchboard("serve", "--no-worker", "--port", str(port)),
                              env=service_env(settings, SWITCHBOARD_SEND_LEASE_SECONDS=LEASE),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sender_url = f"http://127.0.0.1:{port}"
    texts = [f"message {n}" for n in range(6)]
    path = f"/v1/conversations/{conversation['id']}/messages"

    def post(text: str) -> None:
        headers = {**bearer(tenant["apiKey"]), "Idempotency-Key": f"key-{text}"}
        with contextlib.suppress(httpx2.TransportError):  # the sender dies under it
            httpx2.post(sender_url + path, json={"text": text}, headers=headers, timeout=30)

    try:
        wait_healthy(sender_url, sender)
        threads = [threading.Thread(target=post, args=(text,)) for text in texts]
        for thread in threads:
            thread.start()
        # Kill it while its calls are in the platform's hands.
        wait_for(lambda: list(_statuses(conversation["id"]).values()).count("sending") >= 3, timeout=20)
        sender.send_signal(signal.SIGKILL)
        sender.wait(timeout=10)
        for thread in threads:
            thread.join()
    finally:
        if sender.poll() is None:
            sender.kill()
    assert "sending" in _statuses(conversation["id"]).values()

    # Restarted: within the lease and a sweep nothing is left in flight (the wait's bound, counted
    # from the restarted service's first answer: a loaded machine's start-up is no part of it). What
    # was in the platform's hands is `unknown` (it may have arrived); what never left is sent now.
    with serve_process(settings, port, SWITCHBOARD_SEND_LEASE_SECONDS=LEASE) as restarted:
        settled = wait_for(lambda: (s := _statuses(conversation["id"])) and not {"pending", "sending"} & set(s.values())
                         and s, timeout=float(LEASE) + 10)
        on_platform = Counter(_sent_texts(api_only, bot))
        retried = _retry_all(restarted, tenant, path, texts)
    assert set(settled.values()) <= {"sent", "unknown"}
    assert "unknown" in settled.values()
    assert all(count == 1 for count in on_platform.values()), on_platform
    assert all(on_platform[text] == 1 for text, status in settled.items() if status == "sent")

    # The clients retried with their keys: each found its message as it stands, none was sent again.
    assert Counter(_sent_texts(api_only, bot)) == on_platform | Counter(t for t in texts if t not in settled)
    for text, status in settled.items():
        assert retried[text]["status"] == status
    assert len(_statuses(conversation["id"])) == len(texts)


def test_two_workers_share_one_bots_pace_and_send_each_message_once(api_only, tenant, settings, tmp_path):
    bot, conversation = _telegram_conversation(api_only, tenant)
    texts = [f"queued {n}" for n in range(120)]
    with connection(), db.atomic():
        row = Conversation.get_by_id(conversation["id"])
        account = Account.get_by_id(bot["id"])
        for text in texts:
            outbound.queue_outbound(row, account, text=text, source="inbox")

    with worker_processes(settings, 2, tmp_path):
        wait_for(lambda: set(_statuses(conversation["id"]).values()) == {"sent"}, timeout=60)
    rows = api_only.get("/sandbox/telegram/sent", params={"accountId": bot["id"]}).json()["data"]

    assert sorted(row["text"] for row in rows) == sorted(texts)  # each once
    moments = sorted(dt.datetime.fromisoformat(row["at"].replace("Z", "+00:00")).timestamp() for row in rows)
    # Never faster than Telegram allows a bot (30 in any second)... The log has each send's instant as
    # the platform let it through, to the millisecond (cut, not rounded): the 31st after a send is a
    # second later or more, so at least 0.999 s later in the log.
    assert max(bisect.bisect_left(moments, start + 0.9995) - n for n, start in enumerate(moments)) <= 30
    # ...and at that pace: both workers together keep to one bot's 30 a second (29.1, 3 % under).
    # The typical gap between two sends says it; a stall of the machine (a process not scheduled for
    # a while) makes gaps longer and never shorter, since a late slot is not made up with a burst:
    # on a loaded machine it came out under 28.5 (5 % under 30), so the floor is 27, still far above
    # what a pace broken towards slow (each message waiting for the other worker's) would give. No
    # ceiling here: the window above is the platform's, and a send that left late (its slot kept) is
    # followed by one on time, a short gap that moves the median up on a loaded machine (32.3 seen).
    per_second = 1 / statistics.median(b - a for a, b in itertools.pairwise(moments))
    assert per_second >= 30 * 0.9, per_second
    with connection():
        attempts = [m.attempts for m in Message.select().where(Message.conversation == conversation["id"],
                                                                 Message.direction == "outbound")]
    # The platform hardly ever had to say slow down: a send that leaves late (a stalled process) can
    # tip one second over, and that message then waits and goes once; a broken pace would meet many
    # (two workers each keeping 30 a second would meet one in two). The pace keeps 3 % under the
    # platform's rate, a thin margin against a stall: up to 9 in 120 were seen on a busy machine.
    assert sum(1 for n in attempts if n > 1) <= len(attempts) // 8, attempts
