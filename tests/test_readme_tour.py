"""The README's two first steps as a newcomer takes them, from a fresh clone.

`make serve` installs only what running the service needs (a small venv, quickly), every path it
uses is inside the clone, and the service comes up healthy. Then the 15-minute tour runs as written
against it: every command of the tour's shell blocks in one shell (the second terminal), `webhooks
listen` in a third, and the address the assistant is given; what a newcomer would see is checked
through the API and the sandbox: the reply, a post live on three platforms, the broadcast, the
automation's replies. One clone and one install serve both, as they would the newcomer."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import time
from pathlib import Path

import httpx2
import pytest

from tests.support.live_server import free_port
from tests.support.webhook_receiver import wait_for
from tests.test_cli_webhooks_listen import _lines, _until

ROOT = Path(__file__).resolve().parents[1]
README_PORT = "http://127.0.0.1:8000"
MAX_VENV_MB = 200
MAX_SECONDS = 240

pytestmark = pytest.mark.skipif(bool(os.environ.get("SWITCHBOARD_TEST_DATABASE_URL")),
                                reason="the newcomer's setup is the embedded one; run once, not per storage")


def _tour_blocks(readme: str) -> list[str]:
    section = readme.split("## A 15-minute tour", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)```", section, flags=re.S)


def test_the_tour_is_under_the_readmes_first_heading_and_the_readme_is_short():
    readme = (ROOT / "README.md").read_text()
    assert readme.index("## A 15-minute tour") == readme.index("\n## ") + 1
    assert len(readme.splitlines()) < 250
    for doc in ("api-guide", "sandbox", "operations", "platforms", "architecture", "benchmarks"):
        assert f"](docs/{doc}.md)" in readme and (ROOT / "docs" / f"{doc}.md").exists()


def _size_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink()) / 1e6


# A clone, an install and the whole tour: past the suite's usual two minutes on a busy machine. Each
# step has its own bound (the install and the tour's shell 300 s each, the service's start MAX_SECONDS).
@pytest.mark.timeout(900)
def test_make_serve_then_the_tour_run_as_written_from_a_fresh_clone(tmp_path):
    clone = tmp_path / "switchboard"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    blocks = _tour_blocks((clone / "README.md").read_text())
    first, keep, *steps = blocks
    assert first.strip() == "make serve" and keep.startswith("export KEY=")
    listen = next(b for b in steps if "webhooks listen" in b)
    assistant = next(b for b in steps if "claude mcp add" in b)
    shell_steps = [b for b in steps if b not in (listen, assistant)]

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    # A newcomer's shell: none of the suite's settings, and bytecode where Python puts it by default
    # (the suite keeps its own elsewhere, tests/conftest.py), so the venv's size is the one they get.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SWITCHBOARD_", "VIRTUAL_ENV", "PYTHONPYCACHEPREFIX"))}
    started = time.monotonic()
    log = (tmp_path / "serve.log").open("w")
    serve = subprocess.Popen(["make", "serve", f"ARGS=--port {port}"], cwd=clone, env=env, stdout=log,
                             stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_for(lambda: re.search(r"API key:\s+(sk_\w+)", (tmp_path / "serve.log").read_text()), timeout=300)
        key = re.search(r"API key:\s+(sk_\w+)", (tmp_path / "serve.log").read_text())[1]
        wait_for(lambda: _healthy(url), timeout=60)
        elapsed = time.monotonic() - started
        assert elapsed < MAX_SECONDS
        printed = (tmp_path / "serve.log").read_text()
        assert f"Data dir:   {clone / 'data'}" in printed
        assert httpx2.get(f"{url}/docs").status_code == 200
        _check_the_install_is_small(clone / ".venv")
        print(f"fresh clone: healthy after {elapsed:.0f} s, venv {_size_mb(clone / '.venv'):.0f} MB")
        tour_env = {**env, "KEY": key, "SB": url}
        # The second terminal: every command of the tour, in order, in one shell.
        script = "set -euo pipefail\n" + "\n".join(shell_steps).replace(README_PORT, url)
        ran = subprocess.run(["bash", "-c", script], cwd=clone, env=tour_env, capture_output=True, text=True,
                             timeout=300)
        assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
        _check_what_the_tour_did(url, key, clone)

        # The third terminal, and the curl it prints.
        listener = subprocess.Popen(["bash", "-c", listen.strip()], cwd=clone, env=tour_env, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            lines = _lines(listener)
            _until(lines, r"^Ready: ", timeout=60)
            command = _until(lines, r"Send a test event: curl").split("Send a test event: ", 1)[1]
            sent = subprocess.run([*shlex.split(command), "-s"], capture_output=True, text=True, timeout=30)
            assert '"eventId"' in sent.stdout
            assert "signature verified" in _until(lines, r"webhook\.test")
        finally:
            os.killpg(listener.pid, signal.SIGINT)
            listener.wait(timeout=30)

        # The assistant's address is the service's MCP endpoint, asking for OAuth.
        named = re.search(r"http://127\.0\.0\.1:8000/mcp", assistant)
        assert named is not None
        refused = httpx2.post(named[0].replace(README_PORT, url), json={})
        assert refused.status_code == 401
        assert "resource_metadata" in refused.headers["www-authenticate"]
    finally:
        os.killpg(serve.pid, signal.SIGTERM)
        serve.wait(timeout=30)
        log.close()


def _check_the_install_is_small(venv: Path) -> None:
    assert _size_mb(venv) < MAX_VENV_MB
    installed = {p.name.split("-")[0].lower() for p in (venv / "lib").glob("python3*/site-packages/*.dist-info")}
    assert not installed & {"pytest", "playwright", "schemathesis", "stripe", "mypy", "ruff"}


def _healthy(url: str) -> bool:
    try:
        return httpx2.get(url + "/v1/health", timeout=2).status_code == 200
    except httpx2.TransportError:
        return False


def _check_what_the_tour_did(url: str, key: str, clone: Path) -> None:
    headers = {"Authorization": f"Bearer {key}"}
    accounts = json.loads((clone / "accounts.json").read_text())["accounts"]

    def sent(platform: str) -> list[dict]:
        answer = httpx2.get(f"{url}/sandbox/{platform}/sent", params={"accountId": accounts[platform]})
        return list(answer.json()["data"])

    # 3. the reply, with its button; 5. the broadcast reached the one contact.
    telegram = wait_for(lambda: len(rows := sent("telegram")) == 2 and rows, timeout=30)
    assert telegram[0]["text"] == "We do! Orders ship in 2 days."
    assert telegram[0]["payload"]["reply_markup"]["inline_keyboard"][0][0]["url"] == "https://shop.example.com"
    assert telegram[1]["text"] == "Our Lisbon shop opens Saturday!"
    # 4. one post, live on three platforms.
    posts = httpx2.get(f"{url}/v1/posts", headers=headers).json()["data"]
    assert len(posts) == 1
    live = wait_for(lambda: (p := httpx2.get(f"{url}/v1/posts/{posts[0]['id']}", headers=headers).json())
                    ["status"] == "published" and p, timeout=30)
    assert sorted(t["platform"] for t in live["targets"]) == ["facebook", "linkedin", "x"]
    # 6. the automation answered the comment privately and publicly.
    replies = wait_for(lambda: len(rows := sent("instagram")) == 2 and rows, timeout=30)
    assert sorted(r["kind"] for r in replies) == ["private_reply", "public_reply"]
