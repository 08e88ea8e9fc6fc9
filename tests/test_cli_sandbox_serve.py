"""`switchboard sandbox serve` runs the emulator as its own process; two API processes pointed at it
with `SWITCHBOARD_SANDBOX_URL` share its accounts, and its webhooks reach the service."""

import contextlib
import json
import subprocess
import time

import httpx2

from tests.conftest import bearer
from tests.support.live_server import free_port
from tests.support.processes import START_TIMEOUT, service_env, switchboard, wait_healthy


@contextlib.contextmanager
def _process(args, env, health_url=None):
    process = subprocess.Popen(switchboard(*args), env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        if health_url:
            wait_healthy(health_url, process)
        yield process
    finally:
        process.terminate()
        process.wait(timeout=20)


def _wait_sandbox(url, process):
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        assert process.poll() is None
        with contextlib.suppress(httpx2.TransportError):
            if httpx2.get(url + "/sandbox/telegram/sent").status_code == 200:
                return
        time.sleep(0.05)
    raise AssertionError("the sandbox did not start")


def test_two_api_processes_share_one_sandbox_process(service, tenant):
    sandbox_port, api_port, second_port = free_port(), int(service.base_url.rsplit(":", 1)[1]), free_port()
    sandbox_url = f"http://127.0.0.1:{sandbox_port}"
    env = service_env(service, SWITCHBOARD_SANDBOX_URL=sandbox_url)
    key = bearer(tenant["apiKey"])
    with _process(["sandbox", "serve", "--port", str(sandbox_port)], env) as sandbox:
        _wait_sandbox(sandbox_url, sandbox)
        with _process(["serve", "--port", str(api_port)], env, f"http://127.0.0.1:{api_port}") as _, \
             _process(["serve", "--port", str(second_port), "--no-worker"], env, f"http://127.0.0.1:{second_port}"):
            first, second = f"http://127.0.0.1:{api_port}", f"http://127.0.0.1:{second_port}"
            assert httpx2.get(first + "/sandbox/telegram/sent").status_code == 404  # not mounted in-process
            seeded = subprocess.run(switchboard("sandbox", "seed", "--profile", tenant["profileId"], "--json"),
                                    env=env, capture_output=True, text=True, timeout=120)
            assert seeded.returncode == 0, seeded.stderr
            accounts = json.loads(seeded.stdout)["accounts"]
            inbound = httpx2.post(sandbox_url + "/sandbox/telegram/inbound-message", json={
                "accountId": accounts["telegram"], "from": {"id": "42", "handle": "ana"}, "text": "hi"})
            assert inbound.json()["delivered"] is True
            conversation = httpx2.get(second + "/v1/conversations", headers=key).json()["data"][0]
            sent = httpx2.post(f"{second}/v1/conversations/{conversation['id']}/messages", headers=key,
                               json={"text": "answered by the second process"})
            assert sent.status_code == 201, sent.text
            log = httpx2.get(sandbox_url + "/sandbox/telegram/sent", params={"accountId": accounts["telegram"]})
            assert [row["text"] for row in log.json()["data"]] == ["answered by the second process"]
