"""The commands as a newcomer runs them (issue: where users stopped): `sandbox seed` without
`--profile`, `analytics snapshot` through the running service's sandbox, a standalone
`sandbox serve` with a data dir of its own, and the test `curl` that `webhooks listen` prints."""

from __future__ import annotations

import json
import re
import shlex
import signal
import subprocess

import httpx2

from storage.db import connection, db
from storage.models import Profile
from tests.conftest import bearer
from tests.support.live_server import free_port
from tests.support.processes import serve_process, service_env, switchboard
from tests.test_cli_sandbox_serve import _process, _wait_sandbox
from tests.test_cli_webhooks_listen import _lines, _until


def _run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(switchboard(*args), env=env, capture_output=True, text=True, timeout=120)


def test_seed_takes_the_only_profile_and_lists_them_when_there_are_several(service, tenant):
    port = int(service.base_url.rsplit(":", 1)[1])
    env = service_env(service)
    with serve_process(service, port) as url:
        seeded = _run("sandbox", "seed", "--json", env=env)
        assert seeded.returncode == 0, seeded.stderr
        accounts = json.loads(seeded.stdout)["accounts"]
        listed = httpx2.get(url + "/v1/accounts", headers=bearer(tenant["apiKey"]), params={"limit": 100}).json()
        assert {a["id"] for a in listed["data"]} == set(accounts.values())

        with connection(), db.atomic():
            Profile.create(id="prf_second", workspace=tenant["workspaceId"], name="Second brand")
        refused = _run("sandbox", "seed", "--json", env=env)
    assert refused.returncode == 1 and refused.stdout == ""
    assert f"--profile {tenant['profileId']}" in refused.stderr and "--profile prf_second" in refused.stderr


def test_analytics_snapshot_reads_the_sandbox_of_the_running_service(service, tenant):
    port = int(service.base_url.rsplit(":", 1)[1])
    with serve_process(service, port) as url:
        seeded = _run("sandbox", "seed", "--profile", tenant["profileId"], "--json", env=service_env(service))
        accounts = json.loads(seeded.stdout)["accounts"]
        httpx2.post(url + "/sandbox/instagram/followers", json={"accountId": accounts["instagram"], "followers": 321})
        # As a person types it: no sandbox variable set by hand.
        env = service_env(service)
        del env["SWITCHBOARD_SANDBOX"]
        taken = _run("analytics", "snapshot", "--json", env=env)
    assert taken.returncode == 0, taken.stderr
    snapshots = {s["accountId"]: s for s in json.loads(taken.stdout)["snapshots"]}
    taken_on = {s["platform"] for s in snapshots.values() if s["outcome"] == "taken"}
    # Every platform whose sandbox counts followers for such an account (not WhatsApp, nor Telegram
    # without a channel, nor Meta Ads, nor a LinkedIn member without analytics access).
    assert taken_on == {"instagram", "facebook", "tiktok", "youtube", "x"}
    assert snapshots[accounts["instagram"]]["followers"] == 321


def test_a_standalone_sandbox_with_its_own_data_dir_connects_every_platform(service, tenant, tmp_path):
    sandbox_port, api_port = free_port(), int(service.base_url.rsplit(":", 1)[1])
    sandbox_url = f"http://127.0.0.1:{sandbox_port}"
    env = service_env(service, SWITCHBOARD_SANDBOX_URL=sandbox_url)
    # Its own data dir and so its own secret key; the database is the deployment's.
    sandbox_env = {**env, "SWITCHBOARD_DATA_DIR": str(tmp_path / "sandbox-data")}
    del sandbox_env["SWITCHBOARD_SECRET_KEY"]
    with _process(["sandbox", "serve", "--port", str(sandbox_port)], sandbox_env) as sandbox:
        _wait_sandbox(sandbox_url, sandbox)
        with _process(["serve", "--port", str(api_port)], env, f"http://127.0.0.1:{api_port}"):
            seeded = _run("sandbox", "seed", "--json", env=env)
            assert seeded.returncode == 0, seeded.stderr
            accounts = json.loads(seeded.stdout)["accounts"]
            assert accounts["instagram"].startswith("acc_") and accounts["youtube"].startswith("acc_")
            inbound = httpx2.post(sandbox_url + "/sandbox/instagram/inbound-message", json={
                "accountId": accounts["instagram"], "from": {"id": "ig-9", "handle": "ana"}, "text": "hi"})
            assert inbound.json()["delivered"] is True  # signed with the secret both sides derive alike


def test_webhooks_listen_prints_a_curl_that_sends_a_test_event(service, tenant):
    port = int(service.base_url.rsplit(":", 1)[1])
    with serve_process(service, port):
        process = subprocess.Popen(switchboard("webhooks", "listen"), env=service_env(service),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            lines = _lines(process)
            _until(lines, r"^Ready: ")
            command = _until(lines, r"Send a test event: curl").split("Send a test event: ", 1)[1]
            assert "sk_..." not in command
            ran = subprocess.run([*shlex.split(command), "-s", "-o", "/dev/null", "-w", "%{http_code}"],
                                 capture_output=True, text=True, timeout=30)
            assert ran.stdout == "202"
            assert re.search(r"webhook\.test .*signature verified", _until(lines, r"webhook\.test"))
        finally:
            process.send_signal(signal.SIGINT)
            process.wait(timeout=30)
    assert process.returncode == 0, process.stderr.read()
