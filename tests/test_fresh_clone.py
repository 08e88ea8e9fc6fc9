"""The README's first command, as a newcomer runs it: a fresh clone, `make serve`, a healthy service.

It installs only what running the service needs (a small venv, quickly), and every path it uses
is inside the clone, whatever the working directory of later commands."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import httpx2
import pytest

from tests.support.live_server import free_port

ROOT = Path(__file__).resolve().parents[1]
MAX_VENV_MB = 200
MAX_SECONDS = 240

pytestmark = pytest.mark.skipif(bool(os.environ.get("SWITCHBOARD_TEST_DATABASE_URL")),
                                reason="the newcomer's setup is the embedded one; run once, not per storage")


def _size_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink()) / 1e6


def test_make_serve_in_a_fresh_clone_is_small_quick_and_healthy(tmp_path):
    clone = tmp_path / "switchboard"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SWITCHBOARD_", "VIRTUAL_ENV"))}
    started = time.monotonic()
    log = (tmp_path / "serve.log").open("w")
    process = subprocess.Popen(["make", "serve", f"ARGS=--port {port}"], cwd=clone, env=env, stdout=log,
                               stderr=subprocess.STDOUT, start_new_session=True)
    try:
        healthy = None
        while time.monotonic() - started < MAX_SECONDS and process.poll() is None:
            try:
                healthy = httpx2.get(f"http://127.0.0.1:{port}/v1/health", timeout=2)
                break
            except httpx2.TransportError:
                time.sleep(0.5)
        elapsed = time.monotonic() - started
        assert healthy is not None and healthy.status_code == 200, (tmp_path / "serve.log").read_text()[-2000:]
        assert elapsed < MAX_SECONDS
        printed = (tmp_path / "serve.log").read_text()
        assert f"Data dir:   {clone / 'data'}" in printed
        assert "API key:    sk_" in printed
        assert httpx2.get(f"http://127.0.0.1:{port}/docs").status_code == 200
    finally:
        os.killpg(process.pid, 15)
        process.wait(timeout=30)
        log.close()
    venv = clone / ".venv"
    assert _size_mb(venv) < MAX_VENV_MB
    installed = {p.name.split("-")[0].lower() for p in (venv / "lib").glob("python3*/site-packages/*.dist-info")}
    assert not installed & {"pytest", "playwright", "schemathesis", "stripe", "mypy", "ruff"}
    print(f"fresh clone: healthy after {elapsed:.0f} s, venv {_size_mb(venv):.0f} MB")
