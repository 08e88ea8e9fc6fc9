"""The container image: `make image` builds it (from Debian's packages, no registry), and inside it
`switchboard serve` on the embedded setup answers /v1/health, as the service's non-root user.

Slow (minutes: a Debian system and the service's dependencies are installed), so it runs only when
asked: `pytest -m slow tests/operations/test_image.py`."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import uuid
from pathlib import Path

import httpx2
import pytest

from tests.support.live_server import free_port
from tests.support.processes import wait_healthy

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ("mmdebstrap", "podman", "buildah", "make")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(1800),
    pytest.mark.skipif(any(shutil.which(tool) is None for tool in TOOLS), reason="needs " + ", ".join(TOOLS)),
]


def _buildah(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CONTAINERS_CONF": str(ROOT / "build/image/containers.conf")}
    return subprocess.run(["buildah", *args], env=env, capture_output=True, text=True, timeout=120, check=True)


def test_the_image_serves_the_embedded_setup():
    image = f"localhost/switchboard:test-{uuid.uuid4().hex[:8]}"
    built = subprocess.run(["make", "image", f"IMAGE={image}"], cwd=ROOT, capture_output=True, text=True,
                           timeout=1500)
    assert built.returncode == 0, built.stderr[-3000:]
    container = _buildah("from", image).stdout.strip()
    port = free_port()
    env = {**os.environ, "CONTAINERS_CONF": str(ROOT / "build/image/containers.conf")}
    process = subprocess.Popen(
        ["buildah", "run", "--isolation", "chroot", container, "switchboard", "serve", "--port", str(port)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_healthy(f"http://127.0.0.1:{port}", process, timeout=120)
        health = httpx2.get(f"http://127.0.0.1:{port}/v1/health")
        ready = httpx2.get(f"http://127.0.0.1:{port}/v1/health/ready")
        inspected = json.loads(_buildah("inspect", "--type", "image", image).stdout)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
        _buildah("rm", container)
        _buildah("rmi", image)
    assert health.status_code == 200
    assert health.json()["database"] == "ok"
    assert ready.json() == {"status": "ready", "database": "ok", "queue": "ok"}
    assert inspected["Docker"]["config"]["User"] == "switchboard"  # not root
    assert "/data" in inspected["OCIv1"]["config"]["Volumes"]
    assert "/v1/health" in " ".join(inspected["Docker"]["config"]["Healthcheck"]["Test"])
