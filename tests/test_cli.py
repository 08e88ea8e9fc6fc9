"""The commands a person runs: bootstrap prints JSON; serve on an empty database prints the sign-in once."""

import json
import subprocess

import httpx2

from tests.conftest import bearer
from tests.support.live_server import free_port
from tests.support.processes import service_env, switchboard, wait_healthy


def test_bootstrap_json_makes_a_new_workspace_each_call(service):
    env = service_env(service)
    outputs = [
        json.loads(subprocess.run(switchboard("bootstrap", "--email", "a@example.com", "--password", "long enough",
                                              "--json"), env=env, capture_output=True, check=True, text=True).stdout)
        for _ in range(2)
    ]
    assert set(outputs[0]) == {"userId", "workspaceId", "profileId", "apiKey"}
    assert outputs[0]["userId"] == outputs[1]["userId"]
    assert outputs[0]["workspaceId"] != outputs[1]["workspaceId"]
    wrong = subprocess.run(switchboard("bootstrap", "--email", "a@example.com", "--password", "not the one", "--json"),
                           env=env, capture_output=True, text=True)
    assert wrong.returncode == 1
    assert "not the one" not in wrong.stderr


def _serve_once(env, port, log):
    """Start `switchboard serve`, wait until healthy, stop it; return what it printed."""
    with log.open("w") as out:
        process = subprocess.Popen(switchboard("serve", "--port", str(port)), env=env, stdout=out,
                                   stderr=subprocess.STDOUT)
        try:
            wait_healthy(f"http://127.0.0.1:{port}", process)
            return log.read_text()
        finally:
            process.terminate()
            process.wait(timeout=15)


def test_first_serve_prints_sign_in_and_a_working_key_once(service, tmp_path):
    port = free_port()
    env = service_env(service, SWITCHBOARD_BASE_URL=f"http://127.0.0.1:{port}")
    first = _serve_once(env, port, tmp_path / "first.log")
    key = next(line.split()[-1] for line in first.splitlines() if "API key:" in line)
    assert "owner@example.com" in first
    assert "Password:" in first
    second = _serve_once(env, port, tmp_path / "second.log")
    assert "API key:" not in second
    assert key not in second
    with subprocess.Popen(switchboard("serve", "--port", str(port)), env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL) as process:
        try:
            wait_healthy(f"http://127.0.0.1:{port}", process)
            assert httpx2.get(f"http://127.0.0.1:{port}/v1/workspaces", headers=bearer(key)).status_code == 200
        finally:
            process.terminate()
