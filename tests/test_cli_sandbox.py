"""`switchboard sandbox seed` against a real `switchboard serve` process: found from the data dir,
idempotent across restarts, quiet, leaving no key behind; and never sending a key anywhere else."""

import json
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import httpx2

from platforms.base import PLATFORMS
from storage.db import connection
from storage.models import ApiKey
from tests.conftest import bearer
from tests.support.live_server import free_port
from tests.support.processes import serve_process, service_env, switchboard


def _seed(env, profile):
    return subprocess.run(switchboard("sandbox", "seed", "--profile", profile, "--json"), env=env,
                          capture_output=True, text=True, timeout=120)


def _keys():
    with connection():
        return ApiKey.select().count()


def test_seed_finds_the_running_service_and_is_idempotent_across_restarts(service, tenant):
    port = int(service.base_url.rsplit(":", 1)[1])
    env = service_env(service)
    del env["SWITCHBOARD_BASE_URL"]  # the seed finds the running service through the data dir
    keys_before = _keys()
    with serve_process(service, port) as url:
        first = _seed(env, tenant["profileId"])
        assert first.returncode == 0, first.stderr
        again = _seed(env, tenant["profileId"])
    assert first.stderr == "" and again.stderr == ""  # no log lines, no state tokens
    assert len(first.stdout.splitlines()) == 1
    accounts = json.loads(first.stdout)["accounts"]
    assert set(accounts) == set(PLATFORMS)
    assert json.loads(again.stdout)["accounts"] == accounts
    assert _keys() == keys_before  # no revoked key left in the list

    with serve_process(service, port) as url:
        after_restart = _seed(env, tenant["profileId"])
        assert after_restart.returncode == 0, after_restart.stderr
        assert json.loads(after_restart.stdout)["accounts"] == accounts
        listed = httpx2.get(url + "/v1/accounts", headers=bearer(tenant["apiKey"]), params={"limit": 100}).json()
        assert listed["pagination"]["total"] == len(PLATFORMS)
        answer = httpx2.post(url + "/sandbox/telegram/inbound-message", json={
            "accountId": accounts["telegram"], "from": {"id": "7", "handle": "ana"}, "text": "still here?"})
        assert answer.json()["delivered"] is True


class _Recorder(BaseHTTPRequestHandler):
    seen: ClassVar[list[dict[str, str]]] = []

    def do_GET(self):
        self.seen.append(dict(self.headers))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"status": "ok", "proof": "not-the-right-one"}')

    do_POST = do_GET

    def log_message(self, *args):
        pass


def test_seed_fails_clearly_before_any_key_is_made_or_sent(service, tenant):
    env = service_env(service)
    del env["SWITCHBOARD_BASE_URL"]
    keys_before = _keys()
    nothing_running = _seed(env, tenant["profileId"])
    assert nothing_running.returncode == 1
    assert "no running `switchboard serve`" in nothing_running.stderr
    assert str(service.data_dir) in nothing_running.stderr

    # Something else listens where the settings point: it gets no key, and the seed says why.
    stranger = ThreadingHTTPServer(("127.0.0.1", free_port()), _Recorder)
    threading.Thread(target=stranger.serve_forever, daemon=True).start()
    try:
        env["SWITCHBOARD_BASE_URL"] = f"http://127.0.0.1:{stranger.server_port}"
        refused = _seed(env, tenant["profileId"])
    finally:
        stranger.shutdown()
    assert refused.returncode == 1
    assert "is not the one using data dir" in refused.stderr
    assert _Recorder.seen and not any("Authorization" in headers for headers in _Recorder.seen)
    assert _keys() == keys_before


def test_seed_refuses_a_server_that_relays_the_proof_from_the_real_service(server_url, service, tenant):
    class Relay(BaseHTTPRequestHandler):
        seen: ClassVar[list[dict[str, str]]] = []

        def do_GET(self):
            self.seen.append(dict(self.headers))
            answer = httpx2.get(server_url + self.path)  # asks the real service for the proof
            self.send_response(answer.status_code)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(answer.content)

        do_POST = do_GET

        def log_message(self, *args):
            pass

    relay = ThreadingHTTPServer(("127.0.0.1", free_port()), Relay)
    threading.Thread(target=relay.serve_forever, daemon=True).start()
    keys_before = _keys()
    try:
        env = service_env(service, SWITCHBOARD_BASE_URL=f"http://127.0.0.1:{relay.server_port}")
        refused = _seed(env, tenant["profileId"])
    finally:
        relay.shutdown()
    assert refused.returncode == 1
    assert "is not the one using data dir" in refused.stderr
    assert Relay.seen and not any("Authorization" in headers for headers in Relay.seen)
    assert _keys() == keys_before
