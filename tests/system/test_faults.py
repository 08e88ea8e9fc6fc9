"""The service against its dependencies failing (`bench/faults.py --quick`, one fault a test): a
PostgreSQL restart, a Redis restart, an 8-second Redis stall, a platform failing (500s, then no
answer), a full disk under SQLite. In each: no 500 a caller sees, the API takes writes again by
itself, and once the work settles nothing is lost and nothing reached the platform twice.

Slow (minutes each, their own PostgreSQL cluster and Redis server): `pytest -m slow tests/system`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]
needs_root = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("redis-server") is None
                                or shutil.which("pg_createcluster") is None,
                                reason="makes its own PostgreSQL cluster and Redis server, and mounts a tmpfs")


def _faults(only: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "faults.py"), "--quick", "--only", only, "--json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=1700)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _held(phase: dict[str, Any]) -> None:
    assert phase["recovered_seconds"] is not None  # writes were taken again, by themselves
    assert not any(" 500" in refusal for refusal in phase["refused"]), phase["refused"]
    for kind in ("messages", "broadcast_recipients", "posts"):
        assert phase[kind]["lost"] == 0, (kind, phase[kind])
        assert phase[kind]["sent_twice"] == 0, (kind, phase[kind])


@needs_root
def test_a_postgresql_restart_loses_nothing_sends_nothing_twice_and_answers_503_not_500():
    report = _faults("postgres")["scale_out"]
    _held(report["postgres"])
    assert report["settled_seconds"] is not None


@needs_root
@pytest.mark.parametrize("fault", ["redis", "stall"])
def test_a_redis_restart_or_stall_is_a_pause_never_unknown(fault):
    """No process stopped and no call was cut: nothing may be `unknown`."""
    report = _faults(fault)["scale_out"]
    _held(report[fault])
    assert report[fault]["refused"] == {}
    assert report[fault]["messages"]["unknown"] == 0, report[fault]["messages"]["unknown_why"]
    assert report[fault]["broadcast_recipients"]["statuses"].get("unknown", 0) == 0
    assert report["settled_seconds"] is not None


@needs_root
def test_a_platform_outage_backs_off_and_drains_after_it():
    report = _faults("platform")["scale_out"]
    _held(report["platform"])
    assert report["platform"]["messages"]["statuses"].get("failed", 0) == 0  # the platform came back
    assert report["settled_seconds"] is not None


@needs_root
def test_a_full_disk_refuses_writes_cleanly_and_the_service_recovers_when_space_returns():
    report = _faults("disk")["disk"]
    assert report["recovered_seconds"] is not None
    assert set(report["refused"]) <= {"reply 503", "post 503"}, report["refused"]
    assert report["messages"]["lost"] == 0 and report["messages"]["sent_twice"] == 0
    assert report["messages"]["stored_though_refused"] == 0
    assert report["posts"]["stored_though_refused"] == 0
